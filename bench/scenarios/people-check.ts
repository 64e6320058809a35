// Scenario 24: the check every request makes in a household, in this process: identify() (the
// real onRequest hook of src/server/identify.ts) reads the sign-in cookie, finds the sign-in in a
// real SQLite file, takes its person from the household, and the route's rights rule
// (mayUseProfile) answers; 24b the same for a personal API token as a Bearer header.
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Accounts } from '../../src/household/accounts.ts';
import { Household } from '../../src/household/household.ts';
import { defaultProfileAccess, mayUseProfile } from '../../src/people/rights.ts';
import { identify, signInCookie } from '../../src/server/identify.ts';
import { openDatabase } from '../../src/store/database.ts';
import { systemClock } from '../../src/time/clock.ts';
import type { ScenarioResult } from '../report.ts';
import { median, percentile } from '../statistics.ts';
import { makeTemporaryDirectory, removeTemporaryDirectory } from '../temporary-directories.ts';

const checks = 20_000;
const warmUp = 2_000;
const budgetMs = 0.1;
const silent = { warn: () => undefined, info: () => undefined };

export async function peopleCheckTimes(): Promise<ScenarioResult> {
  const directory = await makeTemporaryDirectory('hearth-bench-people-');
  const db = await openDatabase(path.join(directory, 'hearth.db'));
  try {
    const household = new Household(db);
    const accounts = new Accounts({ db, household, clock: systemClock, logger: silent as never });
    // A household of five, as the matrix test has four; each check is the adult's.
    for (const [name, role] of [['Alex', 'adult'], ['Kim', 'child'], ['Pat', 'guest'], ['Sam', 'adult']] as const) {
      const added = await accounts.people.add({ name, role, passphrase: `passphrase of ${name}` });
      if (!added.ok) throw new Error(added.message);
    }
    const alex = (await household.people()).find((person) => person.name === 'Alex')!;
    const secret = await accounts.signIns.start(alex.id, '192.0.2.1');
    const { token } = await accounts.tokens.create(alex.id, 'bench');
    const hook = identify({ authToken: '', household, credentials: accounts.credentials() });
    const cookieTimes = await time(hook, { cookie: `theme=dark; ${signInCookie}=${secret}` });
    const tokenTimes = await time(hook, { authorization: `Bearer ${token}` });
    return {
      rows: [row('24. Per-request check: sign-in cookie → person → rights', cookieTimes), row('24b. Per-request check: personal API token → person → rights', tokenTimes)],
      details: [
        `24. Per-request check: the real identify() hook on a request carrying the sign-in cookie (a SHA-256 of it looked up in sign_ins in a real SQLite file, WAL), the person from the household's cache, then mayUseProfile for the default profile access; 24b the same with a personal API token as "Authorization: Bearer". ${checks.toLocaleString('en-US')} checks each, ${warmUp.toLocaleString('en-US')} warm-up checks discarded, a household of five.`,
      ],
    };
  } finally {
    await db.destroy();
    await removeTemporaryDirectory(directory);
  }
}

async function time(hook: ReturnType<typeof identify>, headers: Record<string, string>): Promise<number[]> {
  const reply = { code: () => reply, send: () => reply } as unknown as FastifyReply;
  const times: number[] = [];
  for (let index = 0; index < warmUp + checks; index++) {
    const request = { headers, socket: { remoteAddress: '192.0.2.1' }, query: {} } as unknown as FastifyRequest;
    const began = performance.now();
    await hook(request, reply);
    if (!request.caller || !mayUseProfile(request.caller.person, defaultProfileAccess)) throw new Error('the check refused the bench person');
    const took = performance.now() - began;
    if (index >= warmUp) times.push(took);
  }
  return times;
}

function row(scenario: string, times: number[]) {
  const medianMs = median(times);
  return {
    scenario,
    measured: `median ${medianMs.toFixed(4)} ms, p95 ${percentile(times, 0.95).toFixed(4)} ms, p99 ${percentile(times, 0.99).toFixed(4)} ms`,
    target: `median < ${budgetMs} ms`,
    passed: medianMs < budgetMs,
  };
}
