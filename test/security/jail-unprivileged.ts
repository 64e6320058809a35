// Issue 23, "the same tests pass when Hearth runs as an unprivileged user": CI runs as root,
// people do not, and as root much of what the jail hides is also simply readable, while as a
// user bubblewrap and pasta work through unprivileged user namespaces. So the key attacks run
// again with Hearth started as `hearth-test` (test/support/unprivileged-user.ts, created when
// the tests run as root; otherwise the current user): server_admin's host-jail reads, the
// code_exec JavaScript attack, and a granted user tool's network (the LAN device of
// jail-network-reach.ts, on a subnet of its own, when network namespaces can be made).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lanDeviceUnavailable, startLanDevice, type LanDevice } from '../support/lan-device.ts';
import { unprivilegedUser, type UnprivilegedUser } from '../support/unprivileged-user.ts';
import { findingsOf, hearthAddresses, javascriptAttack, type AttackTargets } from './jail-attack-programs.ts';
import { attackerProfile, callTools, expectHearthUnreached, expectNothingLeaked, hearthTargets, niceOf, startJailedHearth, storePrivateMessage, waitForUserTools, type JailedHearth } from './jail-harness.ts';

const privateMessage = 'the alarm code is 6020-K';
const noLanDevice = lanDeviceUnavailable();

/** Registers this suite's hooks and tests where it is called (test/security/host-network.test.ts). */
export function jailUnprivileged(): void {
  let user: UnprivilegedUser;
  let hearth: JailedHearth;
  let device: LanDevice | undefined;
  let outsideFolder: string;

  const fetchEach = `
  const found = {};
  for (const url of JSON.parse(params.urls)) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(3000) });
      found[url] = 'answered ' + response.status + ' ' + (await response.text()).slice(0, 200);
    } catch (error) { found[url] = 'error ' + (error.cause?.code ?? error.name); }
  }
  return found;`;

  beforeAll(async () => {
    user = await unprivilegedUser();
    if (!noLanDevice) device = await startLanDevice(1);
    outsideFolder = await mkdtemp(path.join(tmpdir(), 'hearth-unprivileged-outside-'));
    hearth = await startJailedHearth({
      user,
      userTools: { granted_fetch: { properties: { urls: { type: 'string' } }, permissions: '{ network: true }', execute: fetchEach } },
      toolFiles: { 'permissions.json': JSON.stringify({ granted_fetch: { permissions: ['network'] } }) },
      profiles: { attacker: attackerProfile(['code_exec', 'granted_fetch']) },
    });
    await waitForUserTools(hearth, ['granted_fetch']);
    await storePrivateMessage(hearth, privateMessage);
  }, 120_000);

  afterAll(async () => {
    await hearth?.close();
    await device?.close();
    if (outsideFolder) await rm(outsideFolder, { recursive: true, force: true });
  });

  describe('Hearth run by an unprivileged user', () => {
    it('runs as that user, with the jail on', async () => {
      const status = spawnSync('stat', ['-c', '%u', `/proc/${hearth.pid}`], { encoding: 'utf8' }).stdout.trim();
      expect(Number(status)).toBe(user.uid);
      expect((await hearth.request('GET', '/health')).body.jail).toMatchObject({ state: 'on' });
    });

    it("server_admin's host jail: the attacks of issue 23 find nothing of Hearth", async () => {
      const socket = await hearth.connect(await hearth.createSession('server_admin'));
      const fromRequest = hearth.llm.requests.length;
      const wal = path.join(hearth.dataDir, 'hearth.db-wal');
      const terminal = (command: string) => ({ name: 'terminal', arguments: { command } });
      const results = await callTools(hearth, socket, [
        terminal(`cat /proc/${hearth.pid}/environ`),
        terminal(`grep -a PERSON_EXPORTED_SECRET /proc/${hearth.parentPid}/environ`),
        terminal(`cat ${path.join(hearth.projectDir, '.env')}`),
        terminal(`grep -r -a 'alarm code' ${hearth.dataDir}`),
        terminal(`grep -a -s -o AUTH_TOKEN=[^[:cntrl:]]* /proc/[0-9]*/environ /proc/[0-9]*/task/[0-9]*/environ`),
        terminal(`grep -a -s 'alarm code' /proc/[0-9]*/root${wal} /proc/[0-9]*/cwd/.env`),
      ], { allowAsked: true });
      socket.close();
      expect(results).toHaveLength(6);
      for (const result of results) expect(result.success, result.result).toBe(false);
      expectNothingLeaked(hearth, results, fromRequest, [privateMessage]);
      // The commands could have found it: the WAL holds the message, the shell's environ the person's secret.
      expect(spawnSync('grep', ['-a', '-c', 'alarm code', wal], { encoding: 'utf8' }).stdout.trim()).not.toBe('0');
      expect(spawnSync('cat', [`/proc/${hearth.parentPid}/environ`], { encoding: 'utf8' }).stdout).toContain(hearth.secrets.parent.PERSON_EXPORTED_SECRET);
    }, 120_000);

    it('code_exec JavaScript reads nothing of Hearth, reaches no address of it, renices nothing, makes nothing outside', async () => {
      const socket = await hearth.connect(await hearth.createSession('attacker'));
      const escape = path.join(outsideFolder, `escape-${randomBytes(4).toString('hex')}`);
      const targets: AttackTargets = {
        ...hearthTargets(hearth),
        outside: [escape, path.join(hearth.dataDir, 'escape')],
        foreignSocket: path.join(outsideFolder, 'no-socket'),
        pendingSessionId: 'none',
      };
      const fromRequest = hearth.llm.requests.length;
      const niceBefore = [await niceOf(hearth.pid), await niceOf(hearth.parentPid)];
      const [result] = await callTools(hearth, socket, [{ name: 'code_exec', arguments: { language: 'javascript', code: javascriptAttack(targets), timeout_s: 90 } }], { timeoutMs: 120_000 });
      socket.close();
      expect(result!.success, result!.result).toBe(true);
      const findings = findingsOf(result!.result);
      expectNothingLeaked(hearth, [result!], fromRequest, [privateMessage]);
      await expectHearthUnreached(hearth, findings, targets, niceBefore);
      for (const place of targets.outside) for (const suffix of ['-js-file', '-js-socket']) expect(existsSync(place + suffix), place + suffix).toBe(false);
    }, 150_000);

    it.skipIf(noLanDevice !== undefined)(`a granted user tool fetches from the LAN device and from no spelling of Hearth${noLanDevice ? ` (skipped: ${noLanDevice})` : ''}`, async () => {
      const socket = await hearth.connect(await hearth.createSession('attacker'));
      const deviceUrl = `http://${device!.address}:${device!.port}/unprivileged`;
      const hearthUrls = [...new Set([...hearthAddresses(), device!.hostAddress])].map((address) => `http://${address}:${hearth.port}/health`);
      const fromRequest = hearth.llm.requests.length;
      const [result] = await callTools(hearth, socket, [{ name: 'granted_fetch', arguments: { urls: JSON.stringify([deviceUrl, ...hearthUrls]) } }], { timeoutMs: 90_000 });
      socket.close();
      expect(result!.success, result!.result).toBe(true);
      expectNothingLeaked(hearth, [result!], fromRequest, [privateMessage]);
      const found = JSON.parse(result!.result) as Record<string, string>;
      expect(found[deviceUrl]).toBe(`answered 200 ${device!.answer}`);
      for (const url of hearthUrls) expect(found[url], url).toMatch(/^error/);
    }, 120_000);
  });
}
