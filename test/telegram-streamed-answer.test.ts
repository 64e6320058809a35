import { Bot } from 'grammy';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { renderTelegramHtml } from '../src/channels/telegram/render-html.ts';
import { StreamedAnswer, type StreamedAnswerOptions } from '../src/channels/telegram/streamed-answer.ts';
import { startTelegramBotApi, type RecordedCall, type TelegramBotApi } from './support/telegram-bot-api.ts';
import { parseTelegramHtml } from './support/telegram-html.ts';
import { ManualClock } from './support/manual-clock.ts';
import { waitUntil } from './support/wait-until.ts';

const chatId = 5_550_001;
const intervalMs = 60;
let api: TelegramBotApi;
let bot: Bot;
const answers: StreamedAnswer[] = [];

beforeEach(async () => {
  api = await startTelegramBotApi();
  api.addChat(chatId);
  bot = new Bot(api.token, { client: { apiRoot: api.apiRoot } });
});

afterEach(async () => {
  for (const answer of answers.splice(0)) answer.close();
  await api.close();
});

function streamed(options: Partial<StreamedAnswerOptions> = {}): StreamedAnswer {
  const answer = new StreamedAnswer({ api: bot.api, chatId, intervalMs, ...options });
  answers.push(answer);
  return answer;
}

function messageCalls(): RecordedCall[] {
  return api.calls.filter((call) => ['sendMessage', 'editMessageText', 'deleteMessage'].includes(call.method));
}

/** Plays `text` as a model would, a few characters every `everyMs`. */
async function play(answer: StreamedAnswer, text: string, chunk = 3, everyMs = 2): Promise<void> {
  for (let position = 0; position < text.length; position += chunk) {
    answer.append(text.slice(position, position + chunk));
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

describe('StreamedAnswer', () => {
  it('streams an answer into one message by edits, one call at a time, an interval apart', async () => {
    const text = 'Here is **the plan** for today:\n\n1. Water the plants\n2. Call `Ada`\n\nThat is all. '.repeat(4);
    const answer = streamed();
    await play(answer, text);
    await answer.finish();
    const messages = api.botMessages(chatId);
    expect(messages).toHaveLength(1);
    expect(messages[0]!.source).toBe(renderTelegramHtml(text));
    const calls = messageCalls();
    expect(calls[0]!.method).toBe('sendMessage');
    expect(calls.length).toBeGreaterThan(2);
    // Far fewer calls than deltas, each starting only after the previous was answered plus the interval.
    expect(calls.length).toBeLessThan(text.length / 3 / 2);
    for (let index = 1; index < calls.length; index += 1) {
      expect(calls[index]!.at - calls[index - 1]!.answeredAt!).toBeGreaterThanOrEqual(intervalMs - 2);
    }
    expect(calls.every((call) => call.errorCode === undefined)).toBe(true);
  });

  it('by default, starts the next call a second after the last was answered', async () => {
    const clock = new ManualClock('2026-11-27T10:00:00Z');
    const answer = streamed({ clock, intervalMs: undefined });
    answer.append('Once');
    await waitUntil(() => api.botMessages(chatId).length === 1);
    answer.append(' upon a time');
    // The send was answered at 10:00:00 on this clock: the edit waits for 10:00:01.
    await waitUntil(() => clock.nextTimer() !== undefined);
    expect(clock.nextTimer()).toBe('2026-11-27T10:00:01.000Z');
    clock.advanceTo('2026-11-27T10:00:00.999Z');
    expect(api.callsOf('editMessageText')).toHaveLength(0);
    clock.advanceTo('2026-11-27T10:00:01Z');
    await waitUntil(() => api.botMessages(chatId)[0]?.text === 'Once upon a time');
    expect(api.callsOf('editMessageText')).toHaveLength(1);
  });

  it('does not edit when the rendered text has not changed', async () => {
    const answer = streamed();
    answer.append('Hello');
    await waitUntil(() => api.botMessages(chatId).length === 1);
    answer.append('   ');
    await answer.finish();
    expect(api.callsOf('editMessageText')).toHaveLength(0);
    expect(api.botMessages(chatId)[0]!.text).toBe('Hello');
  });

  it('waits out a 429 for its retry_after before the next edit, keeping the latest text', async () => {
    const answer = streamed();
    answer.append('First');
    await waitUntil(() => api.botMessages(chatId).length === 1);
    api.rateLimitNext('editMessageText', 1, 1);
    answer.append(' second');
    await waitUntil(() => api.callsOf('editMessageText').length === 1);
    answer.append(' third');
    await answer.finish();
    const [refused, accepted, ...rest] = api.callsOf('editMessageText');
    expect(refused!.errorCode).toBe(429);
    expect(accepted!.at - refused!.answeredAt!).toBeGreaterThanOrEqual(1_000 - 2);
    expect(accepted!.body.text).toBe('First second third');
    expect(rest).toEqual([]);
    expect(api.botMessages(chatId)[0]!.text).toBe('First second third');
  });

  it('continues past 4,096 characters in further messages, each well-formed', async () => {
    const paragraph = 'A **bold claim** with `code` and *emphasis*, and some more words to fill the line. ';
    const text = Array.from({ length: 120 }, (_, index) => `${paragraph}${index}\n\n`).join('');
    expect(text.length).toBeGreaterThan(10_000);
    const answer = streamed();
    await play(answer, text, 400, 5);
    await answer.finish();
    const messages = api.botMessages(chatId);
    expect(messages.length).toBeGreaterThanOrEqual(3);
    for (const message of messages) expect(message.source.length).toBeLessThanOrEqual(4096);
    const whole = parseTelegramHtml(renderTelegramHtml(text));
    expect(whole.ok && messages.map((message) => message.text).join('')).toBe(whole.ok && whole.text);
    expect(answer.messageIds).toEqual(messages.map((message) => message.message_id));
  });

  it('shows tool activity as a status line edited in place, gone with the next words', async () => {
    const answer = streamed();
    answer.append('Let me look.');
    answer.setStatus('Running terminal: ls -la /home <ada>');
    await waitUntil(() => api.botMessages(chatId)[0]?.text === 'Let me look.\n\nRunning terminal: ls -la /home <ada>');
    expect(api.botMessages(chatId)[0]!.entities).toContainEqual({ type: 'italic', offset: 14, length: 36 });
    answer.append(' Found it.');
    await answer.finish();
    expect(api.botMessages(chatId)).toHaveLength(1);
    expect(api.botMessages(chatId)[0]!.text).toBe('Let me look. Found it.');
  });

  it('takes the final content as the whole answer', async () => {
    const answer = streamed();
    answer.append('partial');
    await answer.finish('The **whole** answer');
    expect(api.botMessages(chatId)[0]!.text).toBe('The whole answer');
  });

  it('sends typing while working, every few seconds, and stops at the finish', async () => {
    const clock = new ManualClock('2026-11-27T10:00:00Z');
    const answer = streamed({ clock, typingEveryMs: 4_500 });
    answer.startTyping();
    await waitUntil(() => api.callsOf('sendChatAction').length === 1);
    expect(api.callsOf('sendChatAction')[0]!.body).toMatchObject({ chat_id: chatId, action: 'typing' });
    clock.advanceTo('2026-11-27T10:00:04.500Z');
    await waitUntil(() => api.callsOf('sendChatAction').length === 2);
    answer.append('Done.');
    await answer.finish();
    expect(clock.nextTimer()).toBeUndefined();
    clock.advanceTo('2026-11-27T10:01:00Z');
    expect(api.callsOf('sendChatAction')).toHaveLength(2);
  });

  it('gives up after repeated failures instead of retrying for ever, telling each one', async () => {
    const failures: unknown[] = [];
    const answer = streamed({ maxFailures: 2, intervalMs: 5, onFailure: (error) => void failures.push(error) });
    api.failNext('sendMessage', 5, { errorCode: 500, description: 'Internal Server Error' });
    answer.append('hello');
    await answer.finish();
    expect(failures).toHaveLength(2);
    expect(api.callsOf('sendMessage')).toHaveLength(2);
  });
});
