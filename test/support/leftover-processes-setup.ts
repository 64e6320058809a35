// A vitest global setup whose teardown fails the run when a process the tests started is still
// running (issue 34: a jailed user-tool host, `bwrap` with parent 1, outlived `npm test`). It is
// listed first in vitest.config.ts's globalSetup, so its teardown runs after every other one (a
// shared browser closes first).
//
// Which processes are the run's: those that did not exist when the run began, and
//   - carry this run's HEARTH_TEST_RUN in their environment (everything started with the
//     tests' environment inherits it: workers, servers, browsers, mosquitto, caddy, sshd), or
//   - run under this vitest process, or
//   - have lost their parent (parent 1, or a subreaper) and carry a Hearth process marker
//     (HEARTH_PROCESS, which jailed tool processes keep whatever environment they were given)
//     or belong to the test user `hearth-test`.
// The person's own programs started meanwhile carry none of that; another test run's live tool
// processes still have their Hearth. Vitest's own workers and their esbuild services end after
// the teardowns, so they are left out.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';

const runVariable = 'HEARTH_TEST_RUN';
const settleMs = 10_000;

export interface ProcessFacts {
  pid: number;
  parentId: number;
  startTime: string;
  state: string;
  uid: number;
  command: string;
  environment: string;
}

function factsOf(pid: number): ProcessFacts | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    let environment = '';
    try {
      environment = readFileSync(`/proc/${pid}/environ`, 'utf8');
    } catch {
      // Another user's process, or one that made itself undumpable.
    }
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim() || `[${stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))}]`;
    return { pid, parentId: Number(fields[1]), startTime: fields[19]!, state: fields[0]!, uid: Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]), command, environment };
  } catch {
    return undefined;
  }
}

/** Every process /proc shows, with what identifies it. */
export function allProcesses(): ProcessFacts[] {
  const found: ProcessFacts[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const facts = factsOf(Number(entry));
    if (facts) found.push(facts);
  }
  return found;
}

function testUserId(): number | undefined {
  try {
    return Number(execFileSync('id', ['-u', 'hearth-test'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  } catch {
    return undefined;
  }
}

/** This process and the ones above it: npm, the shell, the terminal. */
function ancestors(processes: Map<number, ProcessFacts>): Set<number> {
  const lineage = new Set<number>();
  for (let pid = process.pid; pid > 1 && !lineage.has(pid); pid = processes.get(pid)?.parentId ?? 1) lineage.add(pid);
  return lineage;
}

function isUnder(pid: number, root: number, processes: Map<number, ProcessFacts>): boolean {
  const seen = new Set<number>();
  for (let current = processes.get(pid)?.parentId; current !== undefined && current > 1 && !seen.has(current); current = processes.get(current)?.parentId) {
    if (current === root) return true;
    seen.add(current);
  }
  return false;
}

const isVitestWorker = (facts: ProcessFacts) => facts.command.includes('/vitest/dist/workers/');
const isEsbuildService = (facts: ProcessFacts) => /\/esbuild\s.*--service=/.test(facts.command);

/** The run's processes still running (zombies are ended: init reaps them in its own time). */
export function leftovers(runId: string, before: Set<string>, testUser: number | undefined): ProcessFacts[] {
  const processes = new Map(allProcesses().map((facts) => [facts.pid, facts]));
  const excluded = ancestors(processes);
  const workers = [...processes.values()].filter(isVitestWorker).map((facts) => facts.pid);
  const left: ProcessFacts[] = [];
  for (const facts of processes.values()) {
    if (before.has(`${facts.pid}:${facts.startTime}`) || excluded.has(facts.pid) || facts.state === 'Z') continue;
    if (isVitestWorker(facts) || (isEsbuildService(facts) && (facts.parentId === process.pid || workers.includes(facts.parentId)))) continue;
    // Orphans go to init, or to the nearest subreaper: `systemd --user` on a desktop.
    const parent = processes.get(facts.parentId);
    const orphaned = facts.parentId <= 1 || parent === undefined || /(^|\/)systemd(\s|$)/.test(parent.command);
    const ours =
      facts.environment.includes(`${runVariable}=${runId}`) ||
      isUnder(facts.pid, process.pid, processes) ||
      (orphaned && (/(^|\0)HEARTH_PROCESS=/.test(facts.environment) || (testUser !== undefined && facts.uid === testUser)));
    if (ours) left.push(facts);
  }
  return left;
}

/**
 * Shared by every project of the run: each loads the global setups in a module graph of its own,
 * so the run's processes are counted once, at the last teardown.
 */
const shared = globalThis as typeof globalThis & { hearthLeftoverWatch?: { setups: number; before: Set<string> } };

export default function setup(): () => Promise<void> {
  // One id for the run; the workers, and what they start, inherit the variable.
  process.env[runVariable] ??= randomBytes(8).toString('hex');
  const runId = process.env[runVariable]!;
  const watch = (shared.hearthLeftoverWatch ??= { setups: 0, before: new Set(allProcesses().map((facts) => `${facts.pid}:${facts.startTime}`)) });
  const { before } = watch;
  watch.setups += 1;
  return async () => {
    watch.setups -= 1;
    if (watch.setups > 0) return;
    const testUser = testUserId();
    const deadline = Date.now() + settleMs;
    let left = leftovers(runId, before, testUser);
    // What the last tests ended may still be on its way out.
    while (left.length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      left = leftovers(runId, before, testUser);
    }
    if (left.length === 0) return;
    const lines = left.map((facts) => `  pid ${facts.pid}, parent ${facts.parentId}, uid ${facts.uid}: ${facts.command.slice(0, 200)}`);
    // Vitest reports an error thrown here but still exits with 0.
    process.exitCode = 1;
    throw new Error(`the tests left ${left.length} process${left.length === 1 ? '' : 'es'} running:\n${lines.join('\n')}`);
  };
}
