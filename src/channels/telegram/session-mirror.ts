import type { AgentEvent } from '../../protocol/events.ts';
import type { SpokenAnswers } from './spoken-answers.ts';
import { StreamedAnswer, type StreamingApi } from './streamed-answer.ts';
import type { TelegramSessions } from './telegram-port.ts';

export interface SessionMirrorOptions {
  api: StreamingApi;
  sessions: Pick<TelegramSessions, 'follow'>;
  /** Edit interval of streamed answers; about a second. */
  editIntervalMs?: number;
  onFailure: (what: string, error: unknown) => void;
  /**
   * Whether the chat's person may still see the session, asked as each run starts (the run's events
   * wait for the answer): a chat unlinked or linked to someone else since it began to follow, or a
   * session given to someone else, stops being mirrored before anything of the run reaches it.
   */
  stillReaches?: (sessionId: string, chatId: number) => Promise<boolean>;
  /** Told how each run ended, so that an answer to a voice note is spoken too. */
  spoken?: Pick<SpokenAnswers, 'answered' | 'drop'>;
}

interface FollowedSession {
  sessionId: string;
  chatId: number;
  /** The run's events so far, held while `stillReaches` is asked. */
  held?: AgentEvent[];
  unfollow: () => void;
  answer?: StreamedAnswer;
}

/**
 * Mirrors sessions into chats, one session a chat: answers streamed by edits, tool status, errors,
 * whoever started the turn (the chat or the page). Approvals are not taken from here: the channel
 * hears of them from the gate alone.
 */
export class SessionMirror {
  private readonly followed = new Map<string, FollowedSession>();

  constructor(private readonly options: SessionMirrorOptions) {}

  /** Mirrors the session into the chat, instead of the session it mirrored before; false when it was mirrored already. */
  follow(sessionId: string, chatId: number): boolean {
    for (const [followedId, followed] of this.followed) {
      if (followed.chatId === chatId && followedId !== sessionId) this.unfollow(followedId, followed);
    }
    if (this.followed.has(sessionId)) return false;
    const followed: FollowedSession = { sessionId, chatId, unfollow: () => undefined };
    this.followed.set(sessionId, followed);
    followed.unfollow = this.options.sessions.follow(sessionId, (event) => this.onEvent(followed, event));
    return true;
  }

  /** The chat the session is mirrored into, if any. */
  chatOf(sessionId: string): number | undefined {
    return this.followed.get(sessionId)?.chatId;
  }

  /** Ends the answer being written as it stands, so that what follows (an approval's card, then the rest of the answer) comes below it. */
  breakAnswer(sessionId: string): void {
    const followed = this.followed.get(sessionId);
    if (followed) this.finish(followed, undefined);
  }

  close(): void {
    for (const [sessionId, followed] of this.followed) this.unfollow(sessionId, followed);
  }

  private unfollow(sessionId: string, followed: FollowedSession): void {
    this.options.spoken?.drop(sessionId);
    followed.answer?.close();
    followed.unfollow();
    this.followed.delete(sessionId);
  }

  private show(followed: FollowedSession, event: AgentEvent): void {
    switch (event.type) {
      case 'stream_start':
        this.answer(followed);
        break;
      case 'stream_delta':
        this.answer(followed).append(event.delta);
        break;
      case 'tool_started':
        if (!event.is_subagent) this.answer(followed).setStatus(`⚙ ${event.tool}…`);
        break;
      case 'stream_end': {
        const shown = this.finish(followed, event.content);
        const markdown = shown?.markdown ?? event.content ?? '';
        this.options.spoken
          ?.answered(followed.sessionId, followed.chatId, markdown, shown?.settled ?? Promise.resolve())
          .catch((error: unknown) => this.options.onFailure('answer not spoken', error));
        break;
      }
      case 'stream_stopped':
        this.options.spoken?.drop(followed.sessionId);
        this.finish(followed, event.content, event.reason === 'user' ? 'Stopped.' : 'Stopped: Hearth is shutting down.');
        break;
      case 'error':
        this.options.spoken?.drop(followed.sessionId);
        this.finish(followed, undefined);
        void this.options.api.sendMessage(followed.chatId, `⚠ ${event.message}`).catch((error: unknown) => this.options.onFailure('error not shown', error));
        break;
      default:
        break;
    }
  }

  /** Holds a run's events until `stillReaches` said the chat may still see the session; then shows them, or stops following. */
  private onEvent(followed: FollowedSession, event: AgentEvent): void {
    if (followed.held) return void followed.held.push(event);
    const { stillReaches } = this.options;
    if (event.type !== 'stream_start' || !stillReaches) return this.show(followed, event);
    followed.held = [event];
    void stillReaches(followed.sessionId, followed.chatId)
      .catch(() => false)
      .then((reaches) => {
        const held = followed.held ?? [];
        followed.held = undefined;
        if (this.followed.get(followed.sessionId) !== followed) return;
        if (!reaches) return this.unfollow(followed.sessionId, followed);
        for (const each of held) this.show(followed, each);
      });
  }

  private answer(followed: FollowedSession): StreamedAnswer {
    if (!followed.answer) {
      followed.answer = new StreamedAnswer({
        api: this.options.api,
        chatId: followed.chatId,
        ...(this.options.editIntervalMs !== undefined && { intervalMs: this.options.editIntervalMs }),
        onFailure: (error) => this.options.onFailure('answer not updated', error),
      });
      followed.answer.startTyping();
    }
    return followed.answer;
  }

  /** Ends the answer being shown with its final text; gives that text and when every message shows it. */
  private finish(followed: FollowedSession, content: string | undefined, note?: string): { markdown: string; settled: Promise<void> } | undefined {
    const current = followed.answer;
    followed.answer = undefined;
    if (!current) return undefined;
    const final = content ?? current.text;
    return { markdown: final, settled: current.finish(note ? `${final}${final ? '\n\n' : ''}_${note}_` : final) };
  }
}
