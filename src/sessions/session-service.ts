import type { Agent, SendResult } from '../agent/agent.ts';
import type { Decision } from '../agent/approval-gate.ts';
import type { EventListener } from '../agent/run-hub.ts';
import type { TurnOutcome, UserInput } from '../agent/turn.ts';
import type { ProfileRegistry } from '../profiles/profile-registry.ts';
import type { Db } from '../store/database.ts';
import { bindSessionKey, findKeyedSession } from '../store/session-keys-repository.ts';
import { createSession, findSession, listRecentSessions, updateSession, type Session } from '../store/sessions-repository.ts';

/** The profile a session gets when nobody names one: the page's New session, the REST API, schedules, channels. */
export const defaultProfileId = 'secretary';

/** A new session is announced to open pages (sessions_changed `created`) by its first stored message, whoever made it. */
export interface NewSession {
  /** The default profile when absent. */
  profileId?: string;
  /** A title the person (or a schedule's name) gave: it is kept, never replaced by the one made from the first message. */
  title?: string;
  /** The channel the session comes from (`telegram`): the page shows its mark. */
  origin?: string;
}

export type SwitchedProfile =
  | { ok: true; session: Session }
  | { ok: false; code: 'session_not_found' | 'unknown_profile'; message: string };

export type CreatedSession = { ok: true; session: Session } | { ok: false; code: 'unknown_profile'; message: string };

export interface SessionServiceOptions {
  agent: Agent;
  db: Db;
  profiles: ProfileRegistry;
  /** Runs after a session was created (long-term memory extracts idle sessions then). */
  onSessionCreated?: () => void;
}

/**
 * The one front door to sessions for everyone who drives them — the page's socket, the REST API,
 * the scheduler, the heartbeat and channels: find or create a session (also by an outside key
 * such as `telegram:<chat id>`, remembered across restarts), start a turn, stop it, wait for it,
 * follow its events, decide its waiting approvals.
 */
export class SessionService {
  readonly defaultProfileId = defaultProfileId;

  constructor(private readonly options: SessionServiceOptions) {}

  private get agent(): Agent {
    return this.options.agent;
  }

  find(sessionId: string): Promise<Session | undefined> {
    return findSession(this.options.db, sessionId);
  }

  hasProfile(profileId: string): boolean {
    return this.options.profiles.has(profileId);
  }

  /** The profile ids a session may take, for messages that name them. */
  knownProfiles(): string[] {
    return this.options.profiles.list().map((profile) => profile.id);
  }

  async create(request: NewSession = {}): Promise<CreatedSession> {
    const { db } = this.options;
    const profileId = request.profileId ?? defaultProfileId;
    if (!this.hasProfile(profileId)) {
      return { ok: false, code: 'unknown_profile', message: `Unknown profile "${profileId}". Known profiles: ${this.knownProfiles().join(', ')}.` };
    }
    let session = await createSession(db, profileId, request.origin ?? null);
    if (request.title !== undefined) session = (await updateSession(db, session.id, { title: request.title, titleSetByUser: true })) ?? session;
    this.options.onSessionCreated?.();
    return { ok: true, session };
  }

  /**
   * Gives the session another profile: the transcript keeps a marker and the pages watching it
   * hear `profile_switched` (nothing happens when it has that profile already). The page's PATCH
   * /sessions/:id and a channel's `/profile` both come here.
   */
  async switchProfile(sessionId: string, profileId: string): Promise<SwitchedProfile> {
    const before = await this.find(sessionId);
    if (!before) return { ok: false, code: 'session_not_found', message: `No session with id ${sessionId}.` };
    if (!this.hasProfile(profileId)) {
      return { ok: false, code: 'unknown_profile', message: `Unknown profile "${profileId}". Known profiles: ${this.knownProfiles().join(', ')}.` };
    }
    if (before.profileId === profileId) return { ok: true, session: before };
    const updated = (await updateSession(this.options.db, sessionId, { profileId })) ?? before;
    await this.agent.profileSwitched(sessionId, profileId, 'user');
    return { ok: true, session: updated };
  }

  /** The profile's display name, or its id when it has none. */
  profileName(profileId: string): string {
    return this.options.profiles.get(profileId)?.name ?? profileId;
  }

  /** The most recently active sessions with a message, newest first; only a channel's (`origin: 'telegram'`) when given. */
  recent(options: { origin?: string; limit?: number } = {}): Promise<Session[]> {
    return listRecentSessions(this.options.db, { limit: options.limit ?? 10, ...(options.origin !== undefined && { origin: options.origin }) });
  }

  /** The session the key leads to, or undefined before it was bound or once that session is deleted. */
  async findByKey(key: string): Promise<Session | undefined> {
    const sessionId = await findKeyedSession(this.options.db, key);
    return sessionId === undefined ? undefined : this.find(sessionId);
  }

  /** Points the key at a session (a channel's `/new`, or picking another session); the next findOrCreate finds that one. */
  bindKey(key: string, sessionId: string): Promise<void> {
    return bindSessionKey(this.options.db, key, sessionId);
  }

  /** The session the key leads to; made (and bound to the key) when there is none, or when it was deleted. */
  async findOrCreate(key: string, request: NewSession = {}): Promise<CreatedSession> {
    const existing = await this.findByKey(key);
    if (existing) return { ok: true, session: existing };
    const created = await this.create(request);
    if (created.ok) await this.bindKey(key, created.session.id);
    return created;
  }

  /** Starts a turn in the background; `session_busy` while the session has one. `unattended` lets a person's model calls go first. */
  send(sessionId: string, input: UserInput): SendResult {
    return this.agent.send(sessionId, input);
  }

  /** Sends once the session's current turn (if any) has ended, and settles with the outcome. */
  async sendWhenIdle(sessionId: string, input: UserInput): Promise<TurnOutcome> {
    for (;;) {
      const sent = this.agent.send(sessionId, input);
      if (sent.ok) return sent.outcome;
      await this.agent.whenIdle(sessionId);
      // The turn's promise may settle a moment before its run is released.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  regenerate(sessionId: string): SendResult {
    return this.agent.regenerate(sessionId);
  }

  edit(sessionId: string, messageId: number, content: string): SendResult {
    return this.agent.edit(sessionId, messageId, content);
  }

  /** Stops the session's run; false when it had none. */
  stop(sessionId: string): boolean {
    return this.agent.stop(sessionId);
  }

  whenIdle(sessionId: string): Promise<void> {
    return this.agent.whenIdle(sessionId);
  }

  isRunning(sessionId: string): boolean {
    return this.agent.isRunning(sessionId);
  }

  /** Every event of the session's runs, from the current run's start on; returns the unfollow. */
  follow(sessionId: string, listener: EventListener): () => void {
    return this.agent.subscribe(sessionId, listener);
  }

  /** The person's decision on a waiting call, and where it was made (`via`: page, rest, a channel's id); false when nothing of that id waits. */
  decide(sessionId: string, callId: string, decision: Decision): boolean {
    return this.agent.decide(sessionId, callId, decision);
  }

  /** Tells every open page that the session list changed. */
  announce(sessionId: string, change: 'created' | 'updated' | 'deleted'): void {
    this.agent.sessionChanged(sessionId, change);
  }
}
