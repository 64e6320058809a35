import type { Session, Sessions } from '../../sessions/sessions.ts';
import type { ChatPerson, ReceivedFile, TelegramSessions } from './telegram-port.ts';

/** The key that leads from a private chat to its session, remembered across restarts. */
export function chatSessionKey(chatId: number): string {
  return `telegram:${chatId}`;
}

/**
 * The key that marks a session as one of the chat's own (made or continued there). In a household
 * of one, where every allowed chat acts as the owner unlinked, `/sessions` lists, and a chat may
 * continue, only its own sessions, never another allowed chat's; a linked chat's are its person's.
 */
function chatOwnedKey(chatId: number, sessionId: string): string {
  return `telegram-chat:${chatId}:${sessionId}`;
}

// Telegram sessions looked through for a chat's own ten: the chats share one origin. About 6 ms
// when the chat's own sessions are behind 200 of another chat's.
const recentCandidates = 1_000;

const busyReason = 'Still answering your last message: wait for it, or /stop it.';

/**
 * What the Telegram channel needs of sessions, on Hearth's session service: one session per chat
 * (found by its key, made as the chat's person's with the Telegram mark when there is none), photos sent as images,
 * documents and voice notes saved into the session's files folder and named to the model.
 */
export function sessionServiceSessions(service: Sessions): TelegramSessions {
  const markOwned = (chatId: number, sessionId: string) => service.bindKey(chatOwnedKey(chatId, sessionId), sessionId);
  const markedOwn = async (chatId: number, sessionId: string): Promise<boolean> => (await service.findByKey(chatOwnedKey(chatId, sessionId)))?.id === sessionId;
  // The chat's current session is its own even unmarked: bound before Hearth marked them.
  const owns = async (chatId: number, sessionId: string): Promise<boolean> =>
    (await service.findByKey(chatSessionKey(chatId)))?.id === sessionId || (await markedOwn(chatId, sessionId));
  const moveChatTo = async (chatId: number, sessionId: string): Promise<void> => {
    // The session left behind stays the chat's, also one bound before Hearth marked them.
    const previous = await service.findByKey(chatSessionKey(chatId));
    if (previous) await markOwned(chatId, previous.id);
    await markOwned(chatId, sessionId);
    await service.bindKey(chatSessionKey(chatId), sessionId);
  };
  /** The chat's current session, when its person may see it. */
  const currentSession = async (chatId: number, chat: ChatPerson): Promise<Session | undefined> => {
    const current = await service.findByKey(chatSessionKey(chatId));
    return current && service.visibleTo(chat.person, current) ? current : undefined;
  };
  /** Whether `/sessions` may offer the session to the chat (and so the chat may continue it). */
  const offerable = async (chatId: number, chat: ChatPerson, session: Session): Promise<boolean> =>
    service.visibleTo(chat.person, session) && (chat.linked || (await owns(chatId, session.id)));
  const sessionForChat = async (chatId: number, chat: ChatPerson): Promise<string> => {
    const current = await currentSession(chatId, chat);
    if (current) return current.id;
    const created = await service.create({ origin: 'telegram', personId: chat.person.id });
    if (!created.ok) throw new Error(created.message);
    await moveChatTo(chatId, created.session.id);
    return created.session.id;
  };
  return {
    sessionForChat,
    async existingSessionForChat(chatId, chat) {
      return (await currentSession(chatId, chat))?.id;
    },
    async newSession(chatId, chat, profileId) {
      const created = await service.create({ origin: 'telegram', personId: chat.person.id, ...(profileId !== undefined && { profileId }) });
      if (!created.ok) return { ok: false, reason: created.message };
      await moveChatTo(chatId, created.session.id);
      const { profileId: id } = created.session;
      return { ok: true, sessionId: created.session.id, profile: { id, name: service.profileName(id) } };
    },
    async send(sessionId, text, files, forwarded, by) {
      const images = files.filter((file) => file.kind === 'photo').map((file) => `data:${file.mimeType};base64,${file.data.toString('base64')}`);
      const saved = (await service.attachFiles(sessionId, files.filter((file) => file.kind !== 'photo'))).map(({ name, path }) => ({ name, path }));
      const content = text !== '' ? text : files.length > 0 ? describeFiles(files) : '';
      const sent = service.send(sessionId, {
        content,
        ...(images.length > 0 && { images }),
        ...(saved.length > 0 && { files: saved }),
        ...(forwarded !== undefined && { forwardedFrom: forwarded }),
      }, by);
      return sent.ok ? { ok: true } : { ok: false, reason: busyReason };
    },
    async stop(sessionId) {
      service.stop(sessionId);
    },
    follow: (sessionId, listener) => service.follow(sessionId, listener),
    async decide(sessionId, callId, decision, remember, decider) {
      // The gate asks mayDecide of the person who pressed, as it does of every decision.
      const decided = await service.decide(sessionId, callId, { decision, remember, decider, via: 'telegram' });
      if (decided.ok) return 'decided';
      return decided.code === 'forbidden' ? 'forbidden' : 'not_found';
    },
    async profiles(person) {
      return service
        .knownProfiles()
        .filter((id) => service.mayUseProfile(person, id))
        .map((id) => ({ id, name: service.profileName(id) }));
    },
    async profile(sessionId, person, id) {
      const session = await service.findFor(person, sessionId);
      if (!session) return { ok: false, reason: 'This chat has no session yet.' };
      if (id === undefined) return { ok: true, id: session.profileId, name: service.profileName(session.profileId) };
      if (service.hasProfile(id) && !service.mayUseProfile(person, id)) return { ok: false, reason: `${person.name} (${person.role}) may not use the profile "${id}": /profile lists those you may.` };
      const switched = await service.switchProfile(sessionId, id, 'user');
      if (!switched.ok) return { ok: false, reason: switched.message };
      return { ok: true, id, name: service.profileName(id) };
    },
    async recentSessions(chatId, chat) {
      const offered: Array<{ id: string; title: string }> = [];
      const candidates = await service.recent({ ...(!chat.linked && { origin: 'telegram' }), limit: recentCandidates });
      for (const session of candidates) {
        if (offered.length === 10) break;
        if (await offerable(chatId, chat, session)) offered.push({ id: session.id, title: session.title });
      }
      return offered;
    },
    async switchSession(chatId, chat, sessionId) {
      const session = await service.find(sessionId);
      if (!session || !(await offerable(chatId, chat, session))) return { ok: false, reason: 'That session is gone.' };
      await moveChatTo(chatId, sessionId);
      return { ok: true };
    },
  };
}

function describeFiles(files: ReceivedFile[]): string {
  const kinds = files.map((file) => (file.kind === 'photo' ? 'a photo' : file.kind === 'voice' ? 'a voice note' : `the document ${file.name}`));
  return `(sent ${kinds.join(', ')})`;
}
