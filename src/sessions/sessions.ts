import type { Readable } from 'node:stream';
import type { SendResult } from '../agent/agent-runs.ts';
import type { Decision } from '../agent/approval-gate.ts';
import type { EventListener } from '../agent/run-hub.ts';
import type { TurnOutcome, UserInput } from '../agent/turn.ts';
import type { Audience, PendingApprovalView } from '../events/hearth-events.ts';
import type { Refusal } from '../failure.ts';
import type { Person } from '../people/person.ts';
import type { Message } from '../store/message.ts';
import type { SavedFile, StagedUpload } from '../store/session-files.ts';
import type { FolderFile, OpenedFolderFile } from '../store/session-folder-files.ts';
import type { Session } from '../store/sessions-repository.ts';

export type { FolderFile, Message, OpenedFolderFile, SavedFile, SendResult, Session, StagedUpload };

/** A new session is announced to open pages (sessions_changed `created`) by its first stored message, whoever made it. */
export interface NewSession {
  // `personId` (below) is whose it is: refused (`forbidden`) when their role may not use the profile.
  /** When absent: the default profile, or the first the person may use when the default is not theirs. */
  profileId?: string;
  /** A title the person (or a schedule's name) gave: it is kept, never replaced by the one made from the first message. */
  title?: string;
  /** The channel the session comes from (`telegram`): the page shows its mark. */
  origin?: string;
  /** Whose it is; the first owner's when not named (a one-person Hearth). */
  personId?: string;
}

/** What the person may change of a session (PATCH /sessions/:id); absent fields stay as they are. */
export interface SessionUpdate {
  title?: string;
  pinned?: boolean;
  /** The model this session's turns use; null returns to the profile's. */
  model?: string | null;
  /** Switched as `switchProfile(id, profileId, 'user')` does. */
  profileId?: string;
  /** Shared with the household (everyone whose role may use its profile sees and uses it), or private again. */
  shared?: boolean;
}

/** Who moved a session to another profile: the person (page, REST, a channel) or the model (`switch_profile`). */
export type SwitchedBy = 'user' | 'agent';

/** `forbidden`: the session's person's role may not use that profile (the message says who may). */
export type SessionRefusal = Refusal<'session_not_found' | 'unknown_profile' | 'forbidden'>;
export type SessionResult = { ok: true; session: Session } | ({ ok: false } & SessionRefusal);
/** `switched` is false when the session had that profile already (nothing was written). */
export type SwitchedProfile = { ok: true; session: Session; switched: boolean } | ({ ok: false } & SessionRefusal);
/**
 * A decision's answer: taken; the session is not one the decider may see and no call of it is
 * theirs to decide (`session_not_found`, as for a missing one); nothing waits under that id; or
 * they see the session but may not decide the call (`forbidden`, the message says who may).
 */
export type DecidedApproval = { ok: true } | ({ ok: false } & Refusal<'session_not_found' | 'approval_not_found' | 'forbidden'>);
export type CreatedSession = { ok: true; session: Session } | ({ ok: false } & Refusal<'unknown_profile' | 'forbidden'>);

/** A file handed to a session: a channel's download or an upload's bytes. */
export interface IncomingFile {
  /** The name it came with; the saved file gets a safe, unused one from it. */
  name: string;
  data: Buffer;
}

/** Which of a session's two message lists: what the page shows, or what the model is sent. */
export type MessageList = 'display' | 'context';

/**
 * Sessions as everyone who drives them sees them — routes, the page's socket, channels, the
 * scheduler and heartbeats: the whole life of a session (create or find, also by an outside key
 * such as `telegram:<chat id>`; list, read, change, delete; files; profile) and its runs (send,
 * stop, wait, follow, decide its waiting approvals). `SessionService` is the implementation.
 */
export interface Sessions {
  readonly defaultProfileId: string;
  hasProfile(profileId: string): boolean;
  /** The profile ids a session may take, for messages that name them. */
  knownProfiles(): string[];
  /** The profile's display name, or its id when it has none. */
  profileName(profileId: string): string;

  /** Any session, whoever's: for the app's own work (runs, schedules, channels' keys), never a person's request. */
  find(sessionId: string): Promise<Session | undefined>;
  /** Every session, whoever's. */
  list(): Promise<Session[]>;
  /**
   * The session when `person` may see and use it: their own, or one shared with the household under
   * a profile their role may use. Someone else's is undefined, exactly as a missing one.
   */
  findFor(person: Person, sessionId: string): Promise<Session | undefined>;
  /** The page's list for `person`: their own sessions and the shared ones they may use, ordered as `list`. */
  listFor(person: Person): Promise<Session[]>;
  /** The rule `findFor` and `listFor` apply (docs/people.md). */
  visibleTo(person: Person, session: Session): boolean;
  /** Whether the person's role may use the profile (an unknown one by the default rule). */
  mayUseProfile(person: Person, profileId: string): boolean;
  /** The profile a session of theirs gets when nobody names one: the default, else the first they may use (a guest's kiosk). */
  defaultProfileFor(person: Person): string;
  /** The events-socket audience of news about the session: those who may see it now. */
  seenBy(sessionId: string): Audience;
  /** The most recently active sessions with a message, newest first; only a channel's (`origin: 'telegram'`) when given. */
  recent(options?: { origin?: string; limit?: number }): Promise<Session[]>;
  /** A session's messages, images as the URL a client loads each from. */
  messages(sessionId: string, list: MessageList): Promise<Message[]>;
  /** The file and media type of one of a session's stored images; undefined for a name that is not one. */
  image(sessionId: string, name: string): { file: string; mediaType: string } | undefined;
  /** The id of the session's last displayed message (0 when it has none), to drop what follows it later. */
  lastDisplayMessageId(sessionId: string): Promise<number>;
  /** Drops the displayed messages after `messageId` (a quiet heartbeat answer); the context keeps them. */
  dropDisplayMessagesAfter(sessionId: string, messageId: number): Promise<void>;

  create(request?: NewSession): Promise<CreatedSession>;
  /** The session the key leads to, or undefined before it was bound or once that session is deleted. */
  findByKey(key: string): Promise<Session | undefined>;
  /** Points the key at a session; the next findOrCreate finds that one. */
  bindKey(key: string, sessionId: string): Promise<void>;
  /** The key leads nowhere any more; the next findOrCreate makes a new session. */
  unbindKey(key: string): Promise<void>;
  /** Every key starting with `prefix` and the session it leads to. */
  keyedSessions(prefix: string): Promise<Map<string, string>>;
  /** The session the key leads to; made (and bound to the key) when there is none, or when it was deleted. */
  findOrCreate(key: string, request?: NewSession): Promise<CreatedSession>;
  /** Changes title, pin, model and profile, announced once; nothing is changed when a field is refused. */
  update(sessionId: string, changes: SessionUpdate): Promise<SessionResult>;
  /** Gives the session another profile: one marker in its transcript, one `profile_switched` to whoever watches it. */
  switchProfile(sessionId: string, profileId: string, by: SwitchedBy): Promise<SwitchedProfile>;
  /** Stops its run, then removes its rows, files and images; false when there was no such session. */
  delete(sessionId: string): Promise<boolean>;
  /** Deletes every session a person owns, as `delete` does each (a person removed with their sessions). */
  deleteAllOf(personId: string): Promise<void>;
  /** Saves files into the session's folder under safe, unused names: what the model is told they are called and where. */
  attachFiles(sessionId: string, files: readonly IncomingFile[]): Promise<SavedFile[]>;
  /** Streams one upload into the session's folder, not yet named: the caller commits or discards it. */
  stageFile(sessionId: string, stream: Readable): Promise<StagedUpload>;
  /** The files in the session's folder, newest first: uploads and what its tools wrote (the page's Files panel). */
  files(sessionId: string): Promise<FolderFile[]>;
  /** One of them opened for reading; undefined for a name that is none (a folder, a link, a path leading out). */
  openFile(sessionId: string, name: string): Promise<OpenedFolderFile | undefined>;
  /** Removes one of them; false for a name that is none. */
  deleteFile(sessionId: string, name: string): Promise<boolean>;

  /** Starts a turn in the background; `session_busy` while the session has one. `unattended` lets a person's model calls go first. */
  /** `by`: the person who asked for the turn (someone the session is shared with, perhaps): the one its calls ask as. */
  send(sessionId: string, input: UserInput, by?: string): SendResult;
  /** Sends once the session's current turn (if any) has ended, and settles with the outcome. */
  sendWhenIdle(sessionId: string, input: UserInput, by?: string): Promise<TurnOutcome>;
  regenerate(sessionId: string, by?: string): SendResult;
  edit(sessionId: string, messageId: number, content: string, by?: string): SendResult;
  /** Stops the session's run; false when it had none. */
  stop(sessionId: string): boolean;
  whenIdle(sessionId: string): Promise<void>;
  isRunning(sessionId: string): boolean;
  /** Every event of the session's runs, from the current run's start on; returns the unfollow. */
  follow(sessionId: string, listener: EventListener): () => void;
  /** A person's decision on a waiting call, and where it was made (`via`: page, rest, a channel's id); taken only where `mayDecide` lets them. */
  decide(sessionId: string, callId: string, decision: Decision): Promise<DecidedApproval>;
  /** The session's calls waiting for a person, as `person` is told of them: those they asked or may decide. */
  waitingApprovals(sessionId: string, person: Person): PendingApprovalView[];
  /** Settles with `waitingApprovals` once one waits (at once when one does); never, once `signal` gives up. */
  untilApprovalWaits(sessionId: string, person: Person, signal: AbortSignal): Promise<PendingApprovalView[]>;
  /** Whether the person may decide the waiting call; undefined when none waits under that id. */
  mayDecide(sessionId: string, callId: string, person: Person): boolean | undefined;
  /** The person whose session it is; undefined for a missing session or one whose person left. */
  personOf(sessionId: string): Promise<Person | undefined>;
  /** Tells every open page that the session list changed. */
  announce(sessionId: string, change: 'created' | 'updated' | 'deleted'): void;
}
