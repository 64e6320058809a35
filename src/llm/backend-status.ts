import { EventEmitter } from 'node:events';
import type { Config } from '../config.ts';
import type { BackendId } from '../backend-ids.ts';
import type { BackendTarget, ProbeResult } from './backend-probe.ts';
import { backendEntry, backendTarget, probeBackend } from './backends.ts';

/** The default backend and model as last checked (docs/protocol.md, "REST API", `GET /status`). */
export interface BackendStatus {
  backend: BackendId;
  model: string;
  url: string;
  /** `null` until the first check has answered. */
  reachable: boolean | null;
  model_available: boolean | null;
  message?: string;
  fix?: string;
  checked_at: string | null;
}

export interface MonitorOptions {
  intervalMs?: number;
  /** A check that gets no answer within this is "unreachable"; start-up and /health never wait for it. */
  timeoutMs?: number;
}

/** The default backend and model a configuration talks to. */
export function configuredTarget(config: Config): BackendTarget {
  return backendTarget(config.LLM_BACKEND, config);
}

/** Checks the backend in the background, at start and every `intervalMs`, and says when what it found changes. */
export class BackendStatusMonitor extends EventEmitter<{ changed: [status: BackendStatus] }> {
  private status: BackendStatus;
  private running: Promise<BackendStatus> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly stopping = new AbortController();
  private readonly intervalMs: number;
  private readonly timeoutMs: number;
  private readonly checked: Promise<BackendStatus>;
  private markChecked!: (status: BackendStatus) => void;

  constructor(
    private target: BackendTarget,
    options: MonitorOptions = {},
  ) {
    super();
    this.intervalMs = options.intervalMs ?? 60_000;
    this.timeoutMs = options.timeoutMs ?? 3_000;
    this.status = { backend: target.backend, model: target.model, url: target.url, reachable: null, model_available: null, checked_at: null };
    this.checked = new Promise((resolve) => (this.markChecked = resolve));
  }

  current(): BackendStatus {
    return this.status;
  }

  /** Resolves once the first check has answered (or the monitor was stopped before it did). */
  firstCheck(): Promise<BackendStatus> {
    return this.checked;
  }

  start(): void {
    if (this.timer || this.stopping.signal.aborted) return;
    void this.check();
    this.timer = setInterval(() => void this.check(), this.intervalMs);
    this.timer.unref();
  }

  /** Checks now; a check already under way is shared rather than doubled. */
  check(): Promise<BackendStatus> {
    this.running ??= this.runCheck().finally(() => (this.running = undefined));
    return this.running;
  }

  /**
   * What a call to the backend just found: a call that could not reach it marks it unreachable
   * at once, and one that was answered marks it reachable at once, without waiting for the next check.
   */
  observeCall(outcome: { backend: BackendId; model: string; reached: boolean; message?: string }): void {
    if (outcome.backend !== this.target.backend || this.stopping.signal.aborted) return;
    const previous = this.status;
    if (previous.reachable === outcome.reached) return;
    // Answered with another model: whether the configured one is there is for a check to say.
    if (outcome.reached && outcome.model !== this.target.model) {
      void this.check();
      return;
    }
    const finding: ProbeResult = outcome.reached
      ? { reachable: true, model_available: true }
      : { reachable: false, model_available: false, message: outcome.message ?? `Cannot reach ${this.target.url}.`, fix: backendEntry(this.target.backend).probe.unreachableFix };
    this.status = { backend: this.target.backend, model: this.target.model, url: this.target.url, ...finding, checked_at: new Date().toISOString() };
    this.markChecked(this.status);
    this.emit('changed', this.status);
  }

  /** The default model was changed (PUT /models/default): the status is of that model from the next check, made now. */
  followModel(model: string): void {
    if (model === this.target.model) return;
    this.target = { ...this.target, model };
    this.status = { ...this.status, model };
    this.emit('changed', this.status);
    // A check already under way looks at the model before; the next one at this.
    if (this.timer) void (this.running ?? Promise.resolve()).then(() => this.check());
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopping.abort();
    await this.running;
    this.markChecked(this.status);
  }

  private async runCheck(): Promise<BackendStatus> {
    if (this.stopping.signal.aborted) return this.status;
    const signal = AbortSignal.any([this.stopping.signal, AbortSignal.timeout(this.timeoutMs)]);
    const result = await probeBackend(this.target, signal);
    if (this.stopping.signal.aborted) return this.status;
    const previous = this.status;
    this.status = { backend: this.target.backend, model: this.target.model, url: this.target.url, ...result, checked_at: new Date().toISOString() };
    this.markChecked(this.status);
    if (!sameFinding(previous, result)) this.emit('changed', this.status);
    return this.status;
  }
}

function sameFinding(previous: BackendStatus, next: ProbeResult): boolean {
  return (
    previous.reachable === next.reachable &&
    previous.model_available === next.model_available &&
    previous.message === next.message &&
    previous.fix === next.fix
  );
}
