// `hearth doctor`: what is configured, what is installed and what answers, one line each,
// from the same configuration the server reads.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.ts';
import { messageOf } from '../failure.ts';
import { pythonInstallation } from '../jail/interpreters.ts';
import { probeJail } from '../jail/jail.ts';
import { configuredTarget } from '../llm/backend-status.ts';
import { probeBackend } from '../llm/backends.ts';
import { migrationNames } from '../store/migrations/index.ts';
import { version } from '../version.ts';
import { withDatabase } from './backup.ts';
import { migrationsOf } from './backup-manifest.ts';
import { instanceRunning } from './instance-lock.ts';
import { migrationBackups } from './migration-backup.ts';

/** `ok`: fine; `problem`: needs the person; `note`: not set up, or worth knowing. */
export type FindingState = 'ok' | 'problem' | 'note';

export interface Finding {
  state: FindingState;
  label: string;
  detail: string;
}

export interface DoctorReport {
  sections: { title: string; findings: Finding[] }[];
  problems: number;
}

export interface DoctorOptions {
  /** The `.env` the configuration was read from, when one was. */
  envFile: string | undefined;
  /** Where programs are looked for (its PATH). */
  environment?: NodeJS.ProcessEnv;
  /** How long each service may take to answer. */
  timeoutMs?: number;
}

const minimumNode = [20, 12] as const;

export async function runDoctor(config: Config, options: DoctorOptions): Promise<DoctorReport> {
  const environment = options.environment ?? process.env;
  const timeoutMs = options.timeoutMs ?? 5000;
  const [configured, installed, reachable] = await Promise.all([
    configuredFindings(config, options.envFile),
    installedFindings(config, environment),
    reachableFindings(config, timeoutMs),
  ]);
  const sections = [
    { title: 'Configured', findings: configured },
    { title: 'Installed', findings: installed },
    { title: 'Reachable', findings: reachable },
  ];
  return { sections, problems: sections.flatMap((section) => section.findings).filter((finding) => finding.state === 'problem').length };
}

const marks: Record<FindingState, string> = { ok: '✓', problem: '✗', note: '·' };

export function formatDoctorReport(report: DoctorReport): string {
  const width = Math.max(...report.sections.flatMap((section) => section.findings.map((finding) => finding.label.length)));
  const lines = [`Hearth ${version}`];
  for (const section of report.sections) {
    lines.push(section.title);
    for (const finding of section.findings) lines.push(`  ${marks[finding.state]} ${finding.label.padEnd(width)}  ${finding.detail}`);
  }
  lines.push(report.problems === 0 ? 'No problems found.' : `${report.problems} problem${report.problems === 1 ? '' : 's'} found (✗).`);
  return `${lines.join('\n')}\n`;
}

async function configuredFindings(config: Config, envFile: string | undefined): Promise<Finding[]> {
  const findings: Finding[] = [
    { state: envFile ? 'ok' : 'note', label: 'settings', detail: envFile ? `${envFile}, beneath the environment` : 'no .env file: defaults and the environment' },
    { state: 'ok', label: 'DATA_DIR', detail: path.resolve(config.DATA_DIR) },
    databaseFinding(config),
  ];
  const access = config.AUTH_TOKEN ? 'AUTH_TOKEN set' : 'no AUTH_TOKEN: sign-in or loopback only';
  findings.push({ state: 'ok', label: 'listens on', detail: `${config.HOST}:${config.PORT} (${access})` });
  const running = instanceRunning(config.DATA_DIR);
  findings.push({ state: 'note', label: 'running', detail: running ? 'yes: a Hearth holds this DATA_DIR' : 'no Hearth runs on this DATA_DIR now' });
  const backupsFolder = path.join(path.resolve(config.DATA_DIR), 'backups');
  const backups = await migrationBackups(backupsFolder);
  findings.push({
    state: 'note',
    label: 'backups',
    detail: backups.length === 0 ? 'none taken before migrating yet' : `${backups.length} taken before migrating, the latest ${path.join(backupsFolder, backups.at(-1)!)}`,
  });
  return findings;
}

function databaseFinding(config: Config): Finding {
  const file = path.resolve(config.DB_PATH);
  if (!existsSync(file)) return { state: 'note', label: 'database', detail: `${file}: not created yet (the first start creates it)` };
  try {
    const ran = withDatabase(file, (database) => migrationsOf(database));
    const unknown = ran.filter((name) => !migrationNames.includes(name));
    if (unknown.length > 0) return { state: 'problem', label: 'database', detail: `${file}: from a newer Hearth (migration ${unknown.at(-1)}); this one cannot open it` };
    const pending = migrationNames.length - ran.length;
    return {
      state: 'ok',
      label: 'database',
      detail: pending === 0 ? `${file}: schema up to date` : `${file}: ${pending} migration${pending === 1 ? '' : 's'} to run at the next start (backed up first)`,
    };
  } catch (error) {
    return { state: 'problem', label: 'database', detail: `${file}: does not open (${messageOf(error)})` };
  }
}

async function installedFindings(config: Config, environment: NodeJS.ProcessEnv): Promise<Finding[]> {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  const nodeRecent = major > minimumNode[0] || (major === minimumNode[0] && minor >= minimumNode[1]);
  const findings: Finding[] = [
    {
      state: nodeRecent ? 'ok' : 'problem',
      label: 'node',
      detail: `${process.versions.node} at ${process.execPath}${nodeRecent ? '' : ` (Hearth needs ${minimumNode.join('.')} or newer)`}`,
    },
  ];
  const [jail, python] = await Promise.all([probeJail(environment), pythonInstallation('python3')]);
  if (config.JAIL === 'off') findings.push({ state: 'problem', label: 'jail', detail: 'JAIL=off: the agent\'s commands run unconfined (docs/security.md)' });
  else if (jail.status.state === 'on') {
    findings.push({ state: 'ok', label: 'bubblewrap', detail: `${jail.status.bubblewrap}, runs a jail here` });
    findings.push(
      jail.pastaInstalled
        ? { state: 'ok', label: 'pasta', detail: 'installed: jailed processes get their own network' }
        : { state: 'problem', label: 'pasta', detail: `${jail.status.networkProblem ?? 'missing'} (sudo apt install passt)` },
    );
  } else findings.push({ state: 'problem', label: 'bubblewrap', detail: `${jail.status.reason} (${jail.status.fix})` });
  findings.push(
    python
      ? { state: 'ok', label: 'python3', detail: `${python.executable} (code_exec)` }
      : { state: 'note', label: 'python3', detail: 'not found: code_exec will not run (sudo apt install python3)' },
  );
  return findings;
}

async function reachableFindings(config: Config, timeoutMs: number): Promise<Finding[]> {
  const [llm, homeAssistant, mqtt] = await Promise.all([llmFinding(config, timeoutMs), homeAssistantFinding(config, timeoutMs), mqttFinding(config, timeoutMs)]);
  const telegram: Finding = config.TELEGRAM_BOT_TOKEN
    ? { state: 'note', label: 'Telegram', detail: 'a bot token is set (checked by the server when it starts)' }
    : { state: 'note', label: 'Telegram', detail: 'not configured (TELEGRAM_BOT_TOKEN)' };
  return [llm, homeAssistant, mqtt, telegram];
}

async function llmFinding(config: Config, timeoutMs: number): Promise<Finding> {
  const target = configuredTarget(config);
  const result = await probeBackend(target, AbortSignal.timeout(timeoutMs));
  const where = `${target.backend} at ${target.url || '(no URL)'}, model ${target.model || '(none)'}`;
  if (result.reachable && result.model_available) return { state: 'ok', label: 'LLM', detail: where };
  return { state: 'problem', label: 'LLM', detail: `${where}: ${result.message ?? 'not reachable'}${result.fix ? ` ${result.fix}.` : ''}` };
}

async function homeAssistantFinding(config: Config, timeoutMs: number): Promise<Finding> {
  const label = 'Home Assistant';
  if (!config.HA_URL) return { state: 'note', label, detail: 'not configured (HA_URL)' };
  try {
    const response = await fetch(new URL('api/', config.HA_URL.endsWith('/') ? config.HA_URL : `${config.HA_URL}/`), {
      headers: { authorization: `Bearer ${config.HA_TOKEN}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel();
    if (response.ok) return { state: 'ok', label, detail: `${config.HA_URL}, token accepted` };
    if (response.status === 401 || response.status === 403) return { state: 'problem', label, detail: `${config.HA_URL} refused HA_TOKEN (HTTP ${response.status}): make a new long-lived token` };
    return { state: 'problem', label, detail: `${config.HA_URL} answered HTTP ${response.status}` };
  } catch (error) {
    return { state: 'problem', label, detail: `cannot reach ${config.HA_URL} (${unreachableReason(error)})` };
  }
}

async function mqttFinding(config: Config, timeoutMs: number): Promise<Finding> {
  const label = 'MQTT';
  if (!config.MQTT_URL) return { state: 'note', label, detail: 'not configured (MQTT_URL)' };
  const { connectAsync } = await import('mqtt');
  try {
    const client = await connectAsync(config.MQTT_URL, {
      ...(config.MQTT_USERNAME && { username: config.MQTT_USERNAME, password: config.MQTT_PASSWORD }),
      connectTimeout: timeoutMs,
      reconnectPeriod: 0,
    });
    await client.endAsync();
    return { state: 'ok', label, detail: `${config.MQTT_URL}, connected` };
  } catch (error) {
    return { state: 'problem', label, detail: `cannot connect to ${config.MQTT_URL} (${messageOf(error)})` };
  }
}

function unreachableReason(error: unknown): string {
  if (error instanceof DOMException && error.name === 'TimeoutError') return 'no answer in time';
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? messageOf(error);
}
