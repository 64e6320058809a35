import { GrammyError, HttpError } from 'grammy';
import { messageOf } from '../../failure.ts';

const tokenShape = /\b\d{5,}:[A-Za-z0-9_-]{30,}\b/g;

/**
 * Takes the bot token out of a text that may hold it (a request URL in a network error, a
 * `/bot<token>/getMe` path, a stack): the token itself, and anything shaped like a bot token,
 * become `<token>`. Every message about Telegram that reaches a log or a status goes through it.
 */
export function redactToken(text: string, token: string): string {
  let redacted = text;
  if (token !== '') {
    redacted = redacted.split(token).join('<token>');
    const encoded = encodeURIComponent(token);
    if (encoded !== token) redacted = redacted.split(encoded).join('<token>');
  }
  return redacted.replace(tokenShape, '<token>');
}

/**
 * One line saying why a Bot API call failed, for a log or the channel's `failed` status, with the
 * token taken out: Telegram's own answer for a refused call, the network cause for an unreachable one.
 */
export function describeTelegramFailure(error: unknown, token: string): string {
  if (error instanceof GrammyError) {
    if (error.error_code === 401) return 'Telegram refused the bot token (401 Unauthorized): check TELEGRAM_BOT_TOKEN with @BotFather.';
    if (error.error_code === 409) return `Telegram says another program is polling this bot (409 ${redactToken(error.description, token)}).`;
    return redactToken(`${error.method}: ${error.error_code} ${error.description}`, token);
  }
  if (error instanceof HttpError) {
    const cause = error.error instanceof Error ? error.error.message : String(error.error);
    return redactToken(`Cannot reach the Telegram Bot API: ${cause}`, token);
  }
  return redactToken(messageOf(error), token);
}
