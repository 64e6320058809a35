import { describe, expect, it } from 'vitest';
import { notificationHtml } from '../src/channels/telegram/notification-message.ts';
import { parseTelegramHtml } from './support/telegram-html.ts';

function parsed(html: string) {
  const result = parseTelegramHtml(html);
  if (!result.ok) throw new Error(result.description);
  return result;
}

describe('a notification as a Telegram message', () => {
  it('has its title in bold, escaped, and its Markdown body rendered as answers are', () => {
    const message = parsed(notificationHtml({ title: 'Backup <b>failed</b>', body: 'Disk **/dev/sdb** is full: run `df -h`.' }));
    expect(message.text).toBe('🔔 Backup <b>failed</b>\nDisk /dev/sdb is full: run df -h.');
    const shown = (type: string) => message.entities.filter((entity) => entity.type === type).map((entity) => message.text.slice(entity.offset, entity.offset + entity.length));
    expect(shown('bold')).toEqual(['Backup <b>failed</b>', '/dev/sdb']);
    expect(shown('code')).toEqual(['df -h']);
  });

  it('cuts a body too long for one message, still well-formed, and shows a title alone when there is no body', () => {
    const html = notificationHtml({ title: 'Report', body: `${'**bold** & <tag> '.repeat(600)}` });
    const message = parsed(html);
    expect(html.length).toBeLessThanOrEqual(4096);
    expect(message.text.startsWith('🔔 Report\nbold & <tag>')).toBe(true);
    expect(message.text.endsWith('…')).toBe(true);
    expect(parsed(notificationHtml({ title: 'Reminder: water the plants', body: '' })).text).toBe('🔔 Reminder: water the plants');
  });
});
