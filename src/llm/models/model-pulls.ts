import { EventEmitter } from 'node:events';
import { refusal, type Refusal } from '../../failure.ts';
import { describePullFailure } from './pull-failure.ts';
import { PullProgress } from './pull-progress.ts';
import type { PullState } from './pull-state.ts';
import { ThrottledUpdates } from './throttled-updates.ts';
import type { OllamaModels } from './ollama-models.ts';

/** At most this many progress updates a second per pull reach the pages; state changes always go at once. */
const updatesPerSecond = 10;

interface RunningPull {
  state: PullState;
  cancel: AbortController;
  updates: ThrottledUpdates<PullState>;
  /** Set as soon as the pull runs. */
  finished?: Promise<PullState>;
}

export type PullStarted = { ok: true; finished: Promise<PullState> } | ({ ok: false } & Refusal<'pull_running'>);

/**
 * The pulls under way, at most one per name: each streams Ollama's progress as `update` (throttled),
 * ends as done, failed (with the reason in plain words) or cancelled, and is kept in `current()`
 * while it runs so a page that opens mid-pull sees it.
 */
export class ModelPulls extends EventEmitter<{ update: [state: PullState] }> {
  private readonly running = new Map<string, RunningPull>();

  constructor(private readonly ollama: OllamaModels) {
    super();
  }

  current(): PullState[] {
    return [...this.running.values()].map((pull) => ({ ...pull.state }));
  }

  start(name: string): PullStarted {
    if (this.running.has(name)) return refusal('pull_running', `${name} is already being pulled.`);
    const cancel = new AbortController();
    const pull: RunningPull = {
      state: { name, status: 'starting', state: 'pulling' },
      cancel,
      updates: new ThrottledUpdates(1000 / updatesPerSecond, (state) => this.emit('update', state)),
    };
    this.running.set(name, pull);
    const finished = this.run(pull);
    pull.finished = finished;
    return { ok: true, finished };
  }

  /** Ends a running pull; false when none of that name runs. */
  cancel(name: string): boolean {
    const pull = this.running.get(name);
    if (!pull) return false;
    pull.cancel.abort();
    return true;
  }

  /** Cancels every pull and waits for them to end (the app closing). */
  async stopAll(): Promise<void> {
    const pulls = [...this.running.values()];
    for (const pull of pulls) pull.cancel.abort();
    await Promise.all(pulls.map((pull) => pull.finished));
  }

  private async run(pull: RunningPull): Promise<PullState> {
    const { name } = pull.state;
    const progress = new PullProgress();
    let connected = false;
    try {
      for await (const line of this.ollama.pull(name, pull.cancel.signal)) {
        connected = true;
        const sizes = progress.add(line);
        const done = line.status === 'success';
        this.set(pull, { name, status: line.status, ...sizes, state: done ? 'done' : 'pulling' }, done);
      }
      if (pull.state.state !== 'done') this.set(pull, { ...pull.state, state: 'done' }, true);
    } catch (error) {
      if (pull.cancel.signal.aborted) this.set(pull, { ...pull.state, state: 'cancelled' }, true);
      else this.set(pull, { ...pull.state, state: 'failed', error: describePullFailure(error, name, this.ollama.host, connected) }, true);
    } finally {
      pull.updates.stop();
      this.running.delete(name);
    }
    return pull.state;
  }

  private set(pull: RunningPull, state: PullState, urgent: boolean): void {
    pull.state = state;
    pull.updates.push({ ...state }, urgent);
  }
}
