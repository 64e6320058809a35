import { ownEventLoopTurn } from '../event-loop-turns.ts';

/** A piece of the answer streaming now, as it is checkpointed. */
export interface DraftPiece {
  text: string;
  thinking: string;
}

export interface DraftCheckpointOptions {
  /** Writes one piece; pieces arrive in order, one write at a time. */
  write: (piece: DraftPiece) => Promise<void>;
  onError: (error: unknown) => void;
  intervalMs?: number;
  maxPendingCharacters?: number;
}

/**
 * Saves a streaming answer as it grows, about once a second or every few KB, so a crash
 * loses at most that much. Each save appends only what is new since the last one, in an
 * event-loop turn of its own: answers that start together reach their timer together, and
 * 100 drafts written in one tick held every socket for the whole batch.
 */
export class DraftCheckpoint {
  private pending: DraftPiece = { text: '', thinking: '' };
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private readonly intervalMs: number;
  private readonly maxPendingCharacters: number;

  constructor(private readonly options: DraftCheckpointOptions) {
    this.intervalMs = options.intervalMs ?? 1_000;
    this.maxPendingCharacters = options.maxPendingCharacters ?? 4_096;
  }

  add(kind: keyof DraftPiece, delta: string): void {
    this.pending[kind] += delta;
    if (this.pending.text.length + this.pending.thinking.length >= this.maxPendingCharacters) this.save();
    else this.timer ??= setTimeout(() => this.save(), this.intervalMs);
  }

  /** Stops saving: what is not saved yet is dropped (the caller stores the whole answer), what is being saved is waited for. */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = { text: '', thinking: '' };
    await this.writing;
  }

  private save(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const piece = this.pending;
    if (piece.text === '' && piece.thinking === '') return;
    this.pending = { text: '', thinking: '' };
    this.writing = this.writing.then(ownEventLoopTurn).then(() => this.options.write(piece)).catch(this.options.onError);
  }
}
