/**
 * A Telegram Bot API stand-in on a free loopback port. It speaks the documented Bot API
 * (https://core.telegram.org/bots/api) as grammY calls it — `POST /bot<token>/<method>` with a
 * JSON or multipart body (GET with a query string and url-encoded bodies work too), answered
 * `{ok: true, result}` or `{ok: false, error_code, description, parameters?}` — for the methods a
 * chat bot uses: getMe, deleteWebhook, getUpdates (real long polling), sendMessage,
 * editMessageText, deleteMessage, answerCallbackQuery, setMyCommands, getMyCommands,
 * sendChatAction, sendVoice (a multipart upload, `attach://` or a file id), getFile and file download at
 * `/file/bot<token>/<file_path>`. It validates what Telegram validates that a bot can get wrong: the token
 * (401), message length after entity parsing (4,096; a caption's 1,024), the HTML parse mode, an edit that
 * changes nothing, callback data of 1–64 bytes, a reply to a message the chat does not have. A voice
 * upload that is not OGG/Opus, MP3 or M4A arrives as a document, as Telegram documents it.
 * Tests play the people through the queue helpers, read every call and every message the bot
 * keeps, and inject 429s or outages.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseTelegramHtml, type MessageEntity } from './telegram-html.ts';

export interface RecordedCall {
  method: string;
  body: Record<string, unknown>;
  /** Date.now() when the request arrived. */
  at: number;
  /** The answer's error code, when it was refused. */
  errorCode?: number;
  /** Date.now() when it was answered (a held getUpdates, later); absent while held or if never answered. */
  answeredAt?: number;
}

export interface InlineButton {
  text: string;
  callback_data?: string;
  url?: string;
}

export interface ReplyMarkup {
  inline_keyboard?: InlineButton[][];
}

/** A message in a chat as the stand-in keeps it: the bot's, with its edits, or a person's. */
export interface StoredMessage {
  message_id: number;
  chatId: number;
  fromBot: boolean;
  text: string;
  entities: MessageEntity[];
  /** The text as the bot sent it, before parsing (its HTML, with parse_mode HTML). */
  source: string;
  parseMode?: string;
  replyMarkup?: ReplyMarkup;
  /** Every text the message has had, the first included. */
  history: string[];
  deleted: boolean;
  date: number;
  /** The message it replies to, in the same chat. */
  replyTo?: number;
  /** A voice note the bot sent (sendVoice), with the bytes it uploaded. */
  voice?: SentVoice;
  /** What sendVoice sent when it was no voice Telegram plays (not OGG/Opus, MP3 or M4A). */
  document?: SentVoice;
}

export interface SentVoice {
  file_id: string;
  bytes: Buffer;
  /** As the bot gave it (Telegram does not check it). */
  duration?: number;
}

export interface User {
  id: number;
  is_bot: boolean;
  first_name: string;
  username?: string;
  language_code?: string;
}

export interface Update {
  update_id: number;
  [kind: string]: unknown;
}

export interface StoredFile {
  file_id: string;
  file_unique_id: string;
  file_path: string;
  bytes: Buffer;
}

export interface InjectedFailure {
  errorCode: number;
  description: string;
  retryAfter?: number;
}

export interface TelegramBotApiOptions {
  /** The token it accepts; a random, real-looking one by default. */
  token?: string;
  botUsername?: string;
}

export interface PersonOptions {
  firstName?: string;
  username?: string;
}

export interface TelegramBotApi {
  /** `http://127.0.0.1:<port>`: grammY's `client.apiRoot`. */
  readonly apiRoot: string;
  readonly token: string;
  readonly bot: User;
  /** Every call, in arrival order. */
  readonly calls: RecordedCall[];
  callsOf(method: string): RecordedCall[];
  /** The messages of a private chat (its id is the person's user id), in order. */
  messages(chatId: number): StoredMessage[];
  /** The bot's messages in a chat that are not deleted. */
  botMessages(chatId: number): StoredMessage[];
  /** The commands last set with setMyCommands (default scope). */
  readonly commands: Array<{ command: string; description: string }>;
  /** Answers to callback queries, by callback query id. */
  readonly callbackAnswers: Map<string, Record<string, unknown>>;
  /** Updates queued and not yet confirmed by a getUpdates offset. */
  pendingUpdates(): Update[];

  /** A private text message from `userId` (commands get their bot_command entity, as Telegram sends). */
  sendText(userId: number, text: string, person?: PersonOptions): Update;
  /** A text the person forwards from someone else's chat (`forward_origin` of type user). */
  forwardText(userId: number, text: string, original: { id: number; firstName: string }, person?: PersonOptions): Update;
  /** A photo in two sizes; getFile serves `bytes` for the larger, a prefix of them for the smaller. */
  sendPhoto(userId: number, photo: { bytes: Buffer; caption?: string; width?: number; height?: number }, person?: PersonOptions): Update;
  sendDocument(userId: number, document: { bytes: Buffer; fileName: string; mimeType?: string; caption?: string }, person?: PersonOptions): Update;
  sendVoice(userId: number, voice: { bytes: Buffer; duration?: number; mimeType?: string; fileSize?: number }, person?: PersonOptions): Update;
  /** An audio file (a song, a recording shared from another app), as Telegram sends it: `audio` with its name and type. */
  sendAudio(userId: number, audio: { bytes: Buffer; fileName: string; duration?: number; mimeType?: string; caption?: string }, person?: PersonOptions): Update;
  /** A press on an inline button of the bot's message `messageId` in the person's chat. */
  pressButton(userId: number, messageId: number, data: string, person?: PersonOptions): Update;
  /** Makes a chat known without a message, as if the person had started the bot long ago. */
  addChat(userId: number, person?: PersonOptions): void;

  /** The next `count` calls of `method` are refused with `failure` (429 with retry_after, 5xx, …). */
  failNext(method: string, count: number, failure: InjectedFailure): void;
  /** The next `count` calls of `method` get 429 Too Many Requests with this retry_after. */
  rateLimitNext(method: string, count: number, retryAfterSeconds: number): void;
  /** While down, every request's connection is closed unanswered (an outage as a client sees it). */
  setDown(down: boolean): void;
  close(): Promise<void>;
}

class ApiError extends Error {
  constructor(
    readonly errorCode: number,
    readonly description: string,
    readonly retryAfter?: number,
  ) {
    super(description);
  }
}

const badRequest = (reason: string) => new ApiError(400, `Bad Request: ${reason}`);

const defaultUpdateTypes = new Set([
  'message', 'edited_message', 'channel_post', 'edited_channel_post', 'business_connection', 'business_message',
  'edited_business_message', 'deleted_business_messages', 'inline_query', 'chosen_inline_result', 'callback_query',
  'shipping_query', 'pre_checkout_query', 'purchased_paid_media', 'poll', 'poll_answer', 'my_chat_member', 'chat_join_request',
  'chat_boost', 'removed_chat_boost',
]);

const chatActions = new Set([
  'typing', 'upload_photo', 'record_video', 'upload_video', 'record_voice', 'upload_voice', 'upload_document',
  'choose_sticker', 'find_location', 'record_video_note', 'upload_video_note',
]);

// Parameters Telegram accepts JSON-serialized when they arrive in a form (grammY's multipart bodies).
const jsonParameters = new Set(['caption_entities', 'reply_markup', 'allowed_updates', 'commands', 'scope', 'entities', 'reply_parameters', 'link_preview_options']);

function parseMultipart(body: Buffer, boundary: string): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const text = body.toString('latin1');
  for (const part of text.split(`--${boundary}`)) {
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd === -1) continue;
    const headers = part.slice(0, headerEnd);
    const name = /name="([^"]*)"/i.exec(headers)?.[1];
    if (name === undefined) continue;
    const raw = part.slice(headerEnd + 4).replace(/\r\n$/, '');
    const bytes = Buffer.from(raw, 'latin1');
    fields[name] = /filename=/i.test(headers) ? bytes : bytes.toString('utf8');
  }
  return fields;
}

async function readBody(request: IncomingMessage, url: URL): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const type = request.headers['content-type'] ?? '';
  let fields: Record<string, unknown> = Object.fromEntries(url.searchParams);
  if (body.length > 0) {
    if (type.startsWith('application/json')) {
      try {
        fields = { ...fields, ...(JSON.parse(body.toString('utf8')) as Record<string, unknown>) };
      } catch {
        throw badRequest('invalid JSON in request body');
      }
    } else if (type.startsWith('multipart/form-data')) {
      const boundary = /boundary=("?)([^";]+)\1/.exec(type)?.[2];
      if (!boundary) throw badRequest('no boundary in multipart/form-data');
      fields = { ...fields, ...parseMultipart(body, boundary) };
    } else if (type.startsWith('application/x-www-form-urlencoded')) {
      fields = { ...fields, ...Object.fromEntries(new URLSearchParams(body.toString('utf8'))) };
    }
  }
  for (const key of jsonParameters) {
    if (typeof fields[key] === 'string') {
      try {
        fields[key] = JSON.parse(fields[key] as string);
      } catch {
        throw badRequest(`can't parse ${key} JSON object`);
      }
    }
  }
  return fields;
}

function integerParameter(body: Record<string, unknown>, name: string): number | undefined {
  const value = body[name];
  if (value === undefined || value === null || value === '') return undefined;
  const number = typeof value === 'number' ? value : Number(value);
  if (!Number.isInteger(number)) throw badRequest(`field "${name}" must be an integer`);
  return number;
}

function requiredInteger(body: Record<string, unknown>, name: string, missing: string): number {
  const value = integerParameter(body, name);
  if (value === undefined) throw badRequest(missing);
  return value;
}

/** Whether Telegram plays the bytes as a voice note: OGG with an Opus stream, MP3 or M4A. */
function playableVoice(bytes: Buffer): boolean {
  const head = bytes.subarray(0, 512);
  const ogg = head.subarray(0, 4).toString('latin1') === 'OggS' && head.includes('OpusHead');
  const mp3 = head.subarray(0, 3).toString('latin1') === 'ID3' || (head[0] === 0xff && ((head[1] ?? 0) & 0xe0) === 0xe0);
  const m4a = head.subarray(4, 8).toString('latin1') === 'ftyp';
  return ogg || mp3 || m4a;
}

function botCommandEntities(text: string): MessageEntity[] {
  const entities: MessageEntity[] = [];
  for (const match of text.matchAll(/(?<=^|\s)\/[a-zA-Z0-9_]{1,32}(?:@[a-zA-Z0-9_]+)?/g)) {
    entities.push({ type: 'bot_command', offset: match.index, length: match[0].length });
  }
  return entities;
}

function validateMarkup(markup: unknown): ReplyMarkup | undefined {
  if (markup === undefined || markup === null) return undefined;
  if (typeof markup !== 'object') throw badRequest("can't parse reply keyboard markup JSON object");
  const keyboard = (markup as ReplyMarkup).inline_keyboard;
  if (keyboard === undefined) return markup as ReplyMarkup;
  if (!Array.isArray(keyboard) || keyboard.some((row) => !Array.isArray(row))) throw badRequest('field "inline_keyboard" of the InlineKeyboardMarkup should be an Array of Arrays');
  for (const button of keyboard.flat()) {
    if (typeof button?.text !== 'string' || button.text === '') throw badRequest('text buttons are unallowed in the inline keyboard');
    if (button.callback_data !== undefined) {
      const size = Buffer.byteLength(String(button.callback_data), 'utf8');
      if (size < 1 || size > 64) throw badRequest('BUTTON_DATA_INVALID');
    } else if (button.url === undefined) {
      throw badRequest("can't find field \"callback_data\"");
    }
  }
  return markup as ReplyMarkup;
}

function parseText(text: unknown, parseMode: unknown, { limit = 4096, optional = false } = {}): { text: string; entities: MessageEntity[] } {
  if (optional && (text === undefined || text === '')) return { text: '', entities: [] };
  if (typeof text !== 'string') throw badRequest('message text is empty');
  let parsed = { text, entities: [] as MessageEntity[] };
  if (parseMode === 'HTML') {
    const result = parseTelegramHtml(text);
    if (!result.ok) throw new ApiError(400, result.description);
    parsed = result;
  } else if (parseMode !== undefined && parseMode !== '' && parseMode !== null) {
    if (parseMode !== 'MarkdownV2' && parseMode !== 'Markdown') throw badRequest(`unsupported parse_mode "${String(parseMode)}"`);
    throw badRequest('the stand-in only speaks parse_mode HTML');
  }
  if (parsed.text.trim() === '' && !optional) throw badRequest('message text is empty');
  if (parsed.text.length > limit) throw badRequest(optional ? 'message caption is too long' : 'message is too long');
  return parsed;
}

export async function startTelegramBotApi(options: TelegramBotApiOptions = {}): Promise<TelegramBotApi> {
  const token = options.token ?? `${100000000 + (randomBytes(3).readUIntBE(0, 3) % 900000000)}:${randomBytes(26).toString('base64url').slice(0, 35)}`;
  const botId = Number(token.split(':')[0]);
  const bot: User = { id: Number.isFinite(botId) ? botId : 4242, is_bot: true, first_name: 'Hearth', username: options.botUsername ?? 'hearth_test_bot' };
  const calls: RecordedCall[] = [];
  const chats = new Map<number, { person: User; messages: StoredMessage[]; nextMessageId: number }>();
  const files = new Map<string, StoredFile>();
  const filesByPath = new Map<string, StoredFile>();
  const updates: Update[] = [];
  const failures = new Map<string, InjectedFailure[]>();
  const callbackQueries = new Map<string, { answered: boolean; at: number }>();
  const callbackAnswers = new Map<string, Record<string, unknown>>();
  let commands: Array<{ command: string; description: string }> = [];
  let allowedUpdates = defaultUpdateTypes;
  let nextUpdateId = 700_000_000 + (randomBytes(2).readUInt16BE(0) << 4);
  let nextCallbackId = 1;
  let nextFileNumber = 1;
  let down = false;
  let waiter: { response: ServerResponse; offset: number; limit: number; timer: NodeJS.Timeout } | undefined;
  const now = () => Math.floor(Date.now() / 1000);
  const callOfResponse = new WeakMap<ServerResponse, RecordedCall>();

  function chatOf(userId: number, person: PersonOptions = {}) {
    let chat = chats.get(userId);
    if (!chat) {
      chat = { person: { id: userId, is_bot: false, first_name: person.firstName ?? `Person ${userId}`, language_code: 'en' }, messages: [], nextMessageId: 1 };
      chats.set(userId, chat);
    }
    if (person.firstName) chat.person.first_name = person.firstName;
    if (person.username) chat.person.username = person.username;
    return chat;
  }

  function chatObject(userId: number) {
    const person = chatOf(userId).person;
    return { id: userId, type: 'private', first_name: person.first_name, ...(person.username ? { username: person.username } : {}) };
  }

  function messageObject(message: StoredMessage): Record<string, unknown> {
    const chat = chatOf(message.chatId);
    return {
      message_id: message.message_id,
      from: message.fromBot ? bot : chat.person,
      chat: chatObject(message.chatId),
      date: message.date,
      ...(message.voice || message.document
        ? message.entities.length > 0 && { caption_entities: message.entities }
        : { text: message.text, ...(message.entities.length > 0 && { entities: message.entities }) }),
      ...(message.replyMarkup?.inline_keyboard ? { reply_markup: message.replyMarkup } : {}),
      ...(message.history.length > 1 ? { edit_date: now() } : {}),
      ...(message.voice && { voice: fileObject(message.voice, { mime_type: 'audio/ogg' }), ...(message.text !== '' && { caption: message.text }) }),
      ...(message.document && { document: fileObject(message.document, { file_name: 'voice', mime_type: 'application/octet-stream' }), ...(message.text !== '' && { caption: message.text }) }),
      ...(message.replyTo !== undefined && { reply_to_message: replied(message) }),
    };
  }

  function fileObject(sent: SentVoice, extra: Record<string, unknown>): Record<string, unknown> {
    const file = files.get(sent.file_id)!;
    return { file_id: file.file_id, file_unique_id: file.file_unique_id, ...(sent.duration !== undefined && { duration: sent.duration }), file_size: file.bytes.length, ...extra };
  }

  /** The message replied to, as Telegram nests it: without its own reply. */
  function replied(message: StoredMessage): Record<string, unknown> | undefined {
    const original = chats.get(message.chatId)?.messages.find((candidate) => candidate.message_id === message.replyTo);
    if (!original) return undefined;
    const { reply_to_message: _nested, ...shallow } = messageObject({ ...original, replyTo: undefined });
    return shallow;
  }

  /** The message a bot's message replies to (`reply_parameters`), which must be in the chat unless `allow_sending_without_reply`. */
  function replyTarget(body: Record<string, unknown>, chatId: number): number | undefined {
    const parameters = body.reply_parameters as { message_id?: unknown; allow_sending_without_reply?: unknown } | undefined;
    if (parameters === undefined || parameters === null) return undefined;
    if (typeof parameters !== 'object' || !Number.isInteger(parameters.message_id)) throw badRequest("can't parse reply parameters JSON object");
    const messageId = parameters.message_id as number;
    if (chatOf(chatId).messages.some((candidate) => candidate.message_id === messageId && !candidate.deleted)) return messageId;
    if (parameters.allow_sending_without_reply === true) return undefined;
    throw badRequest('message to be replied not found');
  }

  /** A message the bot sends to the chat (its text or caption parsed), with its markup and the message it replies to. */
  function postBotMessage(
    body: Record<string, unknown>,
    chatId: number,
    parsed: { text: string; entities: MessageEntity[] },
    source: string,
    attachment: Pick<StoredMessage, 'voice' | 'document'>,
  ): Record<string, unknown> {
    const replyMarkup = validateMarkup(body.reply_markup);
    const replyTo = replyTarget(body, chatId);
    const chat = chatOf(chatId);
    const message: StoredMessage = {
      message_id: chat.nextMessageId++,
      chatId,
      fromBot: true,
      text: parsed.text,
      entities: parsed.entities,
      source,
      history: [parsed.text],
      deleted: false,
      date: now(),
      ...attachment,
      ...(typeof body.parse_mode === 'string' ? { parseMode: body.parse_mode } : {}),
      ...(replyMarkup ? { replyMarkup } : {}),
      ...(replyTo !== undefined && { replyTo }),
    };
    chat.messages.push(message);
    return messageObject(message);
  }

  /** The file a send method names: an upload (`attach://<part>`, or the part itself) or the file id of one Telegram keeps. */
  function sentFile(body: Record<string, unknown>, field: string, folder: string, extension: string): StoredFile {
    const value = body[field];
    const attached = typeof value === 'string' && value.startsWith('attach://') ? body[value.slice('attach://'.length)] : value;
    if (Buffer.isBuffer(attached)) {
      if (attached.length === 0) throw badRequest('file must be non-empty');
      return addFile(attached, folder, extension);
    }
    if (typeof value !== 'string' || value === '') throw badRequest(`there is no ${field} in the request`);
    if (/^https?:\/\//.test(value)) throw badRequest('the stand-in fetches no URLs: upload the file');
    const known = files.get(value);
    if (!known) throw badRequest('wrong file identifier/HTTP URL specified');
    return known;
  }

  function addFile(bytes: Buffer, folder: string, extension: string): StoredFile {
    const number = nextFileNumber++;
    const file: StoredFile = {
      file_id: `AgAC${randomBytes(18).toString('base64url')}${number}`,
      file_unique_id: `AQAD${randomBytes(6).toString('base64url')}`,
      file_path: `${folder}/file_${number}.${extension}`,
      bytes,
    };
    files.set(file.file_id, file);
    filesByPath.set(file.file_path, file);
    return file;
  }

  function queue(kind: string, payload: Record<string, unknown>): Update {
    const update: Update = { update_id: nextUpdateId++, [kind]: payload };
    updates.push(update);
    deliverToWaiter();
    return update;
  }

  function queuePersonMessage(userId: number, person: PersonOptions | undefined, content: Record<string, unknown>): Update {
    const chat = chatOf(userId, person);
    const message_id = chat.nextMessageId++;
    const text = typeof content.text === 'string' ? content.text : typeof content.caption === 'string' ? content.caption : '';
    chat.messages.push({ message_id, chatId: userId, fromBot: false, text, entities: [], source: text, history: [text], deleted: false, date: now() });
    return queue('message', { message_id, from: chat.person, chat: chatObject(userId), date: now(), ...content });
  }

  function deliverable(offset: number, limit: number): Update[] {
    return updates.filter((update) => update.update_id >= offset && Object.keys(update).some((key) => allowedUpdates.has(key))).slice(0, limit);
  }

  function deliverToWaiter(): void {
    if (!waiter) return;
    const ready = deliverable(waiter.offset, waiter.limit);
    if (ready.length === 0) return;
    const { response, timer } = waiter;
    waiter = undefined;
    clearTimeout(timer);
    answer(response, 200, { ok: true, result: ready });
  }

  function answer(response: ServerResponse, status: number, body: unknown): void {
    if (response.writableEnded || response.destroyed) return;
    const call = callOfResponse.get(response);
    if (call) call.answeredAt = Date.now();
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  }

  function storedMessage(body: Record<string, unknown>, missing: string): StoredMessage {
    const chatId = requiredInteger(body, 'chat_id', 'chat_id is empty');
    const messageId = requiredInteger(body, 'message_id', 'message identifier is not specified');
    const message = chats.get(chatId)?.messages.find((candidate) => candidate.message_id === messageId && !candidate.deleted);
    if (!message) throw badRequest(missing);
    return message;
  }

  function knownChat(body: Record<string, unknown>): number {
    const chatId = requiredInteger(body, 'chat_id', 'chat_id is empty');
    if (!chats.has(chatId)) {
      if (chatId > 0) throw new ApiError(403, "Forbidden: bot can't initiate conversation with a user");
      throw badRequest('chat not found');
    }
    return chatId;
  }

  const methods: Record<string, (body: Record<string, unknown>, response: ServerResponse) => unknown> = {
    getMe: () => ({ ...bot, can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false, can_connect_to_business: false, has_main_web_app: false }),
    deleteWebhook: (body) => {
      if (body.drop_pending_updates === true || body.drop_pending_updates === 'true') updates.splice(0);
      return true;
    },
    getWebhookInfo: () => ({ url: '', has_custom_certificate: false, pending_update_count: updates.length }),
    getUpdates: (body, response) => {
      const offset = integerParameter(body, 'offset');
      if (offset !== undefined && offset > 0) {
        const confirmed = updates.findIndex((update) => update.update_id >= offset);
        updates.splice(0, confirmed === -1 ? updates.length : confirmed);
      }
      const limit = Math.min(100, Math.max(1, integerParameter(body, 'limit') ?? 100));
      const timeout = Math.max(0, integerParameter(body, 'timeout') ?? 0);
      if (Array.isArray(body.allowed_updates)) {
        allowedUpdates = body.allowed_updates.length === 0 ? defaultUpdateTypes : new Set(body.allowed_updates.map(String));
      }
      if (waiter) {
        const previous = waiter;
        waiter = undefined;
        clearTimeout(previous.timer);
        answer(previous.response, 409, { ok: false, error_code: 409, description: 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running' });
      }
      const ready = deliverable(offset ?? 0, limit);
      if (ready.length > 0 || timeout === 0) return ready;
      const held = {
        response,
        offset: offset ?? 0,
        limit,
        timer: setTimeout(() => {
          if (waiter === held) waiter = undefined;
          answer(response, 200, { ok: true, result: [] });
        }, timeout * 1000),
      };
      waiter = held;
      response.on('close', () => {
        if (waiter === held) {
          clearTimeout(held.timer);
          waiter = undefined;
        }
      });
      return undefined;
    },
    sendMessage: (body) => {
      const chatId = knownChat(body);
      const parsed = parseText(body.text, body.parse_mode);
      return postBotMessage(body, chatId, parsed, String(body.text), {});
    },
    sendVoice: (body) => {
      const chatId = knownChat(body);
      const caption = parseText(body.caption, body.parse_mode, { limit: 1024, optional: true });
      const duration = integerParameter(body, 'duration');
      const file = sentFile(body, 'voice', 'voice', 'oga');
      if (file.bytes.length > 50 * 1024 * 1024) throw badRequest('file is too big');
      const sent: SentVoice = { file_id: file.file_id, bytes: file.bytes, ...(duration !== undefined && { duration }) };
      const source = typeof body.caption === 'string' ? body.caption : '';
      return postBotMessage(body, chatId, caption, source, playableVoice(file.bytes) ? { voice: sent } : { document: sent });
    },
    editMessageText: (body) => {
      if (body.inline_message_id !== undefined) throw badRequest('the stand-in keeps no inline messages');
      const message = storedMessage(body, 'message to edit not found');
      if (!message.fromBot) throw badRequest("message can't be edited");
      const parsed = parseText(body.text, body.parse_mode);
      const replyMarkup = validateMarkup(body.reply_markup);
      const same =
        parsed.text === message.text &&
        JSON.stringify(parsed.entities) === JSON.stringify(message.entities) &&
        JSON.stringify(replyMarkup ?? {}) === JSON.stringify(message.replyMarkup ?? {});
      if (same) {
        throw badRequest('message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message');
      }
      message.text = parsed.text;
      message.entities = parsed.entities;
      message.source = String(body.text);
      message.history.push(parsed.text);
      if (typeof body.parse_mode === 'string') message.parseMode = body.parse_mode;
      else delete message.parseMode;
      if (replyMarkup) message.replyMarkup = replyMarkup;
      else delete message.replyMarkup;
      return messageObject(message);
    },
    editMessageReplyMarkup: (body) => {
      const message = storedMessage(body, 'message to edit not found');
      const replyMarkup = validateMarkup(body.reply_markup);
      if (JSON.stringify(replyMarkup ?? {}) === JSON.stringify(message.replyMarkup ?? {})) {
        throw badRequest('message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message');
      }
      if (replyMarkup) message.replyMarkup = replyMarkup;
      else delete message.replyMarkup;
      return messageObject(message);
    },
    deleteMessage: (body) => {
      const message = storedMessage(body, 'message to delete not found');
      message.deleted = true;
      return true;
    },
    answerCallbackQuery: (body) => {
      const id = String(body.callback_query_id ?? '');
      const query = callbackQueries.get(id);
      if (!query || query.answered) throw badRequest('query is too old and response timeout expired or query ID is invalid');
      if (typeof body.text === 'string' && body.text.length > 200) throw badRequest('MESSAGE_TOO_LONG');
      query.answered = true;
      callbackAnswers.set(id, body);
      return true;
    },
    setMyCommands: (body) => {
      const list = body.commands;
      if (!Array.isArray(list)) throw badRequest('parameter "commands" is required');
      if (list.length > 100) throw badRequest('too many commands');
      for (const entry of list as Array<{ command?: unknown; description?: unknown }>) {
        if (typeof entry.command !== 'string' || !/^[a-z0-9_]{1,32}$/.test(entry.command)) throw badRequest('BOT_COMMAND_INVALID');
        if (typeof entry.description !== 'string' || entry.description.length < 1 || entry.description.length > 256) {
          throw badRequest('BOT_COMMAND_DESCRIPTION_INVALID');
        }
      }
      commands = (list as Array<{ command: string; description: string }>).map(({ command, description }) => ({ command, description }));
      return true;
    },
    getMyCommands: () => commands,
    deleteMyCommands: () => {
      commands = [];
      return true;
    },
    sendChatAction: (body) => {
      knownChat(body);
      if (!chatActions.has(String(body.action))) throw badRequest('wrong parameter action in request');
      return true;
    },
    getFile: (body) => {
      const file = files.get(String(body.file_id ?? ''));
      if (!file) throw badRequest('invalid file_id');
      return { file_id: file.file_id, file_unique_id: file.file_unique_id, file_size: file.bytes.length, file_path: file.file_path };
    },
  };

  function failNext(method: string, count: number, failure: InjectedFailure): void {
    const queued = failures.get(method) ?? [];
    for (let index = 0; index < count; index += 1) queued.push(failure);
    failures.set(method, queued);
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (down) {
      request.socket.destroy();
      return;
    }
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const download = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (download) {
      const file = decodeURIComponent(download[1]!) === token ? filesByPath.get(decodeURIComponent(download[2]!)) : undefined;
      if (!file) return answer(response, 404, { ok: false, error_code: 404, description: 'Not Found' });
      response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': file.bytes.length });
      response.end(file.bytes);
      return;
    }
    const route = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (!route) return answer(response, 404, { ok: false, error_code: 404, description: 'Not Found' });
    const method = route[2]!;
    const call: RecordedCall = { method, body: {}, at: Date.now() };
    calls.push(call);
    callOfResponse.set(response, call);
    try {
      call.body = await readBody(request, url);
      if (decodeURIComponent(route[1]!) !== token) throw new ApiError(401, 'Unauthorized');
      const handler = Object.entries(methods).find(([name]) => name.toLowerCase() === method.toLowerCase())?.[1];
      if (!handler) throw new ApiError(404, 'Not Found');
      const injected = failures.get(method)?.shift();
      if (injected) throw new ApiError(injected.errorCode, injected.description, injected.retryAfter);
      const result = handler(call.body, response);
      if (result !== undefined) answer(response, 200, { ok: true, result });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      call.errorCode = error.errorCode;
      answer(response, error.errorCode, {
        ok: false,
        error_code: error.errorCode,
        description: error.description,
        ...(error.retryAfter !== undefined ? { parameters: { retry_after: error.retryAfter } } : {}),
      });
    }
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => answer(response, 500, { ok: false, error_code: 500, description: `Internal Server Error: ${String(error)}` }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const apiRoot = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    apiRoot,
    token,
    bot,
    calls,
    callsOf: (method) => calls.filter((call) => call.method === method),
    messages: (chatId) => chats.get(chatId)?.messages ?? [],
    botMessages: (chatId) => (chats.get(chatId)?.messages ?? []).filter((message) => message.fromBot && !message.deleted),
    get commands() {
      return commands;
    },
    callbackAnswers,
    pendingUpdates: () => [...updates],
    sendText(userId, text, person) {
      const entities = botCommandEntities(text);
      return queuePersonMessage(userId, person, { text, ...(entities.length > 0 ? { entities } : {}) });
    },
    forwardText(userId, text, original, person) {
      const forward_origin = { type: 'user', date: now() - 60, sender_user: { id: original.id, is_bot: false, first_name: original.firstName } };
      return queuePersonMessage(userId, person, { text, forward_origin });
    },
    sendPhoto(userId, photo, person) {
      const width = photo.width ?? 1280;
      const height = photo.height ?? 960;
      const small = addFile(photo.bytes.subarray(0, Math.max(1, Math.floor(photo.bytes.length / 4))), 'photos', 'jpg');
      const large = addFile(photo.bytes, 'photos', 'jpg');
      const sizes = [
        { file_id: small.file_id, file_unique_id: small.file_unique_id, width: Math.round(width / 4), height: Math.round(height / 4), file_size: small.bytes.length },
        { file_id: large.file_id, file_unique_id: large.file_unique_id, width, height, file_size: large.bytes.length },
      ];
      return queuePersonMessage(userId, person, { photo: sizes, ...(photo.caption ? { caption: photo.caption } : {}) });
    },
    sendDocument(userId, document, person) {
      const extension = /\.([\w]+)$/.exec(document.fileName)?.[1] ?? 'dat';
      const file = addFile(document.bytes, 'documents', extension);
      return queuePersonMessage(userId, person, {
        document: { file_id: file.file_id, file_unique_id: file.file_unique_id, file_name: document.fileName, mime_type: document.mimeType ?? 'application/octet-stream', file_size: file.bytes.length },
        ...(document.caption ? { caption: document.caption } : {}),
      });
    },
    sendVoice(userId, voice, person) {
      const file = addFile(voice.bytes, 'voice', 'oga');
      return queuePersonMessage(userId, person, {
        voice: { file_id: file.file_id, file_unique_id: file.file_unique_id, duration: voice.duration ?? 3, mime_type: voice.mimeType ?? 'audio/ogg', file_size: voice.fileSize ?? file.bytes.length },
      });
    },
    sendAudio(userId, audio, person) {
      const extension = /\.([\w]+)$/.exec(audio.fileName)?.[1] ?? 'mp3';
      const file = addFile(audio.bytes, 'music', extension);
      return queuePersonMessage(userId, person, {
        audio: {
          file_id: file.file_id, file_unique_id: file.file_unique_id, duration: audio.duration ?? 3, file_name: audio.fileName,
          mime_type: audio.mimeType ?? 'audio/mpeg', file_size: file.bytes.length,
        },
        ...(audio.caption ? { caption: audio.caption } : {}),
      });
    },
    pressButton(userId, messageId, data, person) {
      const chat = chatOf(userId, person);
      const message = chat.messages.find((candidate) => candidate.message_id === messageId && candidate.fromBot);
      if (!message) throw new Error(`No bot message ${messageId} in chat ${userId}`);
      const id = `${4_000_000_000_000 + nextCallbackId++}`;
      callbackQueries.set(id, { answered: false, at: Date.now() });
      return queue('callback_query', { id, from: chat.person, message: messageObject(message), chat_instance: `${userId}${botId}`, data });
    },
    addChat(userId, person) {
      chatOf(userId, person);
    },
    failNext,
    rateLimitNext(method, count, retryAfterSeconds) {
      failNext(method, count, { errorCode: 429, description: `Too Many Requests: retry after ${retryAfterSeconds}`, retryAfter: retryAfterSeconds });
    },
    setDown(value) {
      down = value;
      if (value && waiter) {
        waiter.response.socket?.destroy();
        clearTimeout(waiter.timer);
        waiter = undefined;
      }
    },
    async close() {
      if (waiter) clearTimeout(waiter.timer);
      waiter = undefined;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
