import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.ts';
import type { ChannelLinks } from '../household/channel-links.ts';

/** The channel id Telegram's links are kept under (the Telegram channel's `id`). */
const telegram = 'telegram';

/**
 * Linking the caller's Telegram account (docs/people.md, *Telegram in a household*): a one-time
 * code to send the bot as `/start <code>`, and unlinking. Each caller links and unlinks only their
 * own; a guest, a kiosk's visitor, links none.
 */
export async function telegramLinkRoutes(app: FastifyInstance, options: { links: ChannelLinks }) {
  const { links } = options;

  app.post('/me/telegram/link-code', async (request, reply) => {
    const { person } = request.caller;
    if (person.role === 'guest') throw new ApiError('forbidden', 'A guest cannot link Telegram; the owner, adults and children can.');
    const { code, expiresAt } = await links.issueCode(telegram, person.id);
    return reply.code(201).send({ code, expires_at: expiresAt });
  });

  app.delete('/me/telegram', async (request) => {
    return { unlinked: await links.unlink(telegram, request.caller.person.id) };
  });
}
