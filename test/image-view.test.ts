import { createServer } from 'node:http';
import { mkdir, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.ts';
import { createImageViewTool } from '../src/tools/builtin/image-view.ts';
import { useHearth } from './support/hearth-server.ts';

const start = useHearth();

// A 1×1 transparent PNG.
const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

async function sessionWithImage(backend: 'ollama' | 'openai') {
  const hearth = await start({ backend });
  const sessionId = await hearth.createSession();
  const folder = path.join(hearth.config.SESSION_FILES_DIR, sessionId);
  await mkdir(folder, { recursive: true });
  await writeFile(path.join(folder, 'pixel.png'), png);
  await writeFile(path.join(folder, 'notes.txt'), 'not an image');
  return { hearth, sessionId };
}

for (const backend of ['ollama', 'openai'] as const) {
  describe(`image_view (${backend})`, () => {
    it('attaches the image to the next request in the backend’s own format, and only to the model’s context', async () => {
      const { hearth, sessionId } = await sessionWithImage(backend);
      hearth.llm.script({ toolCalls: [{ name: 'image_view', arguments: { path: 'pixel.png' } }] }, { content: 'A single pixel.' });
      const socket = await hearth.connect(sessionId);
      socket.send({ type: 'message', content: 'What is in pixel.png?' });
      await socket.next('stream_end');
      const result = socket.ofType('tool_call')[0]!;
      expect(result.success).toBe(true);
      expect(result.result).toMatch(/Loaded png image, .* from pixel\.png/);

      const last = hearth.llm.requests[1]!.body.messages.at(-1);
      if (backend === 'ollama') {
        expect(last).toMatchObject({ role: 'user', images: [png.toString('base64')] });
      } else {
        expect(last.role).toBe('user');
        expect(last.content).toContainEqual({ type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } });
      }
      const display = (await hearth.request('GET', `/sessions/${sessionId}`)).body.messages;
      expect(display.some((message: any) => message.images)).toBe(false);
      const context = (await hearth.request('GET', `/sessions/${sessionId}/context`)).body.messages;
      expect(context.filter((message: any) => message.images)).toHaveLength(1);
    });
  });
}

describe('image_view refusals and URLs', () => {
  it('refuses non-images and escapes, and loads an image from a URL', async () => {
    const { hearth, sessionId } = await sessionWithImage('ollama');
    const images = createServer((_request, response) => response.writeHead(200, { 'content-type': 'image/png' }).end(png));
    await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(images.address() as AddressInfo).port}/pixel.png`;
    try {
      hearth.llm.script(
        {
          toolCalls: [
            { name: 'image_view', arguments: { path: 'notes.txt' } },
            { name: 'image_view', arguments: { path: 'missing.png' } },
            { name: 'image_view', arguments: {} },
            { name: 'image_view', arguments: { url } },
          ],
        },
        { content: 'ok' },
      );
      const socket = await hearth.connect(sessionId);
      socket.send({ type: 'message', content: 'Look' });
      await socket.next('stream_end');
      const [text, missing, neither, fromUrl] = socket.ofType('tool_call');
      expect(text).toMatchObject({ success: false, result: expect.stringMatching(/not a png, jpeg, gif or webp/) });
      expect(missing).toMatchObject({ success: false, result: expect.stringMatching(/no file/) });
      expect(neither).toMatchObject({ success: false, result: 'Send exactly one of path or url.' });
      expect(fromUrl).toMatchObject({ success: true, result: expect.stringContaining(url) });
      expect(hearth.llm.requests[1]!.body.messages.at(-1).images).toEqual([png.toString('base64')]);
    } finally {
      images.close();
    }
  });
});

describe('image_view approval subject', () => {
  it('is the path or the URL', () => {
    const tool = createImageViewTool({ config: parseConfig({}) });
    expect(tool.subject?.({ path: 'receipt.jpg' })).toBe('receipt.jpg');
    expect(tool.subject?.({ url: 'https://example.org/chart.png' })).toBe('https://example.org/chart.png');
  });
});
