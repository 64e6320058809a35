// Issue 23, user tools: a tool installed in TOOLS_DIR before start, granted `network` in
// permissions.json (the strongest grant a tool can hold), runs the same attacks as code_exec
// from `execute`: it reads nothing of Hearth, reaches Hearth on no spelling of the machine,
// renices nothing, makes nothing outside its folder and reaches no Unix socket outside it.
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findingsOf, hearthAddresses, javascriptAttack, type AttackTargets } from './jail-attack-programs.ts';
import {
  attackerProfile,
  callTools,
  expectHearthUnreached,
  expectNothingLeaked,
  hearthTargets,
  listenOnForeignSocket,
  niceOf,
  startJailedHearth,
  waitForUserTools,
  type ForeignSocket,
  type JailedHearth,
} from './jail-harness.ts';

let hearth: JailedHearth;
let foreign: ForeignSocket | undefined;
let targets: AttackTargets;

beforeAll(async () => {
  foreign = await listenOnForeignSocket();
  const escape = `hearth-jail-escape-${randomBytes(4).toString('hex')}`;
  // The port is known only once Hearth runs; the tool reads its targets from its parameters.
  const placeholder: AttackTargets = { hearthPid: 0, parentPid: 0, port: 0, envFile: '', database: '', wal: '', outside: [], foreignSocket: foreign.socket, pendingSessionId: 'none' };
  const body = javascriptAttack(placeholder)
    .replace(/const targets = .*;\n/, `const targets = { ...JSON.parse(params.targets), addresses: ${JSON.stringify(hearthAddresses())} };\n`)
    .replace('console.log(JSON.stringify(found));', "return '\\n' + JSON.stringify(found) + '\\n';");
  hearth = await startJailedHearth({
    userTools: { attack_tool: { properties: { targets: { type: 'string' } }, permissions: '{ network: true }', execute: body } },
    toolFiles: { 'permissions.json': JSON.stringify({ attack_tool: { permissions: ['network'] } }) },
    profiles: { attacker: attackerProfile(['attack_tool']) },
  });
  await waitForUserTools(hearth, ['attack_tool']);
  targets = {
    ...placeholder,
    ...hearthTargets(hearth),
    outside: [path.join(tmpdir(), escape), path.join(hearth.dataDir, escape), path.join(hearth.projectDir, escape), path.join(foreign.folder, escape)],
  };
}, 120_000);

afterAll(async () => {
  await hearth?.close();
  await foreign?.close();
});

describe('a user tool granted network, in its strict jail', () => {
  it('reads nothing of Hearth, reaches no address of it, renices nothing, makes nothing outside', async () => {
    const socket = await hearth.connect(await hearth.createSession('attacker'));
    const fromRequest = hearth.llm.requests.length;
    const niceBefore = [await niceOf(hearth.pid), await niceOf(hearth.parentPid)];
    const [result] = await callTools(hearth, socket, [{ name: 'attack_tool', arguments: { targets: JSON.stringify(targets) } }], { timeoutMs: 120_000 });
    socket.close();
    expect(result!.success, result!.result).toBe(true);
    const findings = findingsOf(result!.result.replace(/\\n/g, '\n').replace(/\\"/g, '"'));
    expectNothingLeaked(hearth, [result!], fromRequest);
    await expectHearthUnreached(hearth, findings, targets, niceBefore);
    expect(findings.sockets[targets.foreignSocket]).toMatch(/^error/);
    expect(foreign!.connections()).toBe(0);
    for (const place of targets.outside) for (const suffix of ['-js-file', '-js-socket']) expect(existsSync(place + suffix), place + suffix).toBe(false);
  }, 150_000);
});
