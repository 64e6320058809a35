import { spawnSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SessionService } from '../src/sessions/session-service.ts';
import { TelegramChannel, type TelegramChannelOptions } from '../src/channels/telegram/telegram-channel.ts';
import { installedProgram } from '../src/speech/installed-program.ts';
import { startHearth, type Hearth } from './support/hearth-server.ts';
import { household } from './support/people.ts';
import { PlayedPeople, playedPerson } from './support/played-people.ts';
import { PlayedSessions } from './support/played-telegram-sessions.ts';
import { PlayedSpeech } from './support/played-speech.ts';
import { recordingLogger } from './support/recording-logger.ts';
import { startTelegramBotApi, type TelegramBotApi } from './support/telegram-bot-api.ts';
import { telegramChannelFor } from './support/telegram-test-channel.ts';
import { encodedTone } from './support/tone.ts';
import { waitUntil } from './support/wait-until.ts';
import { startOpenAiAudioStandIn, type OpenAiAudioStandIn } from './support/openai-audio-stand-in.ts';
import { startWyomingStandIn, type WyomingStandIn } from './support/wyoming-stand-in.ts';

// Voice notes in Telegram: the channel against the Bot API stand-in, with sessions and speech played by the test.
// The whole app, with the speech stand-ins and espeak-ng, is further down.

const ada = 4_343_001;
const session = `session-${ada}`;

let api: TelegramBotApi;
let sessions: PlayedSessions;
let people: PlayedPeople;
let speech: PlayedSpeech;
const channels: TelegramChannel[] = [];

beforeEach(async () => {
  api = await startTelegramBotApi();
  sessions = new PlayedSessions();
  people = new PlayedPeople();
  speech = new PlayedSpeech({ listens: true, speaks: true });
});

afterEach(async () => {
  await Promise.all(channels.splice(0).map((channel) => channel.stop()));
  await api.close();
});

async function startChannel(overrides: Partial<TelegramChannelOptions> = {}) {
  const { logger, lines } = recordingLogger();
  const channel = new TelegramChannel({
    token: api.token,
    allowedUsers: String(ada),
    apiRoot: api.apiRoot,
    sessionsFor: () => sessions,
    editIntervalMs: 20,
    pollTimeoutSeconds: 5,
    ...overrides,
  });
  channels.push(channel);
  channel.start({ sessions: {} as SessionService, people, reportStatus: () => undefined, logger, speech });
  await waitUntil(() => channel.status.state === 'connected');
  return { channel, lines };
}

/** The run the chat's message started answers `content`, as the session service would tell it. */
function answer(content: string): void {
  sessions.emit(session, { type: 'stream_start' });
  sessions.emit(session, { type: 'stream_delta', delta: content });
  sessions.emit(session, { type: 'stream_end', content, length: content.length, context_tokens: 1, max_context_tokens: 2 });
}

const heard = (text: string) => ({ success: true as const, text, seconds: 2 });
const texts = () => api.botMessages(ada).map((message) => message.text);

describe('Telegram voice notes (played sessions and speech)', () => {
  it('a voice note is transcribed, shown back in reply to it, sent as the person\'s words, and answered in writing and in a voice note replying to it', async () => {
    await startChannel();
    speech.transcriptions.push(heard('What is on today?'));
    const note = api.sendVoice(ada, { bytes: Buffer.from('OggS the person speaking'), duration: 2 });
    const noteId = (note.message as { message_id: number }).message_id;
    await waitUntil(() => sessions.sent.length === 1);
    expect(speech.heard).toEqual([{ bytes: Buffer.from('OggS the person speaking'), mimeType: 'audio/ogg' }]);
    expect(sessions.sent[0]).toEqual({ sessionId: session, text: 'What is on today?', files: [] });
    const transcript = api.botMessages(ada)[0]!;
    expect(transcript).toMatchObject({ text: '🎤 What is on today?', replyTo: noteId });
    expect(transcript.entities).toEqual([{ type: 'italic', offset: 3, length: 17 }]);

    answer('Two **meetings**:\n\n- the dentist at 10\n- lunch with Bob\n\n```\nnot read out\n```');
    await waitUntil(() => api.botMessages(ada).some((message) => message.voice));
    const [, written, spoken] = api.botMessages(ada);
    expect(written!.text).toContain('Two meetings:');
    expect(spoken).toMatchObject({ replyTo: noteId, text: '' });
    expect(spoken!.voice!.bytes.toString()).toBe(`OggS OpusHead ${speech.said[0]!.text}`);
    expect(spoken!.voice!.duration).toBe(2);
    expect(speech.said).toEqual([{ text: 'Two meetings: the dentist at 10. lunch with Bob. The code is in the text.', options: { format: 'ogg_opus' } }]);
    // The voice note comes once the written answer is whole.
    const voiceCall = api.callsOf('sendVoice')[0]!;
    const lastEdit = api.callsOf('editMessageText').at(-1);
    if (lastEdit) expect(voiceCall.at).toBeGreaterThanOrEqual(lastEdit.answeredAt!);
    expect(api.callsOf('sendChatAction').some((call) => call.body.action === 'record_voice')).toBe(true);
  });

  it('an answer to a typed message, or to a run the person stopped, is not spoken', async () => {
    await startChannel();
    api.sendText(ada, 'Typed');
    await waitUntil(() => sessions.sent.length === 1);
    answer('Written only.');
    await waitUntil(() => texts().includes('Written only.'));
    speech.transcriptions.push(heard('Tell me a long story'));
    api.sendVoice(ada, { bytes: Buffer.from('OggS story') });
    await waitUntil(() => sessions.sent.length === 2);
    sessions.emit(session, { type: 'stream_start' });
    sessions.emit(session, { type: 'stream_delta', delta: 'Once upon' });
    sessions.emit(session, { type: 'stream_stopped', content: 'Once upon', length: 9, reason: 'user' });
    await waitUntil(() => texts().some((text) => text.includes('Stopped.')));
    // The next run, typed, is not the voice note's.
    api.sendText(ada, 'Typed again');
    await waitUntil(() => sessions.sent.length === 3);
    answer('Still written only.');
    await waitUntil(() => texts().includes('Still written only.'));
    expect(speech.said).toEqual([]);
    expect(api.callsOf('sendVoice')).toEqual([]);
  });

  it('an audio file is transcribed as a voice note is, its caption before the words', async () => {
    await startChannel();
    speech.transcriptions.push(heard('buy milk and eggs'));
    api.sendAudio(ada, { bytes: Buffer.from('ID3 memo'), fileName: 'memo.mp3', caption: 'From my recorder:' });
    await waitUntil(() => sessions.sent.length === 1);
    expect(speech.heard[0]!.mimeType).toBe('audio/mpeg');
    expect(sessions.sent[0]).toEqual({ sessionId: session, text: 'From my recorder:\n\nbuy milk and eggs', files: [] });
  });

  it('without speech to text the voice note is kept in the session\'s files, and the person is told how to turn listening on', async () => {
    speech.canTranscribe = false;
    await startChannel();
    const note = api.sendVoice(ada, { bytes: Buffer.from('OggS unheard') });
    await waitUntil(() => sessions.sent.length === 1);
    expect(sessions.sent[0]!.files).toEqual([{ kind: 'voice', name: expect.stringMatching(/^voice-\d+\.ogg$/), mimeType: 'audio/ogg', data: Buffer.from('OggS unheard') }]);
    expect(api.botMessages(ada)[0]).toMatchObject({ text: expect.stringMatching(/^I can't listen to voice notes yet: set STT_BACKEND .*docs\/integrations\.md/), replyTo: (note.message as { message_id: number }).message_id });
    expect(speech.heard).toEqual([]);
    answer('I see a voice note.');
    await waitUntil(() => texts().includes('I see a voice note.'));
    expect(api.callsOf('sendVoice')).toEqual([]);
  });

  it('without text to speech the answer to a voice note is written only', async () => {
    speech.canSynthesize = false;
    await startChannel();
    speech.transcriptions.push(heard('Hello'));
    api.sendVoice(ada, { bytes: Buffer.from('OggS hello') });
    await waitUntil(() => sessions.sent.length === 1);
    answer('Hi.');
    await waitUntil(() => texts().includes('Hi.'));
    // A later typed message's answer: had the voice note's mark stayed, it would be spoken.
    speech.canSynthesize = true;
    api.sendText(ada, 'Typed');
    await waitUntil(() => sessions.sent.length === 2);
    answer('Typed answer.');
    await waitUntil(() => texts().includes('Typed answer.'));
    expect(speech.said).toEqual([]);
    expect(api.callsOf('sendVoice')).toEqual([]);
  });

  it('a recording over VOICE_MAX_SECONDS or the size limit is refused before it is fetched; a failed transcription or no words is said; nothing is sent', async () => {
    await startChannel({ voiceLimits: { maxSeconds: 60, maxBytes: 2_048 } });
    api.sendVoice(ada, { bytes: Buffer.from('OggS long'), duration: 61 });
    await waitUntil(() => texts().length === 1);
    expect(texts()[0]).toBe('That recording is 1:01 long; Hearth listens to at most 1:00 (VOICE_MAX_SECONDS).');
    api.sendVoice(ada, { bytes: Buffer.from('OggS large'), fileSize: 2_049 });
    await waitUntil(() => texts().length === 2);
    expect(texts()[1]).toMatch(/^That recording is larger than the 2 KB Hearth takes/);
    expect(api.callsOf('getFile')).toEqual([]);

    speech.transcriptions.push({ success: false, code: 'speech_unreachable', message: 'Wyoming server at tcp://127.0.0.1:1 refused the connection: is wyoming-faster-whisper running?' });
    api.sendVoice(ada, { bytes: Buffer.from('OggS unreachable') });
    await waitUntil(() => texts().length === 3);
    expect(texts()[2]).toBe('I couldn\'t listen to that voice note: Wyoming server at tcp://127.0.0.1:1 refused the connection: is wyoming-faster-whisper running?');
    speech.transcriptions.push({ success: false, code: 'no_speech', message: 'nothing' }, heard('   '));
    api.sendVoice(ada, { bytes: Buffer.from('OggS silence') });
    api.sendVoice(ada, { bytes: Buffer.from('OggS blank') });
    await waitUntil(() => texts().length === 5);
    expect(texts().slice(3)).toEqual(['I heard no words in that voice note.', 'I heard no words in that voice note.']);
    expect(sessions.sent).toEqual([]);
  });

  it('a synthesis that fails is said in reply to the voice note; the written answer stands', async () => {
    await startChannel();
    speech.transcriptions.push(heard('Hello'));
    speech.syntheses.push({ success: false, code: 'speech_unreachable', message: 'The OpenAI-compatible speech server at http://127.0.0.1:1/v1 did not answer.' });
    const note = api.sendVoice(ada, { bytes: Buffer.from('OggS hello') });
    await waitUntil(() => sessions.sent.length === 1);
    answer('Hi there.');
    await waitUntil(() => texts().some((text) => text.startsWith('🔇')));
    expect(api.botMessages(ada).at(-1)).toMatchObject({
      text: '🔇 No spoken answer: The OpenAI-compatible speech server at http://127.0.0.1:1/v1 did not answer.',
      replyTo: (note.message as { message_id: number }).message_id,
    });
    expect(texts()).toContain('Hi there.');
  });

  it('a synthesis that throws (a bug) is logged, and the channel goes on', async () => {
    const { lines } = await startChannel();
    speech.synthesize = async () => {
      throw new Error('a bug in a backend');
    };
    speech.transcriptions.push(heard('Hello'));
    api.sendVoice(ada, { bytes: Buffer.from('OggS hello') });
    await waitUntil(() => sessions.sent.length === 1);
    answer('Hi there.');
    await waitUntil(() => lines.some((line) => line.includes('answer not spoken: a bug in a backend')));
    api.sendText(ada, 'Still there?');
    await waitUntil(() => sessions.sent.length === 2);
  });

  it('an unlinked account\'s voice note is refused as its text is: told how to link, nothing fetched, heard or sent', async () => {
    people.joins(playedPerson('Bob'));
    await startChannel();
    api.sendText(ada, 'hello');
    api.sendVoice(ada, { bytes: Buffer.from('OggS hello') });
    await waitUntil(() => texts().length === 2);
    expect(texts()[0]).toContain('This chat is not linked to anyone in this Hearth yet.');
    expect(texts()[1]).toBe(texts()[0]);
    expect(api.callsOf('getFile')).toEqual([]);
    expect(speech.heard).toEqual([]);
    expect(sessions.sent).toEqual([]);
  });
});

// The whole app: the real grammY client and Bot API stand-in, the Wyoming stand-in for speech to text,
// espeak-ng and ffmpeg for the spoken answer, the scripted LLM.
const voiceToolsRequired = process.env.HEARTH_REQUIRE_VOICE_TOOLS === '1';
const voiceToolsMissing = !installedProgram('espeak-ng') || !installedProgram('ffmpeg');

describe.skipIf(voiceToolsMissing && !voiceToolsRequired)('Telegram voice notes through the whole app', () => {
  const eve = 4_343_002;
  let hearth: Hearth | undefined;
  let wyoming: WyomingStandIn | undefined;
  let openAiAudio: OpenAiAudioStandIn | undefined;

  afterEach(async () => {
    await hearth?.close();
    await wyoming?.close();
    await openAiAudio?.close();
    hearth = wyoming = openAiAudio = undefined;
  });

  async function startApp(env: Record<string, string>) {
    const channel = telegramChannelFor(api, ada, { allowedUsers: `${ada},${eve}` });
    hearth = await startHearth({ channels: [channel], env });
    await waitUntil(() => channel.status.state === 'connected');
    return hearth;
  }

  /** The bytes decoded by ffmpeg to 16 kHz mono s16le, and their RMS amplitude (0 to 1). */
  function decoded(bytes: Buffer): { seconds: number; rms: number } {
    const result = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', 'pipe:0', '-f', 's16le', '-ac', '1', '-ar', '16000', 'pipe:1'], { input: bytes, maxBuffer: 64 * 1024 * 1024 });
    expect(result.status, result.stderr.toString()).toBe(0);
    const pcm = result.stdout;
    let sum = 0;
    for (let offset = 0; offset + 1 < pcm.length; offset += 2) sum += (pcm.readInt16LE(offset) / 32_768) ** 2;
    return { seconds: pcm.length / 2 / 16_000, rms: Math.sqrt(sum / Math.max(1, pcm.length / 2)) };
  }

  it('a voice note is transcribed by the Wyoming server, answered in writing and as an OGG/Opus voice note that speaks; an unlinked account\'s note is refused as its text is', async () => {
    wyoming = await startWyomingStandIn({ transcript: 'What is on today' });
    const server = await startApp({ STT_BACKEND: 'wyoming', STT_URL: wyoming.url, TTS_BACKEND: 'espeak-ng' });
    // A household of two, Ada's chat linked to the owner; Eve's is linked to no one.
    const { owner } = await household(server, ['adult']);
    const { body } = await owner.request('POST', '/me/telegram/link-code');
    api.sendText(ada, `/start ${body.code as string}`);
    await waitUntil(() => texts().some((text) => text.startsWith('Linked:')));

    server.llm.script({ content: 'Two meetings: the dentist at ten, then lunch with Bob.' });
    const note = api.sendVoice(ada, { bytes: encodedTone('opus', 1), duration: 1 });
    const noteId = (note.message as { message_id: number }).message_id;
    const spoken = await waitUntil(() => api.botMessages(ada).find((message) => message.voice), 20_000);
    expect(wyoming.transcriptions).toHaveLength(1);
    expect(wyoming.transcriptions[0]!.start).toMatchObject({ rate: 16_000, width: 2, channels: 1 });
    const sessionId = (await server.app.sessions.findByKey(`telegram:${ada}`))!.id;
    const { body: stored } = await owner.request('GET', `/sessions/${sessionId}`);
    expect(stored.messages.map((message: { role: string; content: string }) => [message.role, message.content])).toEqual([
      ['user', 'What is on today'],
      ['assistant', 'Two meetings: the dentist at ten, then lunch with Bob.'],
    ]);
    expect(texts()).toEqual(expect.arrayContaining(['🎤 What is on today', 'Two meetings: the dentist at ten, then lunch with Bob.']));
    expect(spoken.replyTo).toBe(noteId);
    const bytes = spoken.voice!.bytes;
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('OggS');
    expect(bytes.subarray(0, 200).includes('OpusHead')).toBe(true);
    const { seconds, rms } = decoded(bytes);
    // About 3 s for 9 words at espeak-ng's 175 words a minute.
    expect(seconds).toBeGreaterThan(1.5);
    expect(seconds).toBeLessThan(8);
    expect(rms).toBeGreaterThan(0.02);
    expect(spoken.voice!.duration).toBe(Math.max(1, Math.round(seconds)));

    api.sendText(eve, 'hello');
    api.sendVoice(eve, { bytes: encodedTone('opus', 1) });
    await waitUntil(() => api.botMessages(eve).length === 2);
    const refusals = api.botMessages(eve).map((message) => message.text);
    expect(refusals[0]).toContain('This chat is not linked to anyone in this Hearth yet.');
    expect(refusals[1]).toBe(refusals[0]);
    expect(wyoming.transcriptions).toHaveLength(1);
    expect(api.callsOf('getFile')).toHaveLength(1);
  });

  it('an audio file is transcribed by an OpenAI-compatible server; without text to speech the answer is written only', async () => {
    openAiAudio = await startOpenAiAudioStandIn({ transcript: 'Remind me to water the plants', apiKey: 'stt-key' });
    const server = await startApp({ STT_BACKEND: 'openai', STT_URL: openAiAudio.url, STT_API_KEY: 'stt-key', TTS_BACKEND: 'none' });
    server.llm.script({ content: 'I will remind you.' });
    api.sendAudio(ada, { bytes: encodedTone('mp3', 1), fileName: 'memo.mp3', caption: 'From my recorder:' });
    await waitUntil(() => texts().includes('I will remind you.'), 15_000);
    expect(openAiAudio.transcriptions).toHaveLength(1);
    expect(texts()[0]).toBe('🎤 Remind me to water the plants');
    expect(JSON.stringify(server.llm.requests.at(-1)!.body)).toContain('From my recorder:\\n\\nRemind me to water the plants');
    expect(api.callsOf('sendVoice')).toEqual([]);
    expect(JSON.stringify(api.calls)).not.toContain('stt-key');
  });

  it('without speech to text the bot says so in words, and the voice note is kept for the model as before', async () => {
    const server = await startApp({ STT_BACKEND: 'none', TTS_BACKEND: 'espeak-ng' });
    server.llm.script({ content: 'I see a voice note.' });
    api.sendVoice(ada, { bytes: encodedTone('opus', 1) });
    await waitUntil(() => texts().includes('I see a voice note.'), 15_000);
    expect(texts()[0]).toMatch(/^I can't listen to voice notes yet: set STT_BACKEND \(wyoming or openai\) and STT_URL .*docs\/integrations\.md/);
    expect(JSON.stringify(server.llm.requests.at(-1)!.body)).toContain('voice note');
    expect(api.callsOf('sendVoice')).toEqual([]);
  });
});
