// Issue 35: a stdio MCP server that needs the network at run time says so in its status, instead
// of a bare "did not answer initialize within 10 s": an npx package that was never fetched into
// Hearth's npm cache, and a jailed server without network that tries to reach one at start.
// Real connections, real npx and a real jail; no Hearth server.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../src/config.ts';
import { McpConnection, mcpProcessMarker } from '../src/tools/mcp/mcp-connection.ts';
import { mcpNpmCache } from '../src/tools/mcp/mcp-jail.ts';
import { preparedMarker } from '../src/tools/mcp/npx-preparation.ts';
import { jailFor } from './support/jail.ts';
import { serverConfig, type McpEntry } from './support/mcp-servers.ts';

let dataDir: string;
const connections: McpConnection[] = [];
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-npx-status-'));
});
afterEach(async () => {
  await Promise.all(connections.splice(0).map((connection) => connection.close()));
  await rm(dataDir, { recursive: true, force: true });
});

/** Starts a connection and resolves with its first failure message (its first that says `until`, when given). */
function failureOf(name: string, entry: McpEntry, options: { jailed?: boolean; initializeTimeoutMs?: number; until?: RegExp } = {}): Promise<string> {
  const connection = new McpConnection({
    config: serverConfig(name, entry, dataDir),
    processMarker: mcpProcessMarker(dataDir, name),
    npmCache: mcpNpmCache(dataDir),
    initializeTimeoutMs: options.initializeTimeoutMs ?? 10_000,
    backoff: options.until ? { firstMs: 100, longestMs: 100 } : { firstMs: 60_000, longestMs: 60_000 },
    ...(options.jailed && { jail: jailFor(parseConfig({ DATA_DIR: dataDir })) }),
  });
  connections.push(connection);
  return new Promise((resolve) => {
    connection.on('changed', () => {
      if (connection.state === 'failed' && (options.until?.test(connection.message!) ?? true)) resolve(connection.message!);
    });
    connection.start();
  });
}

describe('an MCP server that needs the network at run time', () => {
  it('an npx package missing from the cache: "npx could not reach the registry", at once', async () => {
    // Marked prepared, but the cache does not hold it (emptied by hand, say): npx runs offline and cannot fetch it.
    const registry = 'http://127.0.0.1:9/';
    const marker = preparedMarker(mcpNpmCache(dataDir), ['hearth-never-fetched'], registry);
    await mkdir(path.dirname(marker), { recursive: true });
    await writeFile(marker, '{}\n');
    const started = performance.now();
    const message = await failureOf('never', { command: 'npx', args: ['-y', 'hearth-never-fetched'], env: { npm_config_registry: registry } });
    expect(message).toMatch(/^npx could not reach the registry: the package is not prepared in Hearth's npm cache; the next attempt fetches it again; .*ENOTCACHED/);
    expect(performance.now() - started).toBeLessThan(8_000);
    // Forgotten: the next attempt prepares it again (and here fails to fetch it from a registry that is not there).
    expect(existsSync(marker)).toBe(false);
  }, 20_000);

  it('a package the registry does not have is not fetched again until its entry changes', async () => {
    const asked: string[] = [];
    const registry = http.createServer((request, response) => {
      asked.push(request.url ?? '');
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
    });
    await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(registry.address() as AddressInfo).port}/`;
      const message = await failureOf('typo', { command: 'npx', args: ['-y', 'hearth-no-such-package'], env: { npm_config_registry: url } }, { until: /404/ });
      expect(message).toMatch(/^npm could not fetch hearth-no-such-package into Hearth's npm cache from http:\/\/127\.0\.0\.1:\d+\/: 404 Not Found.*\. Correct the package's name in mcp\.json: saving it tries again$/);
      const heard = asked.length;
      expect(heard).toBeGreaterThan(0);
      // Only the timers are fake from here: a retry (100 ms apart in this connection) would run npm, which asks the registry again.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      expect(vi.getTimerCount()).toBe(0);
      await vi.advanceTimersByTimeAsync(10 * 60_000);
      vi.useRealTimers();
      expect(asked.length).toBe(heard);
      expect(connections.at(-1)!.state).toBe('failed');
    } finally {
      vi.useRealTimers();
      await new Promise((resolve) => registry.close(resolve));
    }
  }, 30_000);

  it('a jailed server without network that tries to reach one at start says its jail has none', async () => {
    const reachesOut = 'fetch("http://192.0.2.1/").catch((error) => console.error("fetch failed:", error.cause?.code ?? error.message)); process.stdin.resume();';
    // On a busy machine the jailed node may not have printed yet when the first 2 s run out; the next attempt waits 4 s.
    const message = await failureOf('online', { command: process.execPath, args: ['-e', reachesOut], jail: { paths: {} } }, { jailed: true, initializeTimeoutMs: 2_000, until: /it printed/ });
    expect(message).toMatch(/^did not answer initialize within [248] s; it printed: fetch failed: \w+\. Its jail has no network and it tried to reach one: .*"jail": \{"network": true\}/);
  }, 20_000);
});
