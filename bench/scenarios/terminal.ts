// Scenario 7: the real terminal tool running `echo hello`, through /bin/sh -c (the default
// TERMINAL_ALLOWED_COMMANDS=*) and without a shell (TERMINAL_ALLOWED_COMMANDS=echo).
import path from 'node:path';
import { parseConfig } from '../../src/config.ts';
import { Jail, probeJail, writeTerminalInputFilter } from '../../src/jail/jail.ts';
import type { JailKind } from '../../src/jail/jail-spec.ts';
import { createTerminalTool } from '../../src/tools/builtin/terminal.ts';
import type { ToolResult } from '../../src/tools/tool.ts';
import type { ReportRow, ScenarioResult } from '../report.ts';
import { median } from '../statistics.ts';
import { makeTemporaryDirectory, removeTemporaryDirectory } from '../temporary-directories.ts';
import { medianAndP95, spread, timedCall, toolContext } from './tool-calls.ts';

const calls = 200;
const warmUpCalls = 1;
const budgetMs = 30;

function printsHello(result: ToolResult): string | undefined {
  return /^stdout:\nhello\n?$/m.test(result.output) ? undefined : 'expected stdout "hello"';
}

interface Variant {
  allowedCommands?: string;
  jail: 'off' | JailKind;
  /** The limits by rlimits alone, without the call's control group Hearth makes where it may. */
  rlimitsOnly?: boolean;
}

const quiet = { warn: () => undefined, info: () => undefined };

async function jailFor(config: ReturnType<typeof parseConfig>, variant: Variant, dataDir: string): Promise<Jail> {
  if (!variant.rlimitsOnly) return Jail.create({ config, logger: quiet });
  const filterFile = writeTerminalInputFilter(dataDir);
  return new Jail({ config, logger: quiet }, await probeJail(process.env, filterFile), filterFile === undefined ? {} : { filterFile });
}

async function measure(directory: string, variant: Variant, sessionId: string, signal: AbortSignal): Promise<number[]> {
  const dataDir = path.join(directory, 'data');
  const config = parseConfig({ SESSION_FILES_DIR: path.join(dataDir, 'session-files'), DATA_DIR: dataDir, TERMINAL_ALLOWED_COMMANDS: variant.allowedCommands, JAIL: variant.jail === 'off' ? 'off' : 'on' });
  const jail = await jailFor(config, variant, dataDir);
  const limits = jail.status.state === 'on' ? jail.status.limits.mechanism : 'none';
  mechanisms.set(sessionId, limits);
  const tool = createTerminalTool({ config, jail });
  const context = { ...toolContext(sessionId, signal), jailKinds: { terminal: variant.jail === 'host' ? ('host' as const) : ('strict' as const) } };
  const args = { command: 'echo hello' };
  for (let call = 0; call < warmUpCalls; call++) await timedCall(tool, args, context, printsHello);
  const samples: number[] = [];
  for (let call = 0; call < calls; call++) samples.push((await timedCall(tool, args, context, printsHello)).milliseconds);
  jail.close();
  return samples;
}

/** Which mechanism held each variant's limits, for the details line. */
const mechanisms = new Map<string, string>();

function row(scenario: string, samples: number[]): ReportRow {
  const value = median(samples);
  return { scenario, measured: `${medianAndP95(samples)}; ${calls} calls`, target: `median < ${budgetMs} ms`, passed: value < budgetMs };
}

export async function terminalEchoRoundTrips(): Promise<ScenarioResult> {
  const directory = await makeTemporaryDirectory('hearth-bench-terminal-');
  const abort = new AbortController();
  try {
    const shell = await measure(directory, { jail: 'strict' }, 'bench-terminal-shell', abort.signal);
    const direct = await measure(directory, { allowedCommands: 'echo', jail: 'strict' }, 'bench-terminal-direct', abort.signal);
    const host = await measure(directory, { jail: 'host' }, 'bench-terminal-host', abort.signal);
    const unjailed = await measure(directory, { jail: 'off' }, 'bench-terminal-unjailed', abort.signal);
    const rlimitsOnly = await measure(directory, { jail: 'strict', rlimitsOnly: true }, 'bench-terminal-rlimits', abort.signal);
    return {
      rows: [
        row('7a. `terminal` `echo hello`, shell (`TERMINAL_ALLOWED_COMMANDS=*`), strict jail', shell),
        row('7b. `terminal` `echo hello`, no shell (`TERMINAL_ALLOWED_COMMANDS=echo`), strict jail', direct),
        row('7c. `terminal` `echo hello`, shell, host jail (server_admin; network namespace shared, made once)', host),
        row('7d. `terminal` `echo hello`, shell, `JAIL=off` (for comparison)', unjailed),
        row('7e. `terminal` `echo hello`, shell, strict jail, limits by rlimits alone (no control group)', rlimitsOnly),
      ],
      details: [
        `terminal: the real tool (createTerminalTool, config from parseConfig with a temp SESSION_FILES_DIR) called in the ` +
          `bench process with {command: "echo hello"}, timed from execute() to its result and checked for stdout "hello"; ` +
          `${warmUpCalls} warm-up call then ${calls} measured calls per variant. With \`*\` it spawns \`/bin/sh -c 'echo hello'\`: ` +
          `${spread(shell)}; with \`echo\` it splits the line itself and spawns \`echo\` from PATH: ${spread(direct)}. ` +
          `In a strict jail each call runs bubblewrap (own user, PID, IPC, UTS, mount and network namespaces); in the host jail it ` +
          `first enters the shared pasta network namespace with nsenter: ${spread(host)}; unjailed: ${spread(unjailed)}. ` +
          `Every jailed call runs with its limits (issue 31): \`prlimit\` (processes, memory, file size, open files, CPU ` +
          `time) runs \`/bin/sh\`, which joins the call's control group and opens the seccomp filter for bubblewrap; its /tmp is ` +
          `a folder made and removed per call. Limits of 7a–7c by ${mechanisms.get('bench-terminal-shell')}; 7e without the control ` +
          `group (rlimits alone): ${spread(rlimitsOnly)}. Every row uses the ${budgetMs} ms budget of the echo round trip.`,
      ],
    };
  } finally {
    abort.abort();
    await removeTemporaryDirectory(directory);
  }
}
