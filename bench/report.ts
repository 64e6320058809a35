import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import { projectRoot } from './project-root.ts';

export interface ReportRow {
  scenario: string;
  measured: string;
  target: string;
  /** undefined: reported only, no target. */
  passed: boolean | undefined;
}

export interface ScenarioResult {
  rows: ReportRow[];
  /** Extra lines for the details section of RESULTS.md. */
  details: string[];
}

function verdict(passed: boolean | undefined): string {
  if (passed === undefined) return '—';
  return passed ? 'pass' : '**FAIL**';
}

export function table(rows: readonly ReportRow[]): string {
  const lines = ['| scenario | measured | target | pass/fail |', '|---|---|---|---|'];
  for (const row of rows) lines.push(`| ${row.scenario} | ${row.measured} | ${row.target} | ${verdict(row.passed)} |`);
  return lines.join('\n');
}

/** Other work on the machine skews every number here, so the report says how busy it was. */
export function loadAverage(): string {
  return os.loadavg().map((load) => load.toFixed(2)).join(' / ');
}

function codeVersion(): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: projectRoot, encoding: 'utf8' }).trim();
    const changed = git('status', '--porcelain', '--', 'src', 'profiles') !== '';
    return `commit ${git('rev-parse', '--short', 'HEAD')}${changed ? ' plus uncommitted changes in src/ or profiles/' : ''}`;
  } catch {
    return 'unknown (no git)';
  }
}

export function machineDescription(): string {
  const cpus = os.cpus();
  return [
    `- Date: ${new Date().toISOString()}`,
    `- Cores (os.cpus().length): ${cpus.length}`,
    `- CPU: ${cpus[0]?.model.trim() ?? 'unknown'}`,
    `- Node: ${process.version} on ${os.platform()} ${os.release()}`,
    `- Code: ${codeVersion()}`,
    `- Load average (1 / 5 / 15 min) at start: ${loadAverage()}`,
  ].join('\n');
}

export async function writeResults(
  file: string,
  machine: string,
  rows: readonly ReportRow[],
  method: string,
  details: readonly string[],
): Promise<void> {
  const text = [
    '# Hearth benchmark results',
    '',
    'Written by `npm run bench` (bench/run.ts); budgets from docs/architecture.md (Budgets).',
    '',
    machine,
    '',
    table(rows),
    '',
    '## Method',
    '',
    method,
    '',
    '## Details',
    '',
    ...details.map((line) => `- ${line}`),
    '',
  ].join('\n');
  await writeFile(file, text);
}
