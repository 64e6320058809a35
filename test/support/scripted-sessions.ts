import type { TurnOutcome, UserInput } from '../../src/agent/turn.ts';
import type { HeartbeatSessions } from '../../src/scheduler/heartbeat-run.ts';
import type { SchedulerSessions } from '../../src/scheduler/scheduler.ts';
import type { CreatedSession, Message, NewSession, SendResult, Session, Sessions } from '../../src/sessions/sessions.ts';
import type { Db } from '../../src/store/database.ts';
import { createSession, deleteSession, updateSession } from '../../src/store/sessions-repository.ts';

/** A turn the test ends when it chooses, with the outcome it chooses. */
export interface HeldTurn {
  /** Settles once the turn has been asked for. */
  readonly asked: Promise<void>;
  finish(outcome: TurnOutcome): void;
}

export const completed = (content = 'Done.'): TurnOutcome => ({ status: 'completed', content, contextTokens: 1 });
export const failed = (message: string): TurnOutcome => ({ status: 'failed', content: '', error: { code: 'llm_error', message } });
export const stopped: TurnOutcome = { status: 'stopped', content: '' };

type Scripted = TurnOutcome | Error | { held: Promise<TurnOutcome>; asked: () => void };

/**
 * Sessions as the scheduler and the heartbeats see them, played in memory: keys lead to sessions,
 * each turn asked for is recorded and answered with the next scripted outcome ("Done." once the
 * script is used up), and a session's display messages are its prompts and answers. Each session
 * it makes is also a row in the database, so what points at one (a notification) can.
 */
export class ScriptedSessions implements SchedulerSessions, HeartbeatSessions, Pick<Sessions, 'messages'> {
  readonly defaultProfileId = 'secretary';
  readonly profileIds = new Set(['secretary', 'guarded']);
  readonly sessions = new Map<string, Session>();
  readonly keys = new Map<string, string>();
  /** Every turn asked for, in order, and how; one waiting for its session is here once it starts. */
  readonly turns: Array<{ sessionId: string; input: UserInput; how: 'send' | 'sendWhenIdle' }> = [];
  /** What findOrCreate made a new session with. */
  readonly made: Array<{ key: string; request: NewSession }> = [];
  readonly announced: Array<{ sessionId: string; change: string }> = [];
  private readonly display = new Map<string, Message[]>();
  private readonly script: Scripted[] = [];
  /** Each session's current turn, while it has one. */
  private readonly running = new Map<string, Promise<unknown>>();
  /** How many turns were asked for so far, started or still waiting. */
  private requests = 0;
  private readonly requestWaiters: Array<{ count: number; resolve: () => void }> = [];
  private nextMessageId = 1;

  constructor(private readonly db: Db) {}

  /** Settles once `count` turns have been asked for, whether they started or wait for their session. */
  requested(count: number): Promise<void> {
    if (this.requests >= count) return Promise.resolve();
    return new Promise((resolve) => this.requestWaiters.push({ count, resolve }));
  }

  /** The outcomes of the next turns, in order; an Error makes the turn throw. */
  answer(...outcomes: Array<TurnOutcome | Error>): void {
    this.script.push(...outcomes);
  }

  /** The next turn goes on until the test finishes it. */
  hold(): HeldTurn {
    let finish!: (outcome: TurnOutcome) => void;
    let asked!: () => void;
    const held = new Promise<TurnOutcome>((resolve) => (finish = resolve));
    const wasAsked = new Promise<void>((resolve) => (asked = resolve));
    this.script.push({ held, asked });
    return { asked: wasAsked, finish };
  }

  hasProfile(profileId: string): boolean {
    return this.profileIds.has(profileId);
  }

  async find(sessionId: string): Promise<Session | undefined> {
    return this.sessions.get(sessionId);
  }

  /** A session made outside the scheduler, as the page makes one. */
  async createSession(profileId = this.defaultProfileId): Promise<string> {
    return (await this.add(profileId, 'New session')).id;
  }

  async keyedSessions(prefix: string): Promise<Map<string, string>> {
    return new Map([...this.keys].filter(([key, sessionId]) => key.startsWith(prefix) && this.sessions.has(sessionId)));
  }

  async bindKey(key: string, sessionId: string): Promise<void> {
    this.keys.set(key, sessionId);
  }

  async unbindKey(key: string): Promise<void> {
    this.keys.delete(key);
  }

  async findOrCreate(key: string, request: NewSession = {}): Promise<CreatedSession> {
    const bound = this.sessions.get(this.keys.get(key) ?? '');
    if (bound) return { ok: true, session: bound };
    const profileId = request.profileId ?? this.defaultProfileId;
    if (!this.hasProfile(profileId)) return { ok: false, code: 'unknown_profile', message: `Unknown profile "${profileId}".` };
    this.made.push({ key, request });
    const session = await this.add(profileId, request.title ?? 'New session');
    this.keys.set(key, session.id);
    return { ok: true, session };
  }

  /** Deletes a session, as the person does from the page. */
  async remove(sessionId: string): Promise<void> {
    this.sessions.delete(sessionId);
    this.display.delete(sessionId);
    await deleteSession(this.db, sessionId);
  }

  send(sessionId: string, input: UserInput): SendResult {
    this.countRequest();
    if (this.running.has(sessionId)) return { ok: false, code: 'session_busy' };
    return { ok: true, outcome: this.turn(sessionId, input, 'send') };
  }

  async sendWhenIdle(sessionId: string, input: UserInput): Promise<TurnOutcome> {
    this.countRequest();
    while (this.running.has(sessionId)) await this.running.get(sessionId)!.catch(() => undefined);
    return this.turn(sessionId, input, 'sendWhenIdle');
  }

  async messages(sessionId: string): Promise<Message[]> {
    return [...(this.display.get(sessionId) ?? [])];
  }

  async lastDisplayMessageId(sessionId: string): Promise<number> {
    return this.display.get(sessionId)?.at(-1)?.id ?? 0;
  }

  async dropDisplayMessagesAfter(sessionId: string, messageId: number): Promise<void> {
    this.display.set(sessionId, (this.display.get(sessionId) ?? []).filter((message) => message.id <= messageId));
  }

  announce(sessionId: string, change: 'created' | 'updated' | 'deleted'): void {
    this.announced.push({ sessionId, change });
  }

  private countRequest(): void {
    this.requests += 1;
    for (const waiter of this.requestWaiters.filter((waiting) => waiting.count <= this.requests)) {
      this.requestWaiters.splice(this.requestWaiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }

  private turn(sessionId: string, input: UserInput, how: 'send' | 'sendWhenIdle'): Promise<TurnOutcome> {
    this.turns.push({ sessionId, input, how });
    this.store(sessionId, 'user', input.content, input.scheduleId);
    const next = this.script.shift() ?? completed();
    const outcome = (async () => {
      if (next instanceof Error) throw next;
      if ('held' in next) {
        next.asked();
        return next.held;
      }
      return next;
    })().then((ended) => {
      if (ended.content !== '') this.store(sessionId, 'assistant', ended.content);
      return ended;
    });
    const settled = outcome.finally(() => this.running.delete(sessionId));
    this.running.set(sessionId, settled);
    return settled;
  }

  private store(sessionId: string, role: 'user' | 'assistant', content: string, scheduleId?: string): void {
    const list = this.display.get(sessionId) ?? [];
    list.push({ id: this.nextMessageId++, role, content, ...(scheduleId !== undefined && { scheduled: true, schedule_id: scheduleId }), created_at: new Date(0).toISOString() });
    this.display.set(sessionId, list);
  }

  private async add(profileId: string, title: string): Promise<Session> {
    const row = await createSession(this.db, { profileId: profileId });
    const session = (await updateSession(this.db, row.id, { title, titleSetByUser: true }))!;
    this.sessions.set(session.id, session);
    return session;
  }
}
