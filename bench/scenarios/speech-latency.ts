// Scenario 27: speech end → first audio byte out, what a person talking to Hearth feels. A server
// process of its own with STT and TTS pointed at the stand-ins of test/support, which run in this
// process: a recording (1.5 s of WebM/Opus, as the page records) is POSTed to
// /sessions/:id/audio (sent at once); the transcript becomes the message; the scripted LLM's first
// sentence arrives on the session socket; it is POSTed to /speech, and the clock stops at the first
// byte of the audio. Hearth's own time = that − the stand-ins' scripted delays − the LLM's own time.
import path from 'node:path';
import { startOpenAiAudioStandIn } from '../../test/support/openai-audio-stand-in.ts';
import { encodedTone } from '../../test/support/tone.ts';
import { startWyomingStandIn } from '../../test/support/wyoming-stand-in.ts';
import { epochNow, sleep } from '../epoch-time.ts';
import { createSession, SessionSocket, type Endpoint } from '../hearth-client.ts';
import { turnTagText } from '../llm-protocol.ts';
import { projectRoot } from '../project-root.ts';
import type { ReportRow, ScenarioResult } from '../report.ts';
import { ServerProcess } from '../server-process.ts';
import { median, milliseconds, percentile } from '../statistics.ts';
import { makeTemporaryDirectory, removeTemporaryDirectory } from '../temporary-directories.ts';
import type { BenchContext } from './bench-context.ts';

const warmUp = 5;
const samples = 20;
const budgetMs = 150;
/** What each stand-in waits before answering, standing for a real server's work; subtracted. */
const standInDelayMs = 20;
const recordingSeconds = 1.5;
/** One exchange every so often, as a conversation goes and within the rate of recordings a person may send (20 a minute after a burst of 10). */
const paceMs = 3_100;

interface Sample {
  wholeMs: number;
  hearthMs: number;
  /** POST /audio sent → its answer (the transcript, the message sent). */
  transcribedMs: number;
  /** The answer → the first sentence on the socket. */
  sentenceMs: number;
  /** POST /speech sent → its first byte. */
  speechMs: number;
}

/** The first chunk of the body's bytes: when a player could start. */
async function firstByte(response: Response): Promise<number> {
  const reader = response.body!.getReader();
  const first = await reader.read();
  const at = epochNow();
  if (first.done || first.value.length === 0) throw new Error('POST /speech sent no audio');
  await reader.cancel();
  return at;
}

async function oneExchange(server: Endpoint, socket: SessionSocket, sessionId: string, recording: Buffer, setTranscript: (text: string) => void, tag: string, llmTime: (tag: string) => Promise<number>): Promise<Sample> {
  setTranscript(`What is the weather like today ${turnTagText(tag)}`);
  const firstSentence = socket.next('stream_delta', 30_000);
  const ended = socket.next('stream_end', 30_000);
  // Awaited below; a failure before then must not also surface as an unhandled rejection.
  firstSentence.catch(() => undefined);
  ended.catch(() => undefined);
  const sentAt = epochNow();
  const audio = await fetch(`${server.baseUrl}/sessions/${sessionId}/audio`, { method: 'POST', headers: { ...server.headers, 'content-type': 'audio/webm;codecs=opus' }, body: new Uint8Array(recording) });
  const heard = (await audio.json()) as { transcript?: string; sent?: boolean };
  const transcribedAt = epochNow();
  if (audio.status !== 200 || heard.sent !== true) throw new Error(`POST /sessions/:id/audio answered ${audio.status}: ${JSON.stringify(heard)}`);
  const { event, receivedAt: sentenceAt } = await firstSentence;
  const speechSentAt = epochNow();
  const speech = await fetch(`${server.baseUrl}/speech`, { method: 'POST', headers: { ...server.headers, 'content-type': 'application/json' }, body: JSON.stringify({ text: event.delta.slice(0, 200) }) });
  if (speech.status !== 200) throw new Error(`POST /speech answered ${speech.status}: ${await speech.text()}`);
  const firstByteAt = await firstByte(speech);
  await ended;
  const wholeMs = firstByteAt - sentAt;
  const llmMs = await llmTime(tag);
  return {
    wholeMs,
    hearthMs: wholeMs - 2 * standInDelayMs - llmMs,
    transcribedMs: transcribedAt - sentAt,
    sentenceMs: sentenceAt - transcribedAt,
    speechMs: firstByteAt - speechSentAt,
  };
}

async function measure(context: BenchContext, label: string, speechEnvironment: (urls: { openAi: string; wyoming: string }) => Record<string, string>): Promise<Sample[]> {
  const { llm } = context;
  const openAi = await startOpenAiAudioStandIn({ delayMs: standInDelayMs, speechSeconds: 1 });
  const wyoming = await startWyomingStandIn({ delayMs: standInDelayMs });
  const directory = await makeTemporaryDirectory(`hearth-bench-speech-${label}-`);
  let server: ServerProcess | undefined;
  let socket: SessionSocket | undefined;
  try {
    await llm.configure({ chunkCount: 1, delayMs: 0, stamped: false, chunkCharacters: 60 });
    ({ server } = await ServerProcess.start({
      dataDir: directory,
      databaseFile: path.join(directory, 'hearth.db'),
      llmUrl: llm.url,
      environment: { TOOLS_DIR: path.join(directory, 'tools'), PROFILES_DIR: path.join(projectRoot, 'profiles'), ...speechEnvironment({ openAi: openAi.url, wyoming: wyoming.url }) },
    }));
    const sessionId = await createSession(server);
    socket = await SessionSocket.connect(server, sessionId);
    const recording = encodedTone('webm', recordingSeconds);
    const samplesTaken: Sample[] = [];
    let transcript = '';
    const setTranscript = (text: string) => {
      transcript = text;
      openAi.setTranscript(text);
    };
    // The Wyoming stand-in says one scripted text; the run that uses it is tagged by the OpenAI one's instead.
    void transcript;
    for (let index = 0; index < warmUp + samples; index++) {
      if (index > 0) await sleep(paceMs);
      const sample = await oneExchange(server, socket, sessionId, recording, setTranscript, `speech-${label}-${index}`, async (tag) => (await llm.llmTimeOfTurn(tag)).milliseconds);
      if (index >= warmUp) samplesTaken.push(sample);
    }
    return samplesTaken;
  } finally {
    await socket?.close();
    await server?.stop();
    await openAi.close();
    await wyoming.close();
    await removeTemporaryDirectory(directory);
  }
}

function summary(samples: Sample[], key: keyof Sample): string {
  const values = samples.map((sample) => sample[key]);
  return `${milliseconds(median(values))} (p95 ${milliseconds(percentile(values, 0.95))})`;
}

export async function speechLatency(context: BenchContext): Promise<ScenarioResult> {
  const openAi = await measure(context, 'openai', ({ openAi: url }) => ({ STT_BACKEND: 'openai', STT_URL: url, TTS_BACKEND: 'openai', TTS_URL: url }));
  // The same without the jail, to tell ffmpeg's own cost from the jail's (its processes get a tenth of the processor against others under load).
  const unjailed = await measure(context, 'unjailed', ({ openAi: url }) => ({ STT_BACKEND: 'openai', STT_URL: url, TTS_BACKEND: 'openai', TTS_URL: url, JAIL: 'off' }));
  const hearthMedian = median(openAi.map((sample) => sample.hearthMs));
  const rows: ReportRow[] = [
    {
      scenario: '27. Speech end → first audio byte out, Hearth’s own time (OpenAI-compatible STT and TTS stand-ins)',
      measured: `median ${milliseconds(hearthMedian)} (p95 ${milliseconds(percentile(openAi.map((sample) => sample.hearthMs), 0.95))}); whole ${summary(openAi, 'wholeMs')}; ${samples} exchanges`,
      target: `median < ${budgetMs} ms`,
      passed: hearthMedian < budgetMs,
    },
    {
      scenario: '27b. The same with JAIL=off (ffmpeg unjailed), for comparison',
      measured: `median ${summary(unjailed, 'hearthMs')}; POST /audio → its answer ${summary(unjailed, 'transcribedMs')}`,
      target: 'reported only',
      passed: undefined,
    },
  ];
  return {
    rows,
    details: [
      `27. Speech end → first audio byte out: a server process of its own (\`npm start\`'s node command, LOG_LEVEL=silent, the shipped profiles, the jail as configured) with STT_BACKEND=openai and TTS_BACKEND=openai pointed at test/support/openai-audio-stand-in.ts, which runs in the bench process and waits ${standInDelayMs} ms before each answer (standing for the real server's work). One exchange every ${paceMs / 1000} s (as a conversation goes, and within the rate of recordings a person may send). Each exchange POSTs ${recordingSeconds} s of WebM/Opus (a tone, as a page's MediaRecorder sends) raw to /sessions/:id/audio; Hearth decodes it with ffmpeg in the strict jail to 16 kHz PCM, sends it to the stand-in as WAV, and sends the transcript (tagged for the LLM) as the message; the scripted LLM answers with one sentence of 60 characters at once; when its stream_delta reaches the session socket the client POSTs it to /speech and stops the clock at the first byte of the MP3 (the stand-in's, passed through). Hearth's own time = whole − 2 × ${standInDelayMs} ms − the LLM process's own time for the turn. ${warmUp} warm-up exchanges discarded, then ${samples}. Medians of the legs: POST /audio → its answer ${summary(openAi, 'transcribedMs')}, → first sentence on the socket ${summary(openAi, 'sentenceMs')}, POST /speech → first byte ${summary(openAi, 'speechMs')}. It includes the stand-in's own work (multipart parsing, in the bench process).`,
    ],
  };
}
