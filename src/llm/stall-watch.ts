import type { LlmError } from './types.ts';

/**
 * Ends a call whose backend has gone quiet: aborts `signal` once `timeoutMs` pass without
 * a `touch()` (the response headers, then every chunk read). Stopped with `stop()`.
 */
export class StallWatch {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  readonly signal = this.controller.signal;

  constructor(private readonly timeoutMs: number) {
    this.touch();
  }

  get fired(): boolean {
    return this.controller.signal.aborted;
  }

  touch(): void {
    if (this.fired) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.controller.abort(), this.timeoutMs);
    this.timer.unref();
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  error(backendName: string): LlmError {
    const seconds = Math.round(this.timeoutMs / 1000);
    return {
      code: 'llm_timeout',
      message: `${backendName} sent nothing for ${seconds} s, so the call was given up (LLM_STALL_TIMEOUT_S=${seconds}). It may be overloaded, stuck or still loading a model too large for this machine; what had arrived is kept.`,
    };
  }
}
