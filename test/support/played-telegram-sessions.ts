import type { ChatPerson, ReceivedFile, TelegramSessions } from '../../src/channels/telegram/telegram-port.ts';
import type { Person } from '../../src/people/person.ts';
import type { AgentEvent } from '../../src/protocol/events.ts';

/** What the Telegram channel needs of sessions, played by a test: it records what it is asked and emits the events the test gives it. */
export class PlayedSessions implements TelegramSessions {
  readonly sent: Array<{ sessionId: string; text: string; files: ReceivedFile[]; forwarded?: string }> = [];
  readonly stopped: string[] = [];
  readonly decisions: Array<{ sessionId: string; callId: string; decision: string; remember: string; decider: string }> = [];
  /** Calls the gate would refuse to these people (by id), as `mayDecide` does. */
  readonly mayNotDecide = new Set<string>();
  /** Who each call was asked as (the person the chat acted as), in order. */
  readonly askedAs: string[] = [];
  readonly listeners = new Map<string, Set<(event: AgentEvent) => void>>();
  readonly waiting = new Set<string>();
  readonly switched: Array<{ chatId: number; sessionId: string }> = [];
  /** What /sessions lists, by chat. */
  readonly recent = new Map<number, Array<{ id: string; title: string }>>();
  /** Profiles /new and /profile refuse. */
  readonly unknownProfiles = new Set<string>();
  /** Each session's profile, by session id; `secretary` when unset. */
  readonly profileOf = new Map<string, string>();
  chatSessions = new Map<number, string>();

  async sessionForChat(chatId: number, chat: ChatPerson) {
    this.askedAs.push(chat.person.name);
    if (!this.chatSessions.has(chatId)) this.chatSessions.set(chatId, `session-${chatId}`);
    return this.chatSessions.get(chatId)!;
  }
  async existingSessionForChat(chatId: number, _chat: ChatPerson) {
    return this.chatSessions.get(chatId);
  }
  async newSession(chatId: number, _chat: ChatPerson, profileId?: string) {
    if (profileId !== undefined && this.unknownProfiles.has(profileId)) return { ok: false as const, reason: `Unknown profile "${profileId}".` };
    const sessionId = `session-${chatId}-${profileId ?? 'default'}`;
    this.chatSessions.set(chatId, sessionId);
    const id = profileId ?? 'secretary';
    return { ok: true as const, sessionId, profile: { id, name: id === 'guarded' ? 'Guarded' : 'Secretary' } };
  }
  async send(sessionId: string, text: string, files: ReceivedFile[], forwarded?: string) {
    this.sent.push({ sessionId, text, files, ...(forwarded !== undefined && { forwarded }) });
    return { ok: true as const };
  }
  async stop(sessionId: string) {
    this.stopped.push(sessionId);
  }
  follow(sessionId: string, listener: (event: AgentEvent) => void) {
    const set = this.listeners.get(sessionId) ?? new Set();
    set.add(listener);
    this.listeners.set(sessionId, set);
    return () => set.delete(listener);
  }
  async decide(sessionId: string, callId: string, decision: 'allow' | 'deny', remember: 'once' | 'session', decider: Person) {
    if (!this.waiting.has(callId)) return 'not_found' as const;
    if (this.mayNotDecide.has(decider.id)) return 'forbidden' as const;
    this.waiting.delete(callId);
    this.decisions.push({ sessionId, callId, decision, remember, decider: decider.name });
    return 'decided' as const;
  }
  async profiles(_person: Person) {
    return [{ id: 'secretary', name: 'Secretary' }, { id: 'guarded', name: 'Guarded' }];
  }
  async profile(sessionId: string, _person: Person, id?: string) {
    if (id !== undefined && this.unknownProfiles.has(id)) return { ok: false as const, reason: `Unknown profile "${id}".` };
    if (id !== undefined) this.profileOf.set(sessionId, id);
    const current = this.profileOf.get(sessionId) ?? 'secretary';
    return { ok: true as const, id: current, name: current === 'guarded' ? 'Guarded' : 'Secretary' };
  }
  async recentSessions(chatId: number, _chat: ChatPerson) {
    return this.recent.get(chatId) ?? [];
  }
  async switchSession(chatId: number, _chat: ChatPerson, sessionId: string) {
    this.switched.push({ chatId, sessionId });
    this.chatSessions.set(chatId, sessionId);
    return { ok: true as const };
  }
  emit(sessionId: string, event: AgentEvent): void {
    for (const listener of this.listeners.get(sessionId) ?? []) listener(event);
  }
}
