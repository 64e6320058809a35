import { createHash } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import { messageLimits } from '../client-commands.ts';

// What POST /v1/chat/completions reads of OpenAI's request; fields it does not read (temperature,
// max_tokens, tools, …) are let through and ignored: the profile decides them (docs/openai-compatible.md).
const TextPart = Type.Object({ type: Type.Literal('text'), text: Type.String() });
const ImagePart = Type.Object({ type: Type.Literal('image_url'), image_url: Type.Object({ url: Type.String({ minLength: 1 }) }) });
const OtherPart = Type.Object({ type: Type.String() });
const Content = Type.Union([Type.String(), Type.Array(Type.Union([TextPart, ImagePart, OtherPart]), { maxItems: 64 }), Type.Null()]);
const ChatMessage = Type.Object({
  role: Type.Union([Type.Literal('system'), Type.Literal('developer'), Type.Literal('user'), Type.Literal('assistant'), Type.Literal('tool')]),
  content: Type.Optional(Content),
});
export const ChatCompletionBody = Type.Object({
  model: Type.String({ minLength: 1, maxLength: 300 }),
  messages: Type.Array(ChatMessage, { minItems: 1, maxItems: 10_000 }),
  stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  // OpenAI's is a string; a client that sends something else (an object of user details) is not refused for it.
  user: Type.Optional(Type.Unknown()),
});
export type ChatCompletionBody = Static<typeof ChatCompletionBody>;
type ChatMessage = Static<typeof ChatMessage>;

const maxUserCharacters = 256;

/** How much of a conversation Hearth has no record of is put before the person's message of a new session. */
export const maxSeededCharacters = 16_000;

/** The turn a request asks for, and how its session is found. */
export interface Conversation {
  /** The `session_keys` key of its session. */
  key: string;
  /**
   * Whether an earlier session under the key is this conversation's: always for a `user` key; for a
   * conversation's own key only when the request carries earlier messages (a first message starts anew).
   */
  continues: boolean;
  /** The last user message: the turn's input. */
  content: string;
  images: string[];
  /** The earlier messages as a transcript, for a session that starts without them ('' when there are none). */
  earlier: string;
  /** The conversation's title, from its first user message, for a session that starts with a transcript before the new message. */
  title: string;
}

export type ParsedConversation = { ok: true; conversation: Conversation } | { ok: false; message: string };

const imageDataUrl = /^data:image\/(png|jpeg|gif|webp);base64,/;

/**
 * Reads a request's messages as a Hearth turn (docs/openai-compatible.md, "Conversations and sessions"):
 * the last message is the person's and is the turn; a `user` field keys one session per that user,
 * else the conversation is keyed by its system messages and first user message.
 */
export function conversationOf(personId: string, body: Pick<ChatCompletionBody, 'messages' | 'user'>): ParsedConversation {
  const { messages } = body;
  const last = messages.at(-1)!;
  if (last.role !== 'user') return { ok: false, message: `The last message must be the person's (role "user"), not "${last.role}": Hearth answers the person's newest message.` };
  const lastParts = partsOf(last, messages.length - 1);
  if (!lastParts.ok) return lastParts;
  if (lastParts.text.trim() === '' && lastParts.images.length === 0) return { ok: false, message: `messages.${messages.length - 1} has no text.` };
  if (lastParts.images.length > messageLimits.images) return { ok: false, message: `A message may carry up to ${messageLimits.images} images.` };
  if (lastParts.text.length > messageLimits.characters) return { ok: false, message: `A message may hold up to ${messageLimits.characters} characters.` };

  const firstUser = messages.findIndex((message) => message.role === 'user');
  const system = messages.slice(0, firstUser).filter((message) => message.role === 'system' || message.role === 'developer');
  const earlierMessages = messages.slice(0, -1).filter((message) => message.role !== 'system' && message.role !== 'developer');
  const user = typeof body.user === 'string' ? body.user : '';
  if (user.length > maxUserCharacters) return { ok: false, message: `"user" may hold up to ${maxUserCharacters} characters.` };
  const key = user !== '' ? `openai:${personId}:${user}` : `openai-chat:${personId}:${hashOf([...system, messages[firstUser]!])}`;
  return {
    ok: true,
    conversation: {
      key,
      continues: user !== '' || earlierMessages.length > 0,
      content: lastParts.text.trim() === '' ? '(an image)' : lastParts.text,
      images: lastParts.images,
      earlier: transcriptOf(earlierMessages),
      title: titleOf(messages[firstUser]!),
    },
  };
}

/** The turn's input for a session that starts without the conversation's earlier messages: they come first, as a transcript. */
export function seededContent(conversation: Conversation): string {
  if (conversation.earlier === '') return conversation.content;
  return `[The conversation so far, from the chat app; Hearth has no record of it]\n${conversation.earlier}\n[The person's new message]\n${conversation.content}`;
}

type Parts = { ok: true; text: string; images: string[] } | { ok: false; message: string };

function partsOf(message: ChatMessage, index: number): Parts {
  const { content } = message;
  if (content === undefined || content === null) return { ok: true, text: '', images: [] };
  if (typeof content === 'string') return { ok: true, text: content, images: [] };
  const texts: string[] = [];
  const images: string[] = [];
  for (const [partIndex, part] of content.entries()) {
    const where = `messages.${index}.content.${partIndex}`;
    if (part.type === 'text' && 'text' in part) texts.push(part.text);
    else if (part.type === 'image_url' && 'image_url' in part) {
      if (!imageDataUrl.test(part.image_url.url)) {
        return { ok: false, message: `${where}: images must be data: URLs (PNG, JPEG, GIF or WebP, base64); Hearth does not fetch an image's address for a client.` };
      }
      images.push(part.image_url.url);
    } else return { ok: false, message: `${where}: content parts of type "${part.type}" are not taken; send text and image_url parts.` };
  }
  return { ok: true, text: texts.join('\n'), images };
}

/** The earlier messages as lines a model reads, the newest kept when they are too long. */
function transcriptOf(messages: readonly ChatMessage[]): string {
  const lines = messages.map((message) => {
    const { content } = message;
    const text = typeof content === 'string' ? content : (content ?? []).map((part) => ('text' in part ? part.text : `(${part.type})`)).join('\n');
    return `${message.role}: ${text}`;
  });
  const transcript = lines.join('\n\n');
  return transcript.length <= maxSeededCharacters ? transcript : `…${transcript.slice(-maxSeededCharacters)}`;
}

/** The first line of a message, as the page titles a session by its first message. */
function titleOf(message: ChatMessage): string {
  const parts = partsOf(message, 0);
  const firstLine = (parts.ok ? parts.text : '').trim().split('\n', 1)[0]?.trim() ?? '';
  return firstLine.length > 80 ? `${firstLine.slice(0, 79)}…` : firstLine;
}

function hashOf(messages: readonly ChatMessage[]): string {
  const hash = createHash('sha256');
  for (const message of messages) hash.update(`${message.role}\u0000${JSON.stringify(message.content ?? '')}\u0000`);
  return hash.digest('hex').slice(0, 32);
}
