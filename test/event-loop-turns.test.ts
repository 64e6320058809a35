import { once } from 'node:events';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { afterInputArrivedMeanwhile, eventLoopTurnNumber, ownEventLoopTurn } from '../src/event-loop-turns.ts';
import { guardedStream } from '../src/llm/guarded-stream.ts';
import type { LlmDeltaEvent } from '../src/llm/guarded-stream.ts';

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A connected loopback socket pair; what one writes the other reads. */
async function socketPair(): Promise<{ writer: net.Socket; reader: net.Socket }> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  const writer = net.connect(port, '127.0.0.1');
  const [reader] = (await once(server, 'connection')) as [net.Socket];
  await once(writer, 'connect');
  closers.push(() => {
    writer.destroy();
    reader.destroy();
    server.close();
  });
  return { writer, reader };
}

function busyFor(milliseconds: number): void {
  const until = performance.now() + milliseconds;
  while (performance.now() < until);
}

describe('ownEventLoopTurn', () => {
  it('resumes its waiters one per event-loop turn, in the order they came', async () => {
    const resumed: { index: number; turn: number }[] = [];
    await Promise.all(
      Array.from({ length: 20 }, async (_, index) => {
        await ownEventLoopTurn();
        resumed.push({ index, turn: eventLoopTurnNumber() });
      }),
    );
    expect(resumed.map((entry) => entry.index)).toEqual(Array.from({ length: 20 }, (_, index) => index));
    expect(new Set(resumed.map((entry) => entry.turn)).size).toBe(20);
  });

  it('lets a socket be read between two waiters, where promise callbacks alone would hold it until all had run', async () => {
    const { writer, reader } = await socketPair();
    const order: string[] = [];
    reader.on('data', () => order.push('socket'));
    writer.write('ping');
    const waiters = Array.from({ length: 40 }, async (_, index) => {
      await ownEventLoopTurn();
      busyFor(1);
      order.push(`waiter ${index}`);
    });
    await Promise.all(waiters);
    expect(order).toContain('socket');
    expect(order.indexOf('socket')).toBeLessThan(order.indexOf('waiter 39'));

    order.length = 0;
    writer.write('pong');
    const received = once(reader, 'data');
    await Promise.all(
      Array.from({ length: 40 }, async (_, index) => {
        await Promise.resolve();
        busyFor(1);
        order.push(`callback ${index}`);
      }),
    );
    await received;
    expect(order.at(-1)).toBe('socket');
  });
});

describe('afterInputArrivedMeanwhile', () => {
  it('settles after the loop has read what a socket received while a poll-phase callback held the thread', async () => {
    const { writer, reader } = await socketPair();
    const received: string[] = [];
    const afterYield = new Promise<string[]>((resolve) => {
      reader.once('data', async () => {
        // In the poll phase, busy while the second write arrives.
        writer.write('second');
        busyFor(30);
        await afterInputArrivedMeanwhile();
        resolve([...received]);
      });
    });
    reader.on('data', (data) => received.push(data.toString()));
    writer.write('first');
    expect(await afterYield).toEqual(['first', 'second']);
  });
});

describe('guardedStream fair share', () => {
  const neverAborted = new AbortController().signal;
  const describeFailure = () => ({ code: 'llm_error' as const, message: 'failed' });

  it('waits for the next event-loop turn after 10 ms of buffered deltas, so other work runs', async () => {
    async function* buffered(): AsyncGenerator<LlmDeltaEvent, undefined> {
      for (let index = 0; index < 60; index++) {
        busyFor(1);
        yield { type: 'text_delta', delta: 'x' };
      }
      return undefined;
    }
    let immediateRanAfter = -1;
    let read = 0;
    setImmediate(() => {
      immediateRanAfter = read;
    });
    for await (const event of guardedStream(neverAborted, buffered, describeFailure)) if (event.type === 'text_delta') read++;
    expect(read).toBe(60);
    expect(immediateRanAfter).toBeGreaterThan(0);
    expect(immediateRanAfter).toBeLessThan(20);
  });

  it('takes a delta that had to be waited for as a fresh share, so a slow stream is read on at once', async () => {
    const turns: { yielded?: number; askedAgain?: number } = {};
    async function* slow(): AsyncGenerator<LlmDeltaEvent, undefined> {
      yield { type: 'text_delta', delta: 'a' };
      await new Promise((resolve) => setTimeout(resolve, 15));
      turns.yielded = eventLoopTurnNumber();
      yield { type: 'text_delta', delta: 'b' };
      turns.askedAgain = eventLoopTurnNumber();
      yield { type: 'text_delta', delta: 'c' };
      return undefined;
    }
    const deltas: string[] = [];
    for await (const event of guardedStream(neverAborted, slow, describeFailure)) if (event.type === 'text_delta') deltas.push(event.delta);
    expect(deltas).toEqual(['a', 'b', 'c']);
    // More than 10 ms passed since the stream began, but all of it waiting: no turn is given up.
    expect(turns.askedAgain).toBe(turns.yielded);
  });
});
