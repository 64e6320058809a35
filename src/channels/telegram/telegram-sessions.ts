import type { Sessions } from '../../sessions/sessions.ts';
import type { ReceivedFile, TelegramSessions } from './telegram-port.ts';

/** The key that leads from a private chat to its session, remembered across restarts. */
export function chatSessionKey(chatId: number): string {
  return `telegram:${chatId}`;
}

/**
 * The key that marks a session as one of the chat's own (made or continued there): `/sessions`
 * lists, and a chat may continue, only its own sessions, never another allowed person's.
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
 * (found by its key, made with the Telegram mark when there is none), photos sent as images,
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
  const sessionForChat = async (chatId: number): Promise<string> => {
    const existing = await service.findByKey(chatSessionKey(chatId));
    if (existing) return existing.id;
    const found = await service.findOrCreate(chatSessionKey(chatId), { origin: 'telegram' });
    if (!found.ok) throw new Error(found.message);
    await markOwned(chatId, found.session.id);
    return found.session.id;
  };
  return {
    sessionForChat,
    async existingSessionForChat(chatId) {
      return (await service.findByKey(chatSessionKey(chatId)))?.id;
    },
    async newSession(chatId, profileId) {
      const created = await service.create({ origin: 'telegram', ...(profileId !== undefined && { profileId }) });
      if (!created.ok) return { ok: false, reason: created.message };
      await moveChatTo(chatId, created.session.id);
      return { ok: true, sessionId: created.session.id };
    },
    async send(sessionId, text, files, forwarded) {
      const images = files.filter((file) => file.kind === 'photo').map((file) => `data:${file.mimeType};base64,${file.data.toString('base64')}`);
      const saved = (await service.attachFiles(sessionId, files.filter((file) => file.kind !== 'photo'))).map(({ name, path }) => ({ name, path }));
      const content = text !== '' ? text : files.length > 0 ? describeFiles(files) : '';
      const sent = service.send(sessionId, {
        content,
        ...(images.length > 0 && { images }),
        ...(saved.length > 0 && { files: saved }),
        ...(forwarded !== undefined && { forwardedFrom: forwarded }),
      });
      return sent.ok ? { ok: true } : { ok: false, reason: busyReason };
    },
    async stop(sessionId) {
      service.stop(sessionId);
    },
    follow: (sessionId, listener) => service.follow(sessionId, listener),
    async decide(sessionId, callId, decision, remember) {
      // A chat decides as the person whose session it reaches (the gate still asks mayDecide).
      const decider = await service.personOf(sessionId);
      if (!decider) return 'not_found';
      return (await service.decide(sessionId, callId, { decision, remember, decider, via: 'telegram' })).ok ? 'decided' : 'not_found';
    },
    async profiles() {
      return service.knownProfiles().map((id) => ({ id, name: service.profileName(id) }));
    },
    async profile(sessionId, id) {
      const session = await service.find(sessionId);
      if (!session) return { ok: false, reason: 'This chat has no session yet.' };
      if (id === undefined) return { ok: true, id: session.profileId, name: service.profileName(session.profileId) };
      const switched = await service.switchProfile(sessionId, id, 'user');
      if (!switched.ok) return { ok: false, reason: switched.message };
      return { ok: true, id, name: service.profileName(id) };
    },
    async recentSessions(chatId) {
      const current = (await service.findByKey(chatSessionKey(chatId)))?.id;
      const own: Array<{ id: string; title: string }> = [];
      for (const session of await service.recent({ origin: 'telegram', limit: recentCandidates })) {
        if (own.length === 10) break;
        if (session.id === current || (await markedOwn(chatId, session.id))) own.push({ id: session.id, title: session.title });
      }
      return own;
    },
    async switchSession(chatId, sessionId) {
      if (!(await service.find(sessionId)) || !(await owns(chatId, sessionId))) return { ok: false, reason: 'That session is gone.' };
      await moveChatTo(chatId, sessionId);
      return { ok: true };
    },
  };
}

function describeFiles(files: ReceivedFile[]): string {
  const kinds = files.map((file) => (file.kind === 'photo' ? 'a photo' : file.kind === 'voice' ? 'a voice note' : `the document ${file.name}`));
  return `(sent ${kinds.join(', ')})`;
}
