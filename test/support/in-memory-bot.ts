import { Bot, type Middleware } from 'grammy';
import type { Update } from 'grammy/types';

/** A Bot API call the bot made, answered in memory. */
export interface MemoryCall {
  method: string;
  payload: Record<string, unknown>;
  /** The id a sent message was given. */
  messageId?: number;
}

export interface PersonOptions {
  firstName?: string;
  /** The chat the message is in: the person's private chat by default. */
  chat?: { id: number; type: 'private' | 'group' };
}

/**
 * A grammY bot whose Bot API calls never leave the process: each is recorded and answered as
 * Telegram would (sendMessage with a new message id). Updates are handed to it directly, so a
 * composer's behaviour is one `handle` away, without the stand-in's HTTP server or long polling.
 */
export class InMemoryBot {
  readonly bot = new Bot('4242:in-memory-token', {
    botInfo: {
      id: 4242, is_bot: true, first_name: 'Hearth', username: 'hearth_test_bot', can_join_groups: false,
      can_read_all_group_messages: false, supports_inline_queries: false, can_connect_to_business: false, has_main_web_app: false,
      has_topics_enabled: false, allows_users_to_create_topics: false, can_manage_bots: false, supports_join_request_queries: false,
    },
  });
  readonly calls: MemoryCall[] = [];
  /** Methods made to fail with this description, as Telegram's 400 would. */
  readonly failing = new Map<string, string>();
  private nextMessageId = 500;
  private nextUpdateId = 1;

  constructor(...middleware: Middleware[]) {
    this.bot.api.config.use(async (_previous, method, payload) => {
      const call: MemoryCall = { method, payload: payload as Record<string, unknown> };
      this.calls.push(call);
      const failure = this.failing.get(method);
      if (failure !== undefined) return { ok: false, error_code: 400, description: failure } as never;
      if (method !== 'sendMessage') return { ok: true, result: true } as never;
      const { chat_id: chatId, text } = payload as { chat_id: number; text: string };
      call.messageId = this.nextMessageId++;
      return { ok: true, result: { message_id: call.messageId, date: 0, chat: { id: chatId, type: 'private' }, text } } as never;
    });
    this.bot.use(...middleware);
  }

  /** The calls of one method, in order. */
  callsOf(method: string): Record<string, unknown>[] {
    return this.calls.filter((call) => call.method === method).map((call) => call.payload);
  }

  /** The id of the last message the bot sent to a chat. */
  lastMessageId(chatId: number): number {
    return this.calls.filter((call) => call.method === 'sendMessage' && call.payload.chat_id === chatId && call.messageId !== undefined).at(-1)!.messageId!;
  }

  /** The texts the bot sent to a chat, in order. */
  sentTo(chatId: number): string[] {
    return this.callsOf('sendMessage').filter((payload) => payload.chat_id === chatId).map((payload) => payload.text as string);
  }

  handle(update: Update): Promise<void> {
    return this.bot.handleUpdate(update);
  }

  /** A person's message: text (a command when it starts with `/`), or other content such as `{document}`. */
  message(userId: number, content: string | Record<string, unknown>, person: PersonOptions = {}): Update {
    const from = { id: userId, is_bot: false, first_name: person.firstName ?? 'Someone' };
    const body =
      typeof content !== 'string'
        ? content
        : { text: content, ...(content.startsWith('/') && { entities: [{ type: 'bot_command', offset: 0, length: content.split(' ')[0]!.length }] }) };
    const chat = person.chat ?? { id: userId, type: 'private' };
    return { update_id: this.nextUpdateId++, message: { message_id: this.nextMessageId++, date: 0, chat, from, ...body } } as Update;
  }

  /** A press, by `userId`, of a button carrying `data` on message `messageId` of chat `chatId`. */
  press(userId: number, chatId: number, messageId: number, data: string, firstName = 'Someone'): Update {
    const from = { id: userId, is_bot: false, first_name: firstName };
    const message = { message_id: messageId, date: 0, chat: { id: chatId, type: 'private' } };
    return { update_id: this.nextUpdateId++, callback_query: { id: `query-${this.nextUpdateId}`, from, chat_instance: 'x', message, data } } as Update;
  }

  /** What the bot answered a press with (its notice, or undefined when it answered with none). */
  answerTo(update: Update): { text?: string } | undefined {
    const id = (update.callback_query as { id: string }).id;
    return this.callsOf('answerCallbackQuery').find((payload) => payload.callback_query_id === id) as { text?: string } | undefined;
  }
}
