import { Composer, type Context } from 'grammy';
import type { ChannelPeople, LinkResult } from '../../household/channel-links.ts';
import type { ChatPerson } from './telegram-port.ts';

/** An update's context once the chat's person is known (`chatPeople` sets it before any other composer runs). */
export type TelegramContext = Context & { chatPerson?: ChatPerson };

/** The chat's person; only composers mounted after `chatPeople` ask, so its absence is a bug. */
export function chatPersonOf(context: TelegramContext): ChatPerson {
  if (!context.chatPerson) throw new Error('chatPeople must run before the composer that asks whose chat it is');
  return context.chatPerson;
}

export const howToLink = [
  'This chat is not linked to anyone in this Hearth yet.',
  'Get a link code in Hearth\'s page (or with <code>POST /me/telegram/link-code</code>) and send it here as <code>/start CODE</code>. A code works once, for ten minutes.',
].join('\n');

const linkRefusals: Record<Exclude<LinkResult, { ok: true }>['reason'], string> = {
  wrong: 'That code is not one Hearth gave, or it was used already: get a new one in the page and send /start with it.',
  expired: 'That code has expired (codes last ten minutes): get a new one in the page and send /start with it.',
  too_many: 'Too many wrong codes from this chat: wait ten minutes, then send /start with a new code from the page.',
};

/**
 * Whom each update is from (docs/people.md, *Telegram in a household*): `/start <code>` links the
 * chat to the person whose code it is; any other update goes on as the chat's person, and one from
 * a chat linked to nobody (in a household of more than one) is told how to link, and goes no further.
 * Mounted after `allowedUsersOnly`: only allowed users' private chats get here.
 */
export function chatPeople(people: ChannelPeople): Composer<TelegramContext> {
  const composer = new Composer<TelegramContext>();
  composer.command('start', async (context, next) => {
    const code = context.match.trim();
    if (code === '') return next();
    const linked = await people.link(String(context.from!.id), code);
    if (!linked.ok) return void (await context.reply(linkRefusals[linked.reason]));
    await context.reply(`Linked: this chat is ${linked.person.name}'s now, and reaches only their sessions. /help says what it can do.`);
  });
  composer.use(async (context, next) => {
    const chatPerson = await people.whoIs(String(context.from!.id));
    if (chatPerson) {
      context.chatPerson = chatPerson;
      return next();
    }
    if (context.callbackQuery) return void (await context.answerCallbackQuery({ text: 'Link this chat first: send /start with a code from Hearth\'s page.' }));
    await context.reply(howToLink, { parse_mode: 'HTML' });
  });
  return composer;
}
