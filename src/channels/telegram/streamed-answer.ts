import { GrammyError, type Api } from 'grammy';
import { systemClock, type Clock } from '../../time/clock.ts';
import { escapeHtml, renderTelegramHtml } from './render-html.ts';
import { splitTelegramHtml, telegramMessageLimit } from './split-message.ts';

export type StreamingApi = Pick<Api, 'sendMessage' | 'editMessageText' | 'deleteMessage' | 'sendChatAction'>;

export interface StreamedAnswerOptions {
  api: StreamingApi;
  chatId: number;
  /** The least time between the end of one Bot API call and the start of the next; about a second. */
  intervalMs?: number;
  /** How often `typing` is sent while the answer is being worked on (Telegram shows it for 5 s). */
  typingEveryMs?: number;
  clock?: Clock;
  /** Characters per message (tags included); Telegram's 4,096. */
  limit?: number;
  /** Consecutive failed calls (other than 429, which is waited out) after which it gives up. */
  maxFailures?: number;
  /** Told of each failed call, for the log; the answer carries on regardless. */
  onFailure?: (error: unknown) => void;
}

interface SentMessage {
  messageId: number;
  html: string;
}

type Operation =
  | { kind: 'send'; html: string }
  | { kind: 'edit'; index: number; html: string }
  | { kind: 'delete'; index: number };

/**
 * One answer shown in a Telegram chat as it streams: the Markdown so far, rendered to
 * Telegram HTML and split at 4,096 characters, kept in as few messages as that takes, by
 * sending the first and editing it as deltas arrive. At most one Bot API call is in flight, the
 * next starts `intervalMs` after the last ended (later when Telegram answered 429 with
 * `retry_after`), and a message whose text has not changed is not edited. A short status line
 * (tool activity) rides at the end of the last message until the next delta or `finish`; `typing`
 * is sent while the answer is worked on.
 */
export class StreamedAnswer {
  private markdown = '';
  private status: string | undefined;
  private readonly sent: SentMessage[] = [];
  private readonly intervalMs: number;
  private readonly clock: Clock;
  private readonly limit: number;
  private readonly maxFailures: number;
  private inFlight = false;
  private cancelTimer: (() => void) | undefined;
  private cancelTyping: (() => void) | undefined;
  private nextCallAt = 0;
  private failures = 0;
  private finished = false;
  private closed = false;
  private settle: (() => void) | undefined;
  private readonly settled: Promise<void>;

  constructor(private readonly options: StreamedAnswerOptions) {
    this.intervalMs = options.intervalMs ?? 1_000;
    this.clock = options.clock ?? systemClock;
    this.limit = options.limit ?? telegramMessageLimit;
    this.maxFailures = options.maxFailures ?? 5;
    this.settled = new Promise((resolve) => (this.settle = resolve));
  }

  /** Sends `typing` now and again every few seconds until `finish` or `close`. */
  startTyping(): void {
    if (this.cancelTyping || this.finished || this.closed) return;
    const every = this.options.typingEveryMs ?? 4_500;
    const beat = () => {
      if (this.finished || this.closed) return;
      this.options.api.sendChatAction(this.options.chatId, 'typing').catch(() => undefined);
      this.cancelTyping = this.clock.setTimer(new Date(this.clock.now().getTime() + every), beat);
    };
    beat();
  }

  /** A piece of the answer's Markdown; a status line, if any, goes. */
  append(delta: string): void {
    if (this.finished || this.closed || delta === '') return;
    this.markdown += delta;
    this.status = undefined;
    this.schedule();
  }

  /** The one-line tool activity shown under the answer so far (`undefined` clears it). */
  setStatus(line: string | undefined): void {
    if (this.finished || this.closed) return;
    const trimmed = line?.replace(/\s+/g, ' ').trim();
    this.status = trimmed ? (trimmed.length > 200 ? `${trimmed.slice(0, 199)}…` : trimmed) : undefined;
    this.schedule();
  }

  /** The answer so far, as Markdown. */
  get text(): string {
    return this.markdown;
  }

  /** Ids of the messages that show it, in order. */
  get messageIds(): number[] {
    return this.sent.map((message) => message.messageId);
  }

  /**
   * Ends the answer: `content`, when given, is the whole final Markdown (it replaces what the
   * deltas built); the status line and `typing` stop. Resolves once every message shows the final
   * text, or the calls failed `maxFailures` times in a row.
   */
  finish(content?: string): Promise<void> {
    if (!this.finished && !this.closed) {
      this.finished = true;
      if (content !== undefined) this.markdown = content;
      this.status = undefined;
      this.cancelTyping?.();
      this.schedule();
    }
    return this.settled;
  }

  /** Stops at once, leaving the messages as they are (shutdown). */
  close(): void {
    this.closed = true;
    this.cancelTimer?.();
    this.cancelTyping?.();
    this.settle?.();
  }

  private pieces(): string[] {
    const answer = renderTelegramHtml(this.markdown);
    const status = this.status ? `<i>${escapeHtml(this.status)}</i>` : '';
    const html = answer && status ? `${answer}\n\n${status}` : answer || status;
    return html === '' ? [] : splitTelegramHtml(html, this.limit);
  }

  private nextOperation(): Operation | undefined {
    const pieces = this.pieces();
    for (let index = 0; index < pieces.length; index += 1) {
      const piece = pieces[index]!;
      const message = this.sent[index];
      if (!message) return { kind: 'send', html: piece };
      if (message.html !== piece) return { kind: 'edit', index, html: piece };
    }
    if (this.sent.length > pieces.length && pieces.length > 0) return { kind: 'delete', index: this.sent.length - 1 };
    return undefined;
  }

  private schedule(): void {
    if (this.closed || this.inFlight || this.cancelTimer) return;
    const operation = this.nextOperation();
    if (!operation) {
      if (this.finished) this.settle?.();
      return;
    }
    const at = Math.max(this.nextCallAt, this.clock.now().getTime());
    // A clock may call back at once, inside setTimer, when the instant has come already.
    let fired = false;
    const cancel = this.clock.setTimer(new Date(at), () => {
      fired = true;
      this.cancelTimer = undefined;
      void this.run();
    });
    if (!fired) this.cancelTimer = cancel;
  }

  private async run(): Promise<void> {
    if (this.closed || this.inFlight) return;
    const operation = this.nextOperation();
    if (!operation) return this.schedule();
    this.inFlight = true;
    let waitMs = this.intervalMs;
    try {
      await this.perform(operation);
      this.failures = 0;
    } catch (error) {
      waitMs = this.handleFailure(operation, error);
    } finally {
      this.inFlight = false;
    }
    this.nextCallAt = this.clock.now().getTime() + waitMs;
    if (this.failures >= this.maxFailures) {
      this.closed = true;
      this.cancelTyping?.();
      this.settle?.();
      return;
    }
    this.schedule();
  }

  private async perform(operation: Operation): Promise<void> {
    const { api, chatId } = this.options;
    if (operation.kind === 'send') {
      const message = await api.sendMessage(chatId, operation.html, { parse_mode: 'HTML', link_preview_options: { is_disabled: true } });
      this.sent.push({ messageId: message.message_id, html: operation.html });
    } else if (operation.kind === 'edit') {
      const message = this.sent[operation.index]!;
      await api.editMessageText(chatId, message.messageId, operation.html, { parse_mode: 'HTML', link_preview_options: { is_disabled: true } });
      message.html = operation.html;
    } else {
      const message = this.sent[operation.index]!;
      await api.deleteMessage(chatId, message.messageId);
      this.sent.splice(operation.index, 1);
    }
  }

  /** Deals with a failed call; gives how long to wait before the next. */
  private handleFailure(operation: Operation, error: unknown): number {
    if (error instanceof GrammyError) {
      if (error.error_code === 429) return Math.max(this.intervalMs, (error.parameters.retry_after ?? 1) * 1_000);
      if (error.error_code === 400 && /message is not modified/.test(error.description) && operation.kind === 'edit') {
        this.sent[operation.index]!.html = operation.html;
        return this.intervalMs;
      }
      if (error.error_code === 400 && /message to (edit|delete) not found/.test(error.description) && operation.kind !== 'send') {
        // The person deleted it: what it showed goes out again as new messages.
        this.sent.splice(operation.index);
        this.options.onFailure?.(error);
        return this.intervalMs;
      }
    }
    this.failures += 1;
    this.options.onFailure?.(error);
    return this.intervalMs * 2 ** Math.min(this.failures, 5);
  }
}
