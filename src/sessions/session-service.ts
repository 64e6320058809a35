import { Readable } from 'node:stream';
import type { AgentRuns, SendResult } from '../agent/agent-runs.ts';
import type { ApprovalGate, Decision } from '../agent/approval-gate.ts';
import type { Household } from '../household/household.ts';
import type { Person } from '../people/person.ts';
import { defaultProfileAccess, maySee, mayUseProfile } from '../people/rights.ts';
import type { Audience, HearthEventHub, PendingApprovalView } from '../events/hearth-events.ts';
import type { EventListener } from '../agent/run-hub.ts';
import type { TurnOutcome, UserInput } from '../agent/turn.ts';
import { refusal } from '../failure.ts';
import type { ProfileRegistry } from '../profiles/profile-registry.ts';
import type { Db } from '../store/database.ts';
import type { Message } from '../store/message.ts';
import { imageUrl, type MessageImages } from '../store/message-images.ts';
import { dropDisplayMessagesAfter, lastDisplayMessageId, listMessages } from '../store/messages-repository.ts';
import { appendProfileMarker } from '../store/profile-markers.ts';
import { removeSessionFolder, sessionFolder, stageUpload, type SavedFile, type StagedUpload } from '../store/session-files.ts';
import { listFolderFiles, openFolderFile, removeFolderFile, type FolderFile, type OpenedFolderFile } from '../store/session-folder-files.ts';
import { bindSessionKey, findKeyedSession, listKeyedSessions, unbindSessionKey } from '../store/session-keys-repository.ts';
import { createSession, deleteSession, findSession, listRecentSessions, listSessionIdsOf, listSessions, updateSession, type Session } from '../store/sessions-repository.ts';
import type {
  CreatedSession,
  DecidedApproval,
  IncomingFile,
  MessageList,
  NewSession,
  SessionResult,
  Sessions,
  SessionUpdate,
  SwitchedBy,
  SwitchedProfile,
} from './sessions.ts';

/** The profile a session gets when nobody names one: the page's New session, the REST API, schedules, channels. */
const defaultProfileId = 'secretary';

export interface SessionServiceOptions {
  db: Db;
  profiles: ProfileRegistry;
  /** The agent's runs: started, stopped, followed, and forgotten before a session is deleted. */
  runs: AgentRuns;
  /** Where the person's decisions on waiting calls go; the gate lets only those `mayDecide` allows decide. */
  approvals: Pick<ApprovalGate, 'decide' | 'mayDecide' | 'pendingFor'> & { on(event: 'changed', listener: () => void): unknown };
  /** Whose a session is, as a person. */
  household: Pick<Household, 'person'>;
  /** SESSION_FILES_DIR: one folder per session, for uploads and the tools' work. */
  filesDirectory: string;
  /** The images of stored messages. */
  images: MessageImages;
  /** The app-wide hub open pages hear `sessions_changed` on. */
  events: Pick<HearthEventHub, 'publish'>;
  /** Runs after a session was created (long-term memory extracts idle sessions then). */
  onSessionCreated?: () => void;
}

/**
 * The one front door to sessions (the `Sessions` interface): it owns a session's whole life —
 * its rows, keys, files, images and profile — and hands its runs to the agent.
 */
export class SessionService implements Sessions {
  readonly defaultProfileId = defaultProfileId;
  /** Those waiting for a call to wait (`untilApprovalWaits`): one listener on the gate serves them all. */
  private readonly approvalWatchers = new Set<() => void>();
  private watchingApprovals = false;

  constructor(private readonly options: SessionServiceOptions) {}

  private get runs(): AgentRuns {
    return this.options.runs;
  }

  find(sessionId: string): Promise<Session | undefined> {
    return findSession(this.options.db, sessionId);
  }

  list(): Promise<Session[]> {
    return listSessions(this.options.db);
  }

  async findFor(person: Person, sessionId: string): Promise<Session | undefined> {
    const session = await this.find(sessionId);
    return session && this.visibleTo(person, session) ? session : undefined;
  }

  async listFor(person: Person): Promise<Session[]> {
    return (await listSessions(this.options.db, person.id)).filter((session) => this.visibleTo(person, session));
  }

  visibleTo(person: Person, session: Session): boolean {
    return maySee(person, session) && (session.personId === person.id || this.mayUseProfile(person, session.profileId));
  }

  mayUseProfile(person: Person, profileId: string): boolean {
    return mayUseProfile(person, this.options.profiles.get(profileId) ?? defaultProfileAccess);
  }

  defaultProfileFor(person: Person): string {
    if (this.mayUseProfile(person, defaultProfileId)) return defaultProfileId;
    return this.options.profiles.list().find((profile) => this.mayUseProfile(person, profile.id))?.id ?? defaultProfileId;
  }

  seenBy(sessionId: string): Audience {
    return async (person) => (await this.findFor(person, sessionId)) !== undefined;
  }

  recent(options: { origin?: string; limit?: number } = {}): Promise<Session[]> {
    return listRecentSessions(this.options.db, { limit: options.limit ?? 10, ...(options.origin !== undefined && { origin: options.origin }) });
  }

  async messages(sessionId: string, list: MessageList): Promise<Message[]> {
    const messages = await listMessages(this.options.db, sessionId, list);
    return messages.map((message) => (message.images ? { ...message, images: message.images.map((image) => imageUrl(sessionId, image)) } : message));
  }

  image(sessionId: string, name: string): { file: string; mediaType: string } | undefined {
    return this.options.images.locate(sessionId, name);
  }

  lastDisplayMessageId(sessionId: string): Promise<number> {
    return lastDisplayMessageId(this.options.db, sessionId);
  }

  async dropDisplayMessagesAfter(sessionId: string, messageId: number): Promise<void> {
    await dropDisplayMessagesAfter(this.options.db, sessionId, messageId);
  }

  hasProfile(profileId: string): boolean {
    return this.options.profiles.has(profileId);
  }

  knownProfiles(): string[] {
    return this.options.profiles.list().map((profile) => profile.id);
  }

  profileName(profileId: string): string {
    return this.options.profiles.get(profileId)?.name ?? profileId;
  }

  async create(request: NewSession = {}): Promise<CreatedSession> {
    const { db } = this.options;
    const person = request.personId === undefined ? undefined : await this.options.household.person(request.personId);
    const profileId = request.profileId ?? (person ? this.defaultProfileFor(person) : defaultProfileId);
    if (!this.hasProfile(profileId)) return this.unknownProfile(profileId);
    if (person && !this.mayUseProfile(person, profileId)) return this.profileForbidden(person, profileId);
    let session = await createSession(db, { profileId, origin: request.origin ?? null, ...(request.personId !== undefined && { personId: request.personId }) });
    if (request.title !== undefined) session = (await updateSession(db, session.id, { title: request.title, titleSetByUser: true })) ?? session;
    this.options.onSessionCreated?.();
    return { ok: true, session };
  }

  async findByKey(key: string): Promise<Session | undefined> {
    const sessionId = await findKeyedSession(this.options.db, key);
    return sessionId === undefined ? undefined : this.find(sessionId);
  }

  bindKey(key: string, sessionId: string): Promise<void> {
    return bindSessionKey(this.options.db, key, sessionId);
  }

  unbindKey(key: string): Promise<void> {
    return unbindSessionKey(this.options.db, key);
  }

  keyedSessions(prefix: string): Promise<Map<string, string>> {
    return listKeyedSessions(this.options.db, prefix);
  }

  async findOrCreate(key: string, request: NewSession = {}): Promise<CreatedSession> {
    const existing = await this.findByKey(key);
    if (existing) return { ok: true, session: existing };
    const created = await this.create(request);
    if (created.ok) await this.bindKey(key, created.session.id);
    return created;
  }

  async update(sessionId: string, changes: SessionUpdate): Promise<SessionResult> {
    const { db } = this.options;
    const before = await this.find(sessionId);
    if (!before) return this.notFound(sessionId);
    if (changes.profileId !== undefined && !this.hasProfile(changes.profileId)) return this.unknownProfile(changes.profileId);
    await updateSession(db, sessionId, {
      ...(changes.title !== undefined && { title: changes.title.trim(), titleSetByUser: true }),
      ...(changes.pinned !== undefined && { pinned: changes.pinned }),
      ...(changes.model !== undefined && { model: changes.model }),
      ...(changes.shared !== undefined && { shared: changes.shared }),
    });
    if (changes.profileId !== undefined) {
      const switched = await this.switchQuietly(sessionId, changes.profileId, 'user');
      if (!switched.ok) return switched;
    }
    const session = await this.find(sessionId);
    if (!session) return this.notFound(sessionId);
    this.announceChange(before, session);
    return { ok: true, session };
  }

  async switchProfile(sessionId: string, profileId: string, by: SwitchedBy): Promise<SwitchedProfile> {
    const before = await this.find(sessionId);
    const switched = await this.switchQuietly(sessionId, profileId, by);
    if (before && switched.ok && switched.switched) this.announceChange(before, switched.session);
    return switched;
  }

  /**
   * A changed session is `updated` for those who still see it and `deleted` for those who no
   * longer may (unshared, or shared under a profile their role may not use): their list drops it
   * and their open sockets on it close as on a missing session.
   */
  private announceChange(before: Session, after: Session): void {
    if (before.shared && (!after.shared || after.profileId !== before.profileId)) {
      const lost = (person: Person) => this.visibleTo(person, before) && !this.visibleTo(person, after);
      this.options.events.publish({ type: 'sessions_changed', session_id: after.id, change: 'deleted' }, lost);
    }
    this.announce(after.id, 'updated');
  }

  /** The switch without the session list's announcement, which `update` makes once for all its changes. */
  private async switchQuietly(sessionId: string, profileId: string, by: SwitchedBy): Promise<SwitchedProfile> {
    const { db } = this.options;
    const before = await this.find(sessionId);
    if (!before) return this.notFound(sessionId);
    if (!this.hasProfile(profileId)) return this.unknownProfile(profileId);
    if (before.profileId === profileId) return { ok: true, session: before, switched: false };
    const person = await this.options.household.person(before.personId);
    if (person && !this.mayUseProfile(person, profileId)) return this.profileForbidden(person, profileId);
    const session = (await updateSession(db, sessionId, { profileId })) ?? before;
    const profileName = this.profileName(profileId);
    await appendProfileMarker(db, sessionId, { profile_id: profileId, profile_name: profileName, by });
    this.runs.tell(sessionId, { type: 'profile_switched', profile_id: profileId, profile_name: profileName });
    return { ok: true, session, switched: true };
  }

  async delete(sessionId: string): Promise<boolean> {
    const session = await this.find(sessionId);
    await this.runs.forget(sessionId);
    const existed = await deleteSession(this.options.db, sessionId);
    await removeSessionFolder(this.options.filesDirectory, sessionId);
    await this.options.images.removeSession(sessionId);
    // Told to those who could see it, judged from the session as it was: it cannot be looked up any more.
    if (existed && session) this.options.events.publish({ type: 'sessions_changed', session_id: sessionId, change: 'deleted' }, (person) => this.visibleTo(person, session));
    return existed;
  }

  async deleteAllOf(personId: string): Promise<void> {
    for (const sessionId of await listSessionIdsOf(this.options.db, personId)) await this.delete(sessionId);
  }

  async attachFiles(sessionId: string, files: readonly IncomingFile[]): Promise<SavedFile[]> {
    const saved: SavedFile[] = [];
    for (const file of files) {
      const staged = await this.stageFile(sessionId, Readable.from([file.data]));
      saved.push(await staged.commit(file.name));
    }
    return saved;
  }

  async stageFile(sessionId: string, stream: Readable): Promise<StagedUpload> {
    return stageUpload(await sessionFolder(this.options.filesDirectory, sessionId), stream);
  }

  async files(sessionId: string): Promise<FolderFile[]> {
    return listFolderFiles(await sessionFolder(this.options.filesDirectory, sessionId));
  }

  async openFile(sessionId: string, name: string): Promise<OpenedFolderFile | undefined> {
    return openFolderFile(await sessionFolder(this.options.filesDirectory, sessionId), name);
  }

  async deleteFile(sessionId: string, name: string): Promise<boolean> {
    return removeFolderFile(await sessionFolder(this.options.filesDirectory, sessionId), name);
  }

  send(sessionId: string, input: UserInput, by?: string): SendResult {
    return this.runs.send(sessionId, input, by);
  }

  async sendWhenIdle(sessionId: string, input: UserInput, by?: string): Promise<TurnOutcome> {
    for (;;) {
      const sent = this.runs.send(sessionId, input, by);
      if (sent.ok) return sent.outcome;
      await this.runs.whenIdle(sessionId);
      // The turn's promise may settle a moment before its run is released.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  regenerate(sessionId: string, by?: string): SendResult {
    return this.runs.regenerate(sessionId, by);
  }

  edit(sessionId: string, messageId: number, content: string, by?: string): SendResult {
    return this.runs.edit(sessionId, messageId, content, by);
  }

  stop(sessionId: string): boolean {
    return this.runs.stop(sessionId);
  }

  whenIdle(sessionId: string): Promise<void> {
    return this.runs.whenIdle(sessionId);
  }

  isRunning(sessionId: string): boolean {
    return this.runs.isRunning(sessionId);
  }

  follow(sessionId: string, listener: EventListener): () => void {
    return this.runs.subscribe(sessionId, listener);
  }

  async decide(sessionId: string, callId: string, decision: Decision): Promise<DecidedApproval> {
    const outcome = this.options.approvals.decide(sessionId, callId, decision);
    if (outcome.decided) return { ok: true };
    // Someone who may neither decide the call nor see its session learns nothing of either (404, as for a missing session).
    const session = await this.find(sessionId);
    if (!session || !this.visibleTo(decision.decider, session)) return this.notFound(sessionId);
    if (outcome.reason === 'not_found') return refusal('approval_not_found', `No call ${callId} is waiting for a decision in session ${sessionId}.`);
    const names = outcome.deciders.map((person) => person.name);
    return refusal('forbidden', `You may not decide this call; ${names.length === 0 ? 'the owner' : names.join(' or ')} may.`);
  }

  mayDecide(sessionId: string, callId: string, person: Person): boolean | undefined {
    return this.options.approvals.mayDecide(sessionId, callId, person);
  }

  waitingApprovals(sessionId: string, person: Person): PendingApprovalView[] {
    return this.options.approvals.pendingFor(person).filter((waiting) => waiting.session_id === sessionId);
  }

  untilApprovalWaits(sessionId: string, person: Person, signal: AbortSignal): Promise<PendingApprovalView[]> {
    if (!this.watchingApprovals) {
      this.watchingApprovals = true;
      this.options.approvals.on('changed', () => {
        for (const check of [...this.approvalWatchers]) check();
      });
    }
    return new Promise((resolve) => {
      const check = () => {
        const waiting = this.waitingApprovals(sessionId, person);
        if (waiting.length === 0) return;
        giveUp();
        resolve(waiting);
      };
      const giveUp = () => {
        this.approvalWatchers.delete(check);
        signal.removeEventListener('abort', giveUp);
      };
      if (signal.aborted) return;
      this.approvalWatchers.add(check);
      signal.addEventListener('abort', giveUp, { once: true });
      check();
    });
  }

  async personOf(sessionId: string): Promise<Person | undefined> {
    const session = await this.find(sessionId);
    return session && this.options.household.person(session.personId);
  }

  announce(sessionId: string, change: 'created' | 'updated' | 'deleted'): void {
    this.options.events.publish({ type: 'sessions_changed', session_id: sessionId, change });
  }

  private notFound(sessionId: string) {
    return refusal('session_not_found', `No session with id ${sessionId}.`);
  }

  private profileForbidden(person: Person, profileId: string) {
    const roles = this.options.profiles.get(profileId)?.people ?? defaultProfileAccess.people;
    const allowed = ['owner', ...roles.filter((role) => role !== 'owner')].join(', ');
    return refusal('forbidden', `${person.name} (${person.role}) may not use the profile "${profileId}": it is for ${allowed}.`);
  }

  private unknownProfile(profileId: string) {
    return refusal('unknown_profile', `Unknown profile "${profileId}". Known profiles: ${this.knownProfiles().join(', ')}.`);
  }
}
