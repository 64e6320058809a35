// The IPC messages between the bench client and the scripted-LLM child process.

/** How the scripted LLM answers each turn's answer call until told otherwise. */
export interface ReplyPlan {
  chunkCount: number;
  /** Pause before each chunk. */
  delayMs: number;
  /** Each chunk's text is its send time (epoch ms, LLM clock) between stamp delimiters. */
  stamped: boolean;
  /** Each chunk is this many characters of filler (when not stamped). */
  chunkCharacters?: number;
}

export type LlmCommand =
  | { id: number; type: 'configure'; plan: ReplyPlan }
  | { id: number; type: 'clock' };

export type LlmReport =
  | { type: 'ready'; url: string }
  | { id: number; type: 'configured' }
  | { id: number; type: 'clock'; llmTime: number }
  /**
   * One chat request: from its headers arriving to the response being flushed, LLM clock.
   * `answer`: the turn's main call (with tools, ending with the user's message), not planning or a title.
   */
  | { type: 'timing'; tag: string | undefined; answer: boolean; receivedAt: number; finishedAt: number };

export type LlmReply = Extract<LlmReport, { id: number }>;

/** Put into the user message so the LLM can say which turn a request belongs to. */
export function turnTagText(tag: string): string {
  return `bench-tag:${tag}`;
}

export function readTurnTag(text: string): string | undefined {
  return /bench-tag:(\S+)/.exec(text)?.[1];
}

export function stampText(time: number): string {
  return `[t:${time.toFixed(3)}]`;
}

/** Every stamp in a delta; a server that merged deltas would put several in one. */
export function readStamps(text: string): number[] {
  return [...text.matchAll(/\[t:(\d+(?:\.\d+)?)\]/g)].map((match) => Number(match[1]));
}
