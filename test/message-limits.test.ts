import { afterEach, describe, expect, it } from 'vitest';
import { maxMessageBytes, messageLimits } from '../src/server/client-commands.ts';
import { startHearth, type Hearth } from './support/hearth-server.ts';

let hearth: Hearth | undefined;
afterEach(async () => {
  await hearth?.close();
  hearth = undefined;
});

const image = (bytes: number) => Buffer.alloc(bytes, 7).toString('base64');

describe('message size limits', () => {
  it('takes a message of up to 8 images of 10 MB, and names the limit that a larger one breaks', async () => {
    hearth = await startHearth();
    const sessionId = await hearth.createSession();
    const post = (body: unknown) => hearth!.request('POST', `/sessions/${sessionId}/messages`, body);

    hearth.llm.script({ content: 'Two big pictures.' });
    const accepted = await post({ content: 'Look', images: [image(messageLimits.imageBytes), `data:image/png;base64,${image(1024)}`] });
    expect(accepted).toMatchObject({ status: 200, body: { content: 'Two big pictures.' } });
    expect(hearth.llm.requests.at(-1)!.body.messages.at(-1).images).toHaveLength(2);

    const tooMany = await post({ content: 'Look', images: Array.from({ length: 9 }, () => image(16)) });
    expect(tooMany).toMatchObject({ status: 400, body: { error: { code: 'invalid_request', message: expect.stringMatching(/images/) } } });
    const tooLarge = await post({ content: 'Look', images: [image(messageLimits.imageBytes + 4096)] });
    expect(tooLarge).toMatchObject({ status: 400, body: { error: { message: expect.stringMatching(/"images.0" must NOT have more than/) } } });
    const tooLong = await post({ content: 'x'.repeat(messageLimits.characters + 1) });
    expect(tooLong).toMatchObject({ status: 400, body: { error: { message: expect.stringMatching(/content/) } } });
    // Nothing was stored for the refused ones, and the session takes the next message.
    hearth.llm.script({ content: 'Still here.' });
    expect((await post({ content: 'Hello?' })).body.content).toBe('Still here.');
    expect((await hearth.request('GET', `/sessions/${sessionId}`)).body.messages.map((message: any) => message.content)).toEqual([
      'Look',
      'Two big pictures.',
      'Hello?',
      'Still here.',
    ]);
  });

  it('refuses a body larger than any valid message before reading it whole, and other routes take 1 MB', async () => {
    hearth = await startHearth();
    const sessionId = await hearth.createSession();
    const huge = await fetch(`${hearth.baseUrl}/sessions/${sessionId}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(maxMessageBytes + 1) },
      body: 'x'.repeat(maxMessageBytes + 1),
    });
    expect(huge.status).toBe(413);
    expect((await huge.json()).error.code).toBe('payload_too_large');
    const patch = await hearth.request('PATCH', `/sessions/${sessionId}`, { title: 'x'.repeat(2 * 1024 * 1024) });
    expect(patch).toMatchObject({ status: 413, body: { error: { code: 'payload_too_large' } } });
    expect((await hearth.request('GET', '/health')).status).toBe(200);
  });

  it('closes a socket that sends a frame larger than any valid message (1009), and the session stays usable', async () => {
    hearth = await startHearth();
    const sessionId = await hearth.createSession();
    const socket = await hearth.connect(sessionId);
    socket.send('x'.repeat(maxMessageBytes + 1));
    expect(await socket.closed()).toBe(1009);
    const again = await hearth.connect(sessionId);
    hearth.llm.script({ content: 'Fine.' });
    again.send({ type: 'message', content: 'Hi' });
    expect((await again.next('stream_end')).content).toBe('Fine.');
    again.close();
  });
});
