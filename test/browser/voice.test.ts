/// <reference lib="dom" />
// Voice in the page: the microphone (hold to talk, hands-free) with Chromium's fake microphone playing
// a WAV that espeak-ng speaks for this test, and answers read aloud while they stream. The fake
// microphone needs switches of its own, so this file launches browsers of its own: the headless shell,
// whose fake prompt allows the microphone to every context, for all but the refused microphone, which
// needs the full Chromium, whose contexts keep the permission apart (its pages cost more CPU).
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { expectNoViolations } from '../support/axe.ts';
import { actionTimeoutMs, browserTest, sel, sendMessage, showSession, skipBrowserTests, useBrowser, waitForApp, waitForEventsSocket, waitForIdle, type BrowserHarness } from '../support/browser.ts';
import { chromiumPath, fullChromiumPath } from '../support/chromium.ts';
import type { Hearth } from '../support/hearth-server.ts';
import { startOpenAiAudioStandIn, type OpenAiAudioStandIn } from '../support/openai-audio-stand-in.ts';
import { missingVoiceTools, voiceToolsRequired } from '../support/voice-tools.ts';

// espeak-ng speaks the WAV and the answers, ffmpeg reads the page's WebM for Hearth.
const skipVoice = skipBrowserTests || (missingVoiceTools.length > 0 && !voiceToolsRequired);

const spokenWords = 'What is the weather like';
const folder = await mkdtemp(path.join(tmpdir(), 'hearth-voice-page-'));
const spokenWav = path.join(folder, 'spoken.wav');

const voice = {
  mic: '#voice-mic',
  handsFree: '#voice-hands-free',
  speaker: '#voice-speaker',
  sendAtOnce: '#voice-send-at-once',
  status: '#voice-status',
  error: '#composer .composer-error',
} as const;

// Made before the browser starts (this hook runs before useBrowser's): Chromium's fake microphone plays it, once.
beforeAll(async () => {
  if (skipVoice) return;
  await promisify(execFile)('espeak-ng', ['-w', spokenWav, spokenWords]);
}, 30_000);
afterAll(() => rm(folder, { recursive: true, force: true }));

const fakeMicrophone = ['--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${spokenWav}%noloop`];

/** The page on a new session of `hearth`, in a context that may (or may not) use the microphone. */
async function openVoicePage(browser: BrowserHarness, hearth: Hearth, { microphone = true, viewport }: { microphone?: boolean; viewport?: { width: number; height: number } } = {}): Promise<{ page: Page; sessionId: string }> {
  const sessionId = await hearth.createSession();
  const page = await browser.openPage(hearth, { hash: sessionId, ...(microphone && { permissions: ['microphone'] }), ...(viewport && { viewport }) });
  await waitForApp(page);
  await waitForEventsSocket(page);
  await showSession(page, sessionId);
  return { page, sessionId };
}

/** An answer of `count` sentences, streamed a word a chunk. */
function sentencesOfAnswer(count: number): string[] {
  const sentences = ['It is sunny and mild this morning.', 'A light wind comes from the west.', 'Rain may arrive in the evening, so take a coat.', 'The night stays above freezing.', 'Tomorrow looks much the same.', 'The weekend should be drier.', 'Sunday may bring some sun again.', 'That is all for the weather.'];
  return sentences.slice(0, count).join(' ').split(/(?<= )/);
}

interface SpeechFigures {
  firstAudioAt: number;
  streamEndAt: number;
  speaking: boolean;
  speechQueue: number;
}

const speechFigures = (page: Page): Promise<SpeechFigures> =>
  page.evaluate(() => {
    const { firstAudioAt, streamEndAt, speaking, speechQueue } = (window as any).hearthMetrics;
    return { firstAudioAt, streamEndAt, speaking, speechQueue };
  });

/** Turns reading aloud on and waits until the toggle says so. */
async function turnSpeakerOn(page: Page): Promise<void> {
  await page.locator(`${voice.speaker}[aria-disabled="false"]`).click();
  await page.locator(`${voice.speaker}[aria-pressed="true"]`).waitFor();
}

const waitForSpeaking = (page: Page) => page.waitForFunction(() => (window as any).hearthMetrics.speaking === true);
/** Silence soon: sooner than the sentences still to read would take to play out (each of espeak-ng's lasts about 2 s). */
const waitForSilence = (page: Page, timeout = 3_000) =>
  page.waitForFunction(() => (window as any).hearthMetrics.speaking === false && (window as any).hearthMetrics.speechQueue === 0, undefined, { timeout });

/** An OpenAI audio server that hears `spokenWords` in whatever it is sent; closed after the test. */
async function speechToText(): Promise<OpenAiAudioStandIn> {
  const standIn = await startOpenAiAudioStandIn({ transcript: spokenWords });
  onTestFinished(() => standIn.close());
  return standIn;
}

/** Holds the microphone until the page has listened `seconds` (the fake microphone's WAV lasts 1.4 s), then lets go. */
async function holdToTalk(page: Page, seconds: number): Promise<void> {
  await page.locator(voice.mic).hover();
  await page.mouse.down();
  await page.locator(`${voice.status}[data-state="recording"][data-seconds="${seconds}"]`).waitFor();
  expect(await page.locator(voice.mic).getAttribute('aria-pressed')).toBe('true');
  await page.mouse.up();
}

const chatRequests = (hearth: Hearth) => hearth.llm.requests.filter((request) => request.path === '/api/chat');

/** How long a PCM WAV plays: its data after the 44-byte header, over its bytes per second (at offset 28). */
const wavSeconds = (wav: Buffer) => (wav.length - 44) / wav.readUInt32LE(28);

describe.skipIf(skipVoice)('voice in the page', () => {
  // The headless shell answers getUserMedia only with its fake prompt, which allows every context.
  const browser = useBrowser({ executablePath: chromiumPath, args: [...fakeMicrophone, '--use-fake-ui-for-media-stream'] });

  it('hold to talk: the words are sent as the message, and the answer is read aloud before it has streamed to its end', browserTest, async () => {
    const stt = await speechToText();
    const hearth = await browser.hearth({ env: { STT_BACKEND: 'openai', STT_URL: stt.url, TTS_BACKEND: 'espeak-ng' } });
    const { page } = await openVoicePage(browser, hearth);
    await turnSpeakerOn(page);
    hearth.llm.script({ chunks: sentencesOfAnswer(5), delayMs: 120 });

    const uploads: Array<string | undefined> = [];
    page.on('request', (request) => {
      if (request.url().includes('/audio?send=false')) uploads.push(request.headers()['content-type']);
    });
    await holdToTalk(page, 2);
    await page.locator(sel.user).filter({ hasText: spokenWords }).waitFor();
    await page.waitForFunction(() => (window as any).hearthMetrics.streamEndAt > 0);
    const { firstAudioAt, streamEndAt } = await speechFigures(page);
    expect(firstAudioAt).toBeGreaterThan(0);
    expect(firstAudioAt).toBeLessThan(streamEndAt);

    // The page sent its WebM/Opus recording as the raw body; the speech server got it as Hearth passes it on,
    // a WAV as long as the press (2 s and a little: more than the 1.4 s spoken).
    expect(uploads).toEqual(['audio/webm;codecs=opus']);
    expect(stt.transcriptions).toHaveLength(1);
    expect(wavSeconds(stt.transcriptions[0]!.bytes)).toBeGreaterThan(1.8);
    // The person's message is what the speech server heard, sent as typed words are.
    expect(chatRequests(hearth)[0]!.body.messages.at(-1)).toMatchObject({ role: 'user', content: spokenWords });
    expect(await page.locator(sel.message).inputValue()).toBe('');
    await waitForIdle(page);
    await page.keyboard.press('Escape');
    await waitForSilence(page, actionTimeoutMs);
  });

  it('hands-free with "Send at once" off: it stops by itself after the silence and puts the words in the box', browserTest, async () => {
    const stt = await speechToText();
    const hearth = await browser.hearth({ env: { STT_BACKEND: 'openai', STT_URL: stt.url, TTS_BACKEND: 'none' } });
    const { page } = await openVoicePage(browser, hearth);
    await page.locator(voice.sendAtOnce).uncheck();
    expect(await page.evaluate(() => localStorage.getItem('hearth.voice.sendAtOnce'))).toBe('false');
    await page.locator(sel.message).fill('Tell me:');

    await page.locator(voice.handsFree).click();
    await page.locator(`${voice.handsFree}[aria-pressed="true"]`).waitFor();
    await page.locator(`${voice.status}[data-state="recording"]`).waitFor();
    // Nobody lets go: the WAV ends, and 1.5 s of silence later the recording ends on its own.
    await page.waitForFunction((expected) => (document.querySelector('textarea[aria-label="Message"]') as HTMLTextAreaElement).value === expected, `Tell me: ${spokenWords}`);
    expect(await page.locator(`${voice.handsFree}[aria-pressed="false"]`).count()).toBe(1);
    expect(await page.locator(voice.status).isHidden()).toBe(true);
    expect(stt.transcriptions).toHaveLength(1);

    // Held with the keyboard: Space down on the focused button records until Space comes up.
    await page.locator(voice.mic).focus();
    await page.keyboard.down(' ');
    await page.locator(`${voice.status}[data-state="recording"][data-seconds="1"]`).waitFor();
    await page.keyboard.up(' ');
    await page.waitForFunction((expected) => (document.querySelector('textarea[aria-label="Message"]') as HTMLTextAreaElement).value === expected, `Tell me: ${spokenWords} ${spokenWords}`);
    expect(stt.transcriptions).toHaveLength(2);
    expect(await page.locator(sel.user).count()).toBe(0);
    expect(chatRequests(hearth)).toHaveLength(0);
  });

  it('Stop, Esc and another session silence the answer read aloud and drop what waits', browserTest, async () => {
    const hearth = await browser.hearth({ env: { TTS_BACKEND: 'espeak-ng' } });
    const { page } = await openVoicePage(browser, hearth);
    await turnSpeakerOn(page);
    // Sentences dropped by Stop may hold the person's slots at /speech for a moment: the next is refused with 429
    // and Retry-After, which the page waits out (Chromium logs each refusal as a console error).
    browser.allowErrors(/status of 429 \(Too Many Requests\) \(http:\/\/127\.0\.0\.1:\d+\/speech/);

    // Stop while it streams: the reading ends with the run, nothing queued plays after.
    hearth.llm.script({ chunks: sentencesOfAnswer(8), delayMs: 150 });
    await sendMessage(page, 'How is the weather?');
    await waitForSpeaking(page);
    await page.locator(sel.stop).click();
    await waitForSilence(page);
    await waitForIdle(page);
    expect(await speechFigures(page)).toMatchObject({ speaking: false, speechQueue: 0, streamEndAt: 0 });

    // Esc after the stream ended, while its sentences still wait to be read.
    hearth.llm.script({ chunks: sentencesOfAnswer(6) });
    await sendMessage(page, 'And tomorrow?');
    await page.waitForFunction(() => (window as any).hearthMetrics.streamEndAt > 0);
    await waitForSpeaking(page);
    expect((await speechFigures(page)).speechQueue).toBeGreaterThanOrEqual(2);
    await page.keyboard.press('Escape');
    await waitForSilence(page);

    // Another session: what was read for this one stops.
    hearth.llm.script({ chunks: sentencesOfAnswer(6) });
    await sendMessage(page, 'And the weekend?');
    await waitForSpeaking(page);
    const other = await hearth.createSession();
    await showSession(page, other);
    expect(await speechFigures(page)).toMatchObject({ speaking: false, speechQueue: 0 });
  });

  it('says why the microphone and the speaker cannot work when neither is set up', browserTest, async () => {
    const hearth = await browser.hearth({ env: { STT_BACKEND: 'none', TTS_BACKEND: 'none' } });
    const { page } = await openVoicePage(browser, hearth);
    const mic = page.locator(voice.mic);
    await page.locator(`${voice.mic}[aria-disabled="true"]`).waitFor();
    expect(await mic.getAttribute('title')).toMatch(/No speech-to-text is configured\. Set STT_BACKEND/);
    expect(await page.locator(voice.handsFree).getAttribute('aria-disabled')).toBe('true');
    expect(await page.locator(voice.speaker).getAttribute('aria-disabled')).toBe('true');
    expect(await page.locator(voice.speaker).getAttribute('title')).toMatch(/No text-to-speech is configured/);

    // Pressing it anyway says the same in the composer's error line, and nothing records.
    await mic.hover();
    await page.mouse.down();
    await page.locator(voice.error).filter({ hasText: 'No speech-to-text is configured' }).waitFor();
    await page.mouse.up();
    expect(await page.locator(voice.status).isHidden()).toBe(true);
    await page.locator(voice.speaker).click({ force: true });
    await page.locator(voice.error).filter({ hasText: 'No text-to-speech is configured' }).waitFor();
    expect(await page.locator(voice.speaker).getAttribute('aria-pressed')).toBe('false');
    await expectNoViolations(page, 'voice not set up');
  });

  // One server for both: its speech server is not there, so the controls are usable and transcribing fails.
  it('says so when Hearth could not transcribe; fits a phone: 44 px targets, nothing wider than the screen, no axe violations', browserTest, async () => {
    // A server nobody listens on: the status is `failed`, and the buttons stay usable.
    const hearth = await browser.hearth({ env: { STT_BACKEND: 'openai', STT_URL: 'http://127.0.0.1:9/v1' } });
    // Allowed, the recording reaches Hearth, whose speech server is not there: the page says what Hearth said.
    browser.allowErrors(/status of 503 \(Service Unavailable\) \(http:\/\/127\.0\.0\.1:\d+\/sessions\/[\w-]+\/audio/);
    const allowed = await openVoicePage(browser, hearth);
    await holdToTalk(allowed.page, 1);
    await allowed.page.locator(voice.error).filter({ hasText: /^Transcription failed: .*127\.0\.0\.1:9/ }).waitFor();
    expect(await allowed.page.locator(voice.status).isHidden()).toBe(true);
    expect(await allowed.page.locator(sel.user).count()).toBe(0);

    // A phone's page on the same server.
    const { page } = await openVoicePage(browser, hearth, { viewport: { width: 390, height: 844 } });
    for (const control of [voice.mic, voice.handsFree, voice.speaker, `label:has(${voice.sendAtOnce})`]) {
      const box = await page.locator(control).boundingBox();
      expect(box, control).not.toBeNull();
      expect(box!.height, control).toBeGreaterThanOrEqual(44);
      expect(box!.width, control).toBeGreaterThanOrEqual(44);
      expect(box!.x + box!.width, control).toBeLessThanOrEqual(390);
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await page.evaluate(() => document.querySelector('#composer')!.scrollWidth <= document.querySelector('#composer')!.clientWidth)).toBe(true);
    await expectNoViolations(page, 'voice controls at 390 px');
  });
});

describe.skipIf(skipVoice)('voice in the page, the microphone refused', () => {
  // The full Chromium: its contexts keep the microphone permission apart.
  const browser = useBrowser({ executablePath: fullChromiumPath, args: fakeMicrophone });

  it('says so when the browser may not use the microphone', browserTest, async () => {
    // A server nobody listens on: the status is `failed`, and the buttons stay usable.
    const hearth = await browser.hearth({ env: { STT_BACKEND: 'openai', STT_URL: 'http://127.0.0.1:9/v1' } });
    const { page } = await openVoicePage(browser, hearth, { microphone: false });
    await page.locator(voice.mic).hover();
    await page.mouse.down();
    await page.locator(voice.error).filter({ hasText: 'Hearth may not use the microphone' }).waitFor();
    await page.mouse.up();
    expect(await page.locator(voice.status).isHidden()).toBe(true);
    expect(await page.locator(voice.mic).getAttribute('aria-pressed')).toBe('false');
  });
});
