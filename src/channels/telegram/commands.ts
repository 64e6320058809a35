import { Composer } from 'grammy';
import { chatPersonOf, type TelegramContext } from './chat-people.ts';
import { sessionKeyboard, type SessionListings } from './session-buttons.ts';
import type { TelegramSessions } from './telegram-port.ts';

/** The commands as Telegram's menu lists them (`setMyCommands`). */
export const telegramCommands = [
  { command: 'new', description: 'Start a new session, optionally with a profile: /new [profile]' },
  { command: 'stop', description: 'Stop the answer being written' },
  { command: 'profile', description: 'Show or switch the profile: /profile [id]' },
  { command: 'sessions', description: 'Recent sessions, to continue one' },
  { command: 'help', description: 'What this bot does' },
];

const helpText = [
  '<b>Hearth</b> answers here as it does in the page; the page shows this chat as a session too.',
  '/new [profile] — a new session',
  '/stop — stop the answer being written',
  '/profile [id] — show or switch the profile',
  '/sessions — continue a recent session',
  'Photos reach the assistant as images; documents are kept in the session\'s files.',
  'Voice notes are heard and answered aloud too, once Hearth has speech set up (STT_BACKEND, TTS_BACKEND).',
].join('\n');

export interface CommandsOptions {
  sessions: Pick<TelegramSessions, 'newSession' | 'existingSessionForChat' | 'stop' | 'sessionForChat' | 'profile' | 'profiles' | 'recentSessions'>;
  /** Mirrors a session the chat now uses into it. */
  follow: (sessionId: string, chatId: number) => void;
  /** Where `/sessions` records what it offered, for its buttons to check. */
  listings: SessionListings;
}

/** /start and /help, /new [profile], /stop, /profile [id], /sessions, as the chat's person; none of them reaches the model. */
export function commands({ sessions, follow, listings }: CommandsOptions): Composer<TelegramContext> {
  const composer = new Composer<TelegramContext>();
  // Telegram sends /start when a person first opens the bot: it is answered as /help.
  composer.command(['start', 'help'], (context) => context.reply(helpText, { parse_mode: 'HTML' }));
  composer.command('new', async (context) => {
    const created = await sessions.newSession(context.chat.id, chatPersonOf(context), context.match.trim() || undefined);
    await context.reply(created.ok ? `A new session has begun with ${created.profile.name} (${created.profile.id}).` : created.reason);
    if (created.ok) follow(created.sessionId, context.chat.id);
  });
  composer.command('stop', async (context) => {
    const sessionId = await sessions.existingSessionForChat(context.chat.id, chatPersonOf(context));
    if (sessionId !== undefined) await sessions.stop(sessionId);
  });
  composer.command('profile', async (context) => {
    const chat = chatPersonOf(context);
    const sessionId = await sessions.sessionForChat(context.chat.id, chat);
    const requested = context.match.trim();
    const result = await sessions.profile(sessionId, chat.person, requested || undefined);
    if (!result.ok) return void (await context.reply(result.reason));
    if (requested) return void (await context.reply(`Profile: ${result.name}`));
    const others = (await sessions.profiles(chat.person)).filter((profile) => profile.id !== result.id);
    const choices = others.map((profile) => `• ${profile.name} (/profile ${profile.id})`);
    await context.reply([`Profile: ${result.name} (${result.id}) ✓`, ...(choices.length > 0 ? ['Others:', ...choices] : ['No other profile is yours to switch to.'])].join('\n'));
  });
  composer.command('sessions', async (context) => {
    const recent = await sessions.recentSessions(context.chat.id, chatPersonOf(context));
    if (recent.length === 0) return void (await context.reply('No sessions yet.'));
    const inline_keyboard = sessionKeyboard(recent.slice(0, 10));
    const listing = await context.reply('Recent sessions:', { reply_markup: { inline_keyboard } });
    listings.listed(listing.chat.id, listing.message_id, inline_keyboard);
  });
  return composer;
}
