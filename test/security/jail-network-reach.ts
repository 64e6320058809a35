// Issue 23, what a network grant reaches. A user tool granted `network` runs in a network
// namespace that pasta serves: pasta relays the jail's outbound connections through sockets of
// its own on the host, so the host's routes apply and the jail reaches what the host reaches
// on the network — but not the host's loopback (no gateway mapping, no port forwarded), where
// Hearth listens. The device it should reach stands for a LAN device (a NAS, Home Assistant on
// another box): an HTTP server at 10.200.0.2 in a network namespace of its own, joined to this
// machine by a veth pair (10.200.0.1 on this side). A private address on a link of the host,
// not the Internet, because that is what a person grants `network` for at home, and because it
// is the case that must not turn into a way back to the host. Hearth listens on every address
// (`::`), the widest it can, so each spelling of the machine is tried, the veth's own included.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lanDeviceUnavailable, startLanDevice, type LanDevice } from '../support/lan-device.ts';
import { hearthAddresses } from './jail-attack-programs.ts';
import { attackerProfile, callTools, expectNothingLeaked, startJailedHearth, waitForUserTools, type JailedHearth } from './jail-harness.ts';

/** A tool body that fetches each URL and tells, per URL, what answered or the error. */
const fetchEach = `
const found = {};
for (const url of JSON.parse(params.urls)) {
  try {
    const response = await fetch(url, { headers: { authorization: 'Bearer guessed' }, signal: AbortSignal.timeout(3000) });
    found[url] = 'answered ' + response.status + ' ' + (await response.text()).slice(0, 200);
  } catch (error) { found[url] = 'error ' + (error.cause?.code ?? error.name); }
}
return found;`;

const unavailable = lanDeviceUnavailable();

/** Registers this suite's hooks and tests where it is called (test/security/host-network.test.ts). */
export function jailNetworkReach(): void {
  let device: LanDevice;
  let hearth: JailedHearth;

  beforeAll(async () => {
    if (unavailable) return;
    device = await startLanDevice(0);
    hearth = await startJailedHearth({
      userTools: {
        granted_fetch: { properties: { urls: { type: 'string' } }, permissions: '{ network: true }', execute: fetchEach },
        // Declares network, as write_tool would show the person, who did not grant it.
        ungranted_fetch: { properties: { urls: { type: 'string' } }, permissions: '{ network: true }', execute: fetchEach },
      },
      toolFiles: { 'permissions.json': JSON.stringify({ granted_fetch: { permissions: ['network'] } }) },
      profiles: { attacker: attackerProfile(['granted_fetch', 'ungranted_fetch']) },
    });
    await waitForUserTools(hearth, ['granted_fetch', 'ungranted_fetch']);
  }, 120_000);

  afterAll(async () => {
    await hearth?.close();
    await device?.close();
  });

  async function fetchThrough(tool: string, urls: string[]): Promise<Record<string, string>> {
    const socket = await hearth.connect(await hearth.createSession('attacker'));
    const fromRequest = hearth.llm.requests.length;
    const [result] = await callTools(hearth, socket, [{ name: tool, arguments: { urls: JSON.stringify(urls) } }], { timeoutMs: 90_000 });
    socket.close();
    expect(result!.success, result!.result).toBe(true);
    expectNothingLeaked(hearth, [result!], fromRequest);
    return JSON.parse(result!.result) as Record<string, string>;
  }

  describe.skipIf(unavailable !== undefined)(`a user tool's network${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
    it('outside any jail, the device answers and every spelling of this machine, the veth side included, reaches Hearth', async () => {
      expect(await (await fetch(`http://${device.address}:${device.port}/outside`)).text()).toBe(device.answer);
      const spellings = hearthAddresses().filter((address) => address !== '0.0.0.0' && address !== '[::]');
      expect(spellings).toContain(device.hostAddress);
      for (const address of spellings) expect([200, 401], address).toContain((await fetch(`http://${address}:${hearth.port}/health`)).status);
    });

    it('granted network: fetches from the device on the LAN, and from no spelling of Hearth', async () => {
      const hearthUrls = [...new Set([...hearthAddresses(), device.hostAddress])].map((address) => `http://${address}:${hearth.port}/approvals?status=pending`);
      const deviceUrl = `http://${device.address}:${device.port}/granted`;
      const found = await fetchThrough('granted_fetch', [deviceUrl, ...hearthUrls]);
      expect(found[deviceUrl]).toBe(`answered 200 ${device.answer}`);
      expect(device.requests()).toContain('/granted');
      for (const url of hearthUrls) expect(found[url], url).toMatch(/^error/);
    }, 120_000);

    it('declared but not granted: reaches neither the device nor Hearth', async () => {
      const deviceUrl = `http://${device.address}:${device.port}/ungranted`;
      const hearthUrl = `http://127.0.0.1:${hearth.port}/health`;
      const found = await fetchThrough('ungranted_fetch', [deviceUrl, hearthUrl]);
      expect(found[deviceUrl]).toMatch(/^error/);
      expect(found[hearthUrl]).toMatch(/^error/);
      expect(device.requests()).not.toContain('/ungranted');
    }, 120_000);
  });
}
