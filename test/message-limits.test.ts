import { describe, expect, it } from 'vitest';
import { maxMessageBytes, messageLimits } from '../src/server/client-commands.ts';
import { useHearth } from './support/hearth-server.ts';

const start = useHearth();

const image = (bytes: number) => Buffer.alloc(bytes, 7).toString('base64');

describe('images of stored messages', () => {
  it('are kept as files, served by URL, sent to the model on later turns, and removed with their session', async () => {
    const hearth = await start();
    const sessionId = await hearth.createSession();
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 1)]).toString('base64');
    hearth.llm.script({ content: 'A picture.' }, { content: 'Still the picture.' });
    await hearth.request('POST', `/sessions/${sessionId}/messages`, { content: 'Look', images: [`data:image/png;base64,${png}`] });
    await hearth.request('POST', `/sessions/${sessionId}/messages`, { content: 'And again?' });
    // The model gets the image with its message on every later turn.
    expect(hearth.llm.requests[1]!.body.messages[1]).toMatchObject({ role: 'user', content: 'Look', images: [png] });

    const [user] = (await hearth.request('GET', `/sessions/${sessionId}`)).body.messages;
    const url = user.images[0] as string;
    expect(url).toMatch(new RegExp(`^/sessions/${sessionId}/images/[0-9a-f]{24}\\.png$`));
    const served = await fetch(hearth.baseUrl + url);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await served.arrayBuffer()).toString('base64')).toBe(png);
    // The database row holds a reference, not the bytes.
    const { default: Database } = await import('better-sqlite3');
    const database = new Database(hearth.config.DB_PATH, { readonly: true });
    const details = database.prepare("SELECT details FROM messages WHERE session_id = ? AND role = 'user'").pluck().all(sessionId) as string[];
    database.close();
    expect(details.join('')).not.toContain(png.slice(0, 40));

    expect((await fetch(`${hearth.baseUrl}/sessions/${sessionId}/images/..%2F..%2Fhearth.db`)).status).toBe(404);
    expect((await fetch(`${hearth.baseUrl}/sessions/${sessionId}/images/000000000000000000000000.png`)).status).toBe(404);
    await hearth.request('DELETE', `/sessions/${sessionId}`);
    expect((await fetch(hearth.baseUrl + url)).status).toBe(404);
    const { readdir } = await import('node:fs/promises');
    expect(await readdir(`${hearth.dataDir}/images`)).toEqual([]);
  });
});

describe('message size limits', () => {
  it('takes a message of up to 8 images of 10 MB, and names the limit that a larger one breaks', async () => {
    const hearth = await start();
    const sessionId = await hearth.createSession();
    const post = (body: unknown) => hearth!.request('POST', `/sessions/${sessionId}/messages`, body);

    hearth.llm.script({ content: 'Two big pictures.' });
    const big = image(messageLimits.imageBytes);
    const accepted = await post({ content: 'Look', images: [big, `data:image/png;base64,${image(1024)}`] });
    expect(accepted).toMatchObject({ status: 200, body: { content: 'Two big pictures.' } });
    expect(hearth.llm.requests.at(-1)!.body.messages.at(-1).images).toEqual([big, image(1024)]);

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
    const hearth = await start();
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

  it('takes a large image frame over the socket, acting on frames in the order they came', async () => {
    const hearth = await start();
    const sessionId = await hearth.createSession();
    const socket = await hearth.connect(sessionId);
    const big = image(4 * 1024 * 1024);
    // Whether or not the stop lands before the model is asked, each turn is answered by what it says.
    hearth.llm.respondWith((request) =>
      request.body.messages.at(-1).content === 'Look' ? { content: 'A long look at it.', chunkCount: 50, delayMs: 20 } : { content: 'Seen.' },
    );
    // The message is parsed off the event loop, the stop in place: had the stop been acted on
    // first it would have found nothing to stop, and the answer would have ended normally.
    socket.send({ type: 'message', content: 'Look', images: [big] });
    socket.send({ type: 'stop' });
    expect(await socket.next('stream_stopped')).toMatchObject({ reason: 'user' });
    const [user] = (await hearth.request('GET', `/sessions/${sessionId}`)).body.messages;
    expect(user).toMatchObject({ role: 'user', content: 'Look', images: [expect.stringMatching(/\/images\//)] });
    const served = await fetch(hearth.baseUrl + user.images[0]);
    expect(Buffer.from(await served.arrayBuffer()).toString('base64')).toBe(big);

    socket.send({ type: 'message', content: 'And now?' });
    expect((await socket.next('stream_end')).content).toBe('Seen.');
    expect(hearth.llm.requests.at(-1)!.body.messages.find((message: any) => message.content === 'Look')).toMatchObject({ images: [big] });
    socket.close();
  });

  it('closes a socket that sends a frame larger than any valid message (1009), and the session stays usable', async () => {
    const hearth = await start();
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
