// The measured hole (issue 13): a user tool holding Buffers took the server from 139 MB to 3.3 GB of
// RSS, because a worker's resourceLimits cover only the JavaScript heap and Buffers live outside
// it. Now the tool's host is a process of its own whose whole RSS is watched: replayed here through
// the real server, with the server answering /health all along.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import type { Hearth } from '../support/hearth-server.ts';
import { waitUntil } from '../support/wait-until.ts';
import { callTool, sessionFolder, useToolsHearth } from './user-tools-harness.ts';

const capMb = 128;

/**
 * Holds a 32 MB Buffer (under the cap with the host's own ~50 MB) and says so in `holding`, waits for
 * the file `go`, then allocates 64 MB Buffers (filled, so their pages are resident) without end. It
 * stops at 2 GB and reports surviving, so a cap that does not hold fails the test without eating the machine.
 */
const hog = {
  prelude: `import { existsSync, writeFileSync } from 'node:fs';
const held: Buffer[] = [];
(globalThis as { hostId?: string }).hostId ??= crypto.randomUUID();`,
  execute: `  held.push(Buffer.alloc(32 * 1024 * 1024, 1));
  writeFileSync('holding', String((globalThis as { hostId?: string }).hostId));
  while (!existsSync('go')) await new Promise((resolve) => setTimeout(resolve, 5));
  while (held.length < 32) held.push(Buffer.alloc(64 * 1024 * 1024, 1));
  return 'survived holding ' + held.length * 64 + ' MB';`,
};
// Inside a jail every host is PID 1 of its own namespace: a host is told apart by an id made when it first loads a tool.
const ping = {
  prelude: '(globalThis as { hostId?: string }).hostId ??= crypto.randomUUID();',
  execute: '  return `pong from ${(globalThis as { hostId?: string }).hostId}`;',
};

const startTools = useToolsHearth();

async function timeHealth(started: Hearth): Promise<number> {
  const begin = performance.now();
  const { status } = await started.request('GET', '/health');
  expect(status).toBe(200);
  return performance.now() - begin;
}


describe('the user-tool RSS cap', () => {
  it(`ends a tool that hoards Buffers past USER_TOOL_MAX_RSS_MB=${capMb} with a clear failure, /health answering throughout; the next call works`, async () => {
    const hearth = await startTools({ userTools: { hog, ping }, env: { USER_TOOL_MAX_RSS_MB: String(capMb) } });
    const sessionId = await hearth.createSession('attacker');
    const socket = await hearth.connect(sessionId);
    const before = await callTool(hearth, socket, 'ping');
    expect(before).toMatchObject({ success: true, result: expect.stringMatching(/^pong from [\w-]{36}$/) });
    const serverRssBefore = process.memoryUsage().rss;

    hearth.llm.script({ toolCalls: [{ name: 'hog', arguments: {} }] }, { content: 'Done.' });
    socket.send({ type: 'message', content: 'Hoard memory.' });
    const holding = path.join(sessionFolder(hearth, sessionId), 'holding');
    // The file appears before its text does: wait for the text.
    const hogHost = await waitUntil(async () => (await readFile(holding, 'utf8').catch(() => '')) || undefined, 10_000);
    expect(before.result).toBe(`pong from ${hogHost}`);

    // While the hog holds its memory…
    const whileHolding: number[] = [];
    for (let request = 0; request < 5; request++) whileHolding.push(await timeHealth(hearth));
    // …and while it allocates without end (a few requests, one after another, as long as it runs).
    let finished = false;
    const whileGrowing: number[] = [];
    const prober = (async () => {
      while (!finished && whileGrowing.length < 5) whileGrowing.push(await timeHealth(hearth!));
    })();
    await writeFile(path.join(sessionFolder(hearth, sessionId), 'go'), 'go');
    const ended = await socket.next('tool_call', 30_000);
    finished = true;
    await prober;

    expect(ended).toMatchObject({ tool: 'hog', success: false });
    expect(ended.result).toBe(`Error: hog used more than ${capMb} MB of memory (USER_TOOL_MAX_RSS_MB) and was ended with its host.`);
    // A hoard inside the server process stalled it for seconds. The 100 ms budget itself is a speed
    // figure, measured on a quiet machine; on a loaded test machine the bound here is looser.
    expect(Math.max(...whileHolding)).toBeLessThan(500);
    expect(whileGrowing.length).toBeGreaterThan(0);
    expect(Math.max(...whileGrowing)).toBeLessThan(500);
    // The hoard was never the server's: its own RSS barely moved (a worker thread's Buffers would have added hundreds of MB).
    expect(process.memoryUsage().rss - serverRssBefore).toBeLessThan(100 * 1024 * 1024);
    await socket.next('stream_end');

    const after = await callTool(hearth, socket, 'ping');
    // A new host answers: the one that hoarded was ended.
    expect(after).toMatchObject({ success: true, result: expect.stringMatching(/^pong from [\w-]{36}$/) });
    expect(after.result).not.toBe(`pong from ${hogHost}`);
  }, 60_000);
});
