import { Composer, type Api } from 'grammy';
import type { InlineKeyboardButton } from 'grammy/types';
import type { DocumentLibrary, DocumentSummary, LibraryName } from '../../documents/document-types.ts';
import type { Logger } from '../../logger.ts';
import type { Person } from '../../people/person.ts';
import { buttonPress, pressedWhereSent, refusePress, type SentButtons } from './button-press.ts';
import { chatPersonOf, type TelegramContext } from './chat-people.ts';
import type { Download } from './downloads.ts';
import { escapeHtml } from './render-html.ts';

const prefix = 'lib:';
/** The kinds of file the library reads, by their name (docs/documents.md). */
const readableName = /\.(pdf|docx|md|markdown|txt|text|html?|eml)$/i;

interface Offer extends SentButtons {
  fileId: string;
  name: string;
  mediaType: string | undefined;
  person: Person;
}

export interface LibraryOffersOptions {
  api: Pick<Api, 'sendMessage' | 'editMessageText'>;
  documents: Pick<DocumentLibrary, 'add' | 'get' | 'on'>;
  download: Download;
  /** Logs a failed download and says why in a line for the person, without the token. */
  downloadFailed: (error: unknown) => string;
  logger: Logger;
}

/**
 * "Add to library" (docs/documents.md, *From Telegram*): a document the library can read, sent without words, is
 * offered to the person's library with buttons (Mine, Household, No). A press on that question's message in its chat
 * downloads the file and adds it; the chat is told when it is ready to be asked about, or why it could not be read.
 * A document sent with a caption is a message to the session, as before. Offers are kept in memory, one per
 * question: after a restart a press is refused and the person sends the file again.
 */
export class LibraryOffers {
  private readonly offers = new Map<string, Offer>();
  /** Documents added from a chat, until their indexing ends: the chat to tell. */
  private readonly watched = new Map<string, number>();
  private readonly unsubscribe: () => void;

  constructor(private readonly options: LibraryOffersOptions) {
    this.unsubscribe = options.documents.on((event) => {
      if (event.type === 'document_status') void this.tellWhenDone(event.document);
      else this.watched.delete(event.id);
    });
  }

  close(): void {
    this.unsubscribe();
  }

  composer(): Composer<TelegramContext> {
    const composer = new Composer<TelegramContext>();
    composer.on('message:document', async (context, next) => {
      const { document, caption } = context.message;
      const name = document.file_name ?? '';
      const { person } = chatPersonOf(context);
      if ((caption ?? '').trim() !== '' || !readableName.test(name) || person.role === 'guest') return next();
      const chatId = context.chat.id;
      const sent = await context.reply(`Add <b>${escapeHtml(name)}</b> to your library? Hearth can then search it and cite it in answers.`, {
        parse_mode: 'HTML',
        reply_markup: { inline_keyboard: libraryKeyboard(person) },
        reply_parameters: { message_id: context.message.message_id, allow_sending_without_reply: true },
      });
      this.offers.set(offerKey(chatId, sent.message_id), { chatId, messageId: sent.message_id, fileId: document.file_id, name, mediaType: document.mime_type, person });
    });
    composer.on('callback_query:data', async (context, next) => {
      const press = buttonPress(context.callbackQuery);
      if (!press || !press.data.startsWith(prefix)) return next();
      const offer = this.offers.get(offerKey(press.chatId, press.messageId));
      const choice = press.data.slice(prefix.length);
      if (!offer || !pressedWhereSent(press, offer) || offer.person.id !== chatPersonOf(context).person.id || !isChoice(choice)) {
        const why = 'not a library question this chat was asked on that message';
        return refusePress(context, this.options.logger, press, 'library', why, 'That question is no longer open: send the file again.');
      }
      this.offers.delete(offerKey(press.chatId, press.messageId));
      await context.answerCallbackQuery();
      await this.decide(offer, choice);
    });
    return composer;
  }

  private async decide(offer: Offer, choice: LibraryName | 'no'): Promise<void> {
    const { api, documents, download, downloadFailed } = this.options;
    const name = escapeHtml(offer.name);
    const say = (html: string) => api.editMessageText(offer.chatId, offer.messageId, html, { parse_mode: 'HTML' }).catch((error: unknown) => this.failed(error));
    if (choice === 'no') return void (await say(`<b>${name}</b> was not added to the library.`));
    await say(`Adding <b>${name}</b> to ${libraryWords(choice)}…`);
    let content: Buffer;
    try {
      content = await download(offer.fileId);
    } catch (error) {
      return void (await say(`<b>${name}</b> could not be fetched from Telegram: ${escapeHtml(downloadFailed(error))}`));
    }
    const added = await documents.add({
      caller: { person: offer.person, via: 'telegram' },
      library: choice,
      name: offer.name,
      ...(offer.mediaType && offer.mediaType !== 'application/octet-stream' && { mediaType: offer.mediaType }),
      content,
      source: 'telegram',
    });
    if (!added.ok) return void (await say(`<b>${name}</b> was not added: ${escapeHtml(added.message)}`));
    this.watched.set(added.document.id, offer.chatId);
    // Its indexing may have ended before it was watched: said now, from where it stands.
    await this.tellWhenDone(documents.get({ person: offer.person, via: 'telegram' }, added.document.id) ?? added.document);
  }

  /** Once a watched document is ready or failed, its chat is told, once. */
  private async tellWhenDone(document: DocumentSummary): Promise<void> {
    const chatId = this.watched.get(document.id);
    if (chatId === undefined || (document.status !== 'ready' && document.status !== 'failed')) return;
    this.watched.delete(document.id);
    const name = `<b>${escapeHtml(document.name)}</b>`;
    const text =
      document.status === 'ready'
        ? `${name} is ready in ${libraryWords(document.library)}${document.passages ? ` (${document.passages} ${document.passages === 1 ? 'passage' : 'passages'})` : ''}: ask about it any time.`
        : `${name} could not be read: ${escapeHtml(document.error ?? 'no reason was given')}`;
    await this.options.api.sendMessage(chatId, text, { parse_mode: 'HTML' }).catch((error: unknown) => this.failed(error));
  }

  private failed(error: unknown): void {
    this.options.logger.warn({ err: error }, 'Telegram: a library message was not sent');
  }
}

/** Mine, Household (not for children: they read the household's library but do not add to it), No. */
export function libraryKeyboard(person: Pick<Person, 'role'>): InlineKeyboardButton[][] {
  return [
    [
      { text: 'Mine', callback_data: `${prefix}mine` },
      ...(person.role === 'child' ? [] : [{ text: 'Household', callback_data: `${prefix}household` }]),
      { text: 'No', callback_data: `${prefix}no` },
    ],
  ];
}

function isChoice(choice: string): choice is LibraryName | 'no' {
  return choice === 'mine' || choice === 'household' || choice === 'no';
}

function libraryWords(library: LibraryName): string {
  return library === 'household' ? 'the household library' : 'your library';
}

function offerKey(chatId: number, messageId: number): string {
  return `${chatId}:${messageId}`;
}
