import type { Db } from '../store/database.ts';
import type { NewMessage } from '../store/message.ts';
import type { MessageImages } from '../store/message-images.ts';
import { appendMessage, appendMessages, countMessages, listMessages } from '../store/messages-repository.ts';
import { appendDraft, beginRun, clearDraft, endRun } from '../store/runs-repository.ts';
import { findSession, setTitleIfUntitled, updateSession, type Session } from '../store/sessions-repository.ts';
import type { Conversation } from './agent-loop.ts';
import { toChatMessage } from './chat-message.ts';
import type { DraftPiece } from './draft-checkpoint.ts';
import { applyRewind, planRewind, type RewindRefusal, type RewindRequest } from './rewind.ts';

/** What a turn reads and writes of its stored session (turn.ts); `storedTurns` keeps it in SQLite. */
export interface TurnStore {
  /** The session's row; undefined once it was deleted. */
  findSession(sessionId: string): Promise<Session | undefined>;
  /** Keeps a message's images as files; answers the references the row stores. */
  saveImages(sessionId: string, images: readonly string[]): Promise<string[]>;
  /** Stores the person's message and marks the run begun, in one transaction; `first` when the session had no message before. */
  beginWithMessage(sessionId: string, message: NewMessage): Promise<{ first: boolean }>;
  /** Cuts the branch a regenerate or edit asks for and marks the run begun, in one transaction; nothing changes when it is refused. */
  beginBranch(sessionId: string, request: RewindRequest): Promise<{ ok: true; userMessage: NewMessage } | { ok: false; refusal: RewindRefusal }>;
  /** Marks the run ended: a run left begun is one a crash cut off (recover-runs.ts). */
  endRun(sessionId: string): Promise<void>;
  setTitleIfUntitled(sessionId: string, title: string): Promise<void>;
  setContextTokens(sessionId: string, contextTokens: number): Promise<void>;
  /** The session's model context, read once per turn and kept in step with what the turn appends. */
  conversation(sessionId: string): Promise<Conversation>;
  /** Checkpoints a piece of the answer streaming now, so a crash keeps it. */
  appendDraft(sessionId: string, piece: DraftPiece): Promise<void>;
}

/** The turn's store in the database, with message images as files. */
export function storedTurns(db: Db, images: MessageImages): TurnStore {
  return {
    findSession: (sessionId) => findSession(db, sessionId),
    saveImages: (sessionId, list) => images.save(sessionId, list),
    beginWithMessage: (sessionId, message) =>
      db.transaction().execute(async (transaction) => {
        const earlier = await countMessages(transaction, sessionId, 'display');
        await appendMessage(transaction, sessionId, message);
        await beginRun(transaction, sessionId);
        return { first: earlier === 0 };
      }),
    beginBranch: async (sessionId, request) => {
      const planned = await planRewind(db, sessionId, request);
      if (!planned.ok) return planned;
      const userMessage = await db.transaction().execute(async (transaction) => {
        const message = await applyRewind(transaction, sessionId, planned.plan);
        await beginRun(transaction, sessionId);
        return message;
      });
      return { ok: true, userMessage };
    },
    endRun: (sessionId) => endRun(db, sessionId),
    setTitleIfUntitled: (sessionId, title) => setTitleIfUntitled(db, sessionId, title),
    setContextTokens: async (sessionId, contextTokens) => void (await updateSession(db, sessionId, { contextTokens })),
    conversation: (sessionId) => storedConversation(db, images, sessionId),
    appendDraft: (sessionId, piece) => appendDraft(db, sessionId, piece),
  };
}

async function storedConversation(db: Db, images: MessageImages, sessionId: string): Promise<Conversation> {
  const stored = await listMessages(db, sessionId, 'context');
  const history = await Promise.all(
    stored.map(async (message) => toChatMessage(message.images ? { ...message, images: await images.load(sessionId, message.images) } : message)),
  );
  return {
    load: async () => history,
    append: async (messages) => {
      if (messages.some((message) => message.role === 'assistant')) {
        // The round's answer is stored whole here, so its checkpointed pieces go in the same transaction.
        await db.transaction().execute(async (transaction) => {
          await appendMessages(transaction, sessionId, messages);
          await clearDraft(transaction, sessionId);
        });
      } else await appendMessages(db, sessionId, messages);
      history.push(...messages.map(toChatMessage));
    },
    // Images a tool loaded: kept as files, referenced from the row; the model gets them from memory this turn.
    appendToContext: async (messages) => {
      const withFiles = await Promise.all(
        messages.map(async (message) => (message.images ? { ...message, images: await images.save(sessionId, message.images) } : message)),
      );
      await appendMessages(db, sessionId, withFiles, ['context']);
      history.push(...messages.map(toChatMessage));
    },
  };
}
