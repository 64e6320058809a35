import { afterEach, describe, expect, it, vi } from 'vitest';
import { JsonParser } from '../src/server/json-parser.ts';

const parser = new JsonParser();
afterEach(async () => {
  await parser.close();
});

const encoded = (value: string) => new TextEncoder().encode(value);

describe('JsonParser', () => {
  it('parses small JSON in place and large JSON in a worker thread, so the event loop does no parsing', async () => {
    const parseOnThisThread = vi.spyOn(JSON, 'parse');
    try {
      expect(parser.parse(encoded('{"content":"Hi"}'))).toEqual({ ok: true, value: { content: 'Hi' } });
      expect(parseOnThisThread).toHaveBeenCalledTimes(1);

      const image = Buffer.alloc(10 * 1024 * 1024, 7).toString('base64');
      const bytes = encoded(JSON.stringify({ content: 'Look "here" é', images: [image] }));
      const pending = parser.parse(bytes);
      expect(pending).toBeInstanceOf(Promise);
      // Handed to the worker: the bytes moved to the other thread rather than being copied or read here.
      expect(bytes.byteLength).toBe(0);
      expect(await pending).toEqual({ ok: true, value: { content: 'Look "here" é', images: [image] } });
      expect(parseOnThisThread).toHaveBeenCalledTimes(1);
    } finally {
      parseOnThisThread.mockRestore();
    }
  });

  it('refuses invalid JSON and prototype poisoning at either size', async () => {
    const padding = 'x'.repeat(300 * 1024);
    for (const text of ['{"content":', `{"content":"${padding}"`]) {
      expect(await parser.parse(encoded(text))).toMatchObject({ ok: false, message: expect.any(String) });
    }
    for (const text of ['{"__proto__":{"admin":true}}', `{"pad":"${padding}","__proto__":{"admin":true}}`, `{"constructor":{"prototype":{"admin":true}},"pad":"${padding}"}`]) {
      expect(await parser.parse(encoded(text))).toEqual({ ok: false, message: expect.stringMatching(/forbidden prototype property/i) });
    }
  });

  it('takes bytes that are a view into a larger buffer without detaching it, and answers several in order', async () => {
    const whole = Buffer.from(`....${JSON.stringify({ n: 1, pad: 'y'.repeat(300 * 1024) })}....`);
    const view = whole.subarray(4, whole.length - 4);
    const results = await Promise.all([parser.parse(view), parser.parse(encoded(JSON.stringify({ n: 2, pad: 'z'.repeat(300 * 1024) })))]);
    expect(results.map((result) => result.ok && (result.value as { n: number }).n)).toEqual([1, 2]);
    expect(whole.subarray(0, 4).toString()).toBe('....');
  });
});
