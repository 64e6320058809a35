import type { ChannelNotification } from '../channel.ts';
import { escapeHtml, renderTelegramHtml } from './render-html.ts';
import { telegramMessageLimit } from './split-message.ts';

const titleRoom = 200;

/**
 * A notification as a Telegram message: its title in bold, its body (a run's Markdown answer, say)
 * rendered as answers are. A body too long for one message is cut, in Markdown, until its HTML fits.
 */
export function notificationHtml(notification: Pick<ChannelNotification, 'title' | 'body'>): string {
  const title = notification.title.length > titleRoom ? `${notification.title.slice(0, titleRoom)}…` : notification.title;
  const heading = `🔔 <b>${escapeHtml(title)}</b>`;
  let body = notification.body;
  for (;;) {
    const html = body.trim() === '' ? heading : `${heading}\n${renderTelegramHtml(body)}`;
    // Telegram counts the text it shows, which is never longer than the HTML.
    if (html.length <= telegramMessageLimit) return html;
    body = `${body.slice(0, Math.floor(body.length * 0.8))}…`;
  }
}
