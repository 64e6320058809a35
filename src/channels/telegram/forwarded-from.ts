import type { Message } from 'grammy/types';

/**
 * Whose words a forwarded message holds, named for its provenance line (docs/security.md:
 * Untrusted content); undefined for the person's own message, or their own words forwarded back.
 */
export function forwardedFrom(message: Message): string | undefined {
  const origin = message.forward_origin;
  if (!origin) return undefined;
  switch (origin.type) {
    case 'user': {
      if (origin.sender_user.id === message.from?.id) return undefined;
      const { first_name: first, last_name: last, username } = origin.sender_user;
      return [first, last].filter(Boolean).join(' ') + (username ? ` (@${username})` : '');
    }
    case 'hidden_user':
      return origin.sender_user_name;
    case 'chat':
      return origin.sender_chat.title ?? 'a group';
    case 'channel':
      return `the channel ${origin.chat.title ?? ''}`.trim();
  }
}
