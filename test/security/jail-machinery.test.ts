// The jail's own processes (the namespace holder and pasta, which live as long as a network
// namespace does) are Hearth's children and visible in a host jail's /proc: they must carry no
// secret of Hearth's environment, whatever environment the jail is given.
import { readdirSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { Jail, probeJail } from '../../src/jail/jail.ts';
import { inScratch } from '../support/jail.ts';

const quiet = { warn: () => undefined, info: () => undefined };
const probed = await probeJail();
let jail: Jail | undefined;

afterEach(() => {
  jail?.close();
  jail = undefined;
});

/** Every process whose environment this process can read and that holds `value`. */
function processesHolding(value: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').includes(value)) found.push(Number(entry));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found;
}

describe('the jail machinery', () => {
  it.skipIf(probed.status.state !== 'on' || !probed.pastaInstalled)('starts the namespace holder and pasta with PATH only, never with the secrets it was handed', async () => {
    const secret = `secret-${randomUUID()}`;
    const environment = { PATH: process.env.PATH ?? '/usr/bin:/bin', AUTH_TOKEN: secret, OPENAI_API_KEY: secret };
    jail = new Jail({ config: inScratch(parseConfig({})), logger: quiet, environment }, probed);
    const command = await jail.wrap('/bin/true', [], { kind: 'host', writable: [], cwd: '/' }, { PATH: environment.PATH });
    // The host jail's namespace exists now: its holder and pasta are running.
    expect(command.args).toContain('nsenter');
    const holderPid = Number(command.args[command.args.indexOf('-t') + 1]);
    expect(readFileSync(`/proc/${holderPid}/environ`, 'latin1')).toContain('PATH=');
    expect(processesHolding(secret)).toEqual([]);
    command.release();
  });
});
