// Issue 23, code_exec: a JavaScript and a Python program (asked in no profile's approvals here:
// the attacker profile allows everything, so only the jail stands in the way) try every attack
// of the issue against a real server: read the environment of the processes above them, `.env`
// and the database; reach Hearth's API on every spelling of the machine to decide another
// session's pending approval; renice Hearth; make a FIFO, socket or file outside their folder;
// connect to a Unix socket outside it.
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventSocket } from '../support/event-socket.ts';
import { findingsOf, hearthAddresses, javascriptAttack, pythonAttack, type AttackTargets } from './jail-attack-programs.ts';
import {
  attackerProfile,
  callTools,
  expectHearthUnreached,
  expectNothingLeaked,
  hearthTargets,
  listenOnForeignSocket,
  niceOf,
  startJailedHearth,
  storePrivateMessage,
  type ForeignSocket,
  type JailedHearth,
} from './jail-harness.ts';

const privateMessage = 'the alarm code is 8812-Z';
const pythonInstalled = spawnSync('python3', ['--version']).status === 0;

let hearth: JailedHearth;
let socket: EventSocket;
let pendingSocket: EventSocket;
let pendingSessionId: string;
let marker: string;
let foreign: ForeignSocket | undefined;
let targets: AttackTargets;

beforeAll(async () => {
  hearth = await startJailedHearth({ profiles: { attacker: attackerProfile(['code_exec']) } });
  await storePrivateMessage(hearth, privateMessage);

  // Another session's call waits for the person: server_admin asks before any terminal command outside its allow rules.
  pendingSessionId = await hearth.createSession('server_admin');
  pendingSocket = await hearth.connect(pendingSessionId);
  marker = path.join(hearth.sessionFilesDir, pendingSessionId, 'approved-by-the-jail');
  // Its answer after the decision is scripted when the person decides, so the attacker's turns take the steps scripted for them.
  hearth.llm.script({ toolCalls: [{ name: 'terminal', arguments: { command: 'touch approved-by-the-jail' } }] });
  pendingSocket.send({ type: 'message', content: 'Make the file.' });
  await pendingSocket.next('approval_required', 30_000);

  foreign = await listenOnForeignSocket();

  const escape = `hearth-jail-escape-${randomBytes(4).toString('hex')}`;
  targets = {
    ...hearthTargets(hearth),
    outside: [path.join(tmpdir(), escape), path.join(hearth.dataDir, escape), path.join(hearth.projectDir, escape), path.join(hearth.sessionFilesDir, pendingSessionId, escape), path.join(foreign.folder, escape)],
    foreignSocket: foreign.socket,
    pendingSessionId,
  };
  socket = await hearth.connect(await hearth.createSession('attacker'));
}, 120_000);

afterAll(async () => {
  socket?.close();
  pendingSocket?.close();
  await hearth?.close();
  await foreign?.close();
});

describe('code_exec in its strict jail', () => {
  it('outside the jail, every spelling of the machine reaches Hearth (so the attacks below could succeed)', async () => {
    for (const address of hearthAddresses().filter((address) => address !== '0.0.0.0' && address !== '[::]')) {
      const response = await fetch(`http://${address}:${hearth.port}/health`);
      expect([200, 401], address).toContain(response.status);
    }
  });

  const languages = [
    { language: 'javascript', program: () => javascriptAttack(targets), skip: false },
    { language: 'python', program: () => pythonAttack(targets), skip: !pythonInstalled },
  ] as const;

  for (const { language, program, skip } of languages) {
    it.skipIf(skip)(`${language}: reads nothing of Hearth, reaches no address of it, renices nothing, makes nothing outside`, async () => {
      const fromRequest = hearth.llm.requests.length;
      const niceBefore = [await niceOf(hearth.pid), await niceOf(hearth.parentPid)];
      const [result] = await callTools(hearth, socket, [{ name: 'code_exec', arguments: { language, code: program(), timeout_s: 120 } }], { timeoutMs: 150_000 });
      expect(result!.success, result!.result).toBe(true);
      const findings = findingsOf(result!.result);

      expectNothingLeaked(hearth, [result!], fromRequest, [privateMessage]);
      await expectHearthUnreached(hearth, findings, targets, niceBefore);
      expect(findings.sockets[targets.foreignSocket]).toMatch(/^error/);
      expect(foreign!.connections()).toBe(0);
      for (const place of targets.outside) {
        for (const suffix of ['-js-file', '-js-socket', '-py-fifo', '-py-socket', '-py-file']) expect(existsSync(place + suffix), place + suffix).toBe(false);
      }

      // The other session's call still waits, and its side effect has not happened.
      const pending = await hearth.request('GET', `/approvals?status=pending&session_id=${pendingSessionId}`);
      expect(pending.body.approvals).toHaveLength(1);
      expect(existsSync(marker)).toBe(false);
    }, 180_000);
  }

  it('the pending approval, denied by the person at last, never ran', async () => {
    const { call_id: callId } = pendingSocket.ofType('approval_required')[0]!;
    hearth.llm.script({ content: 'Left it.' });
    expect((await hearth.request('POST', `/sessions/${pendingSessionId}/approvals/${callId}`, { decision: 'deny' })).status).toBe(200);
    await pendingSocket.next('stream_end', 30_000);
    expect(existsSync(marker)).toBe(false);
  });
});
