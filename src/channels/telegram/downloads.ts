import type { Api } from 'grammy';
import type { Message } from 'grammy/types';
import { messageOf } from '../../failure.ts';
import { redactToken } from './redact-token.ts';
import type { ReceivedFile } from './telegram-port.ts';

const maxDownloadBytes = 20 * 1024 * 1024;

/** Fetches a file a person sent by its Telegram file id. */
export type Download = (fileId: string) => Promise<Buffer>;

/** Downloads through the Bot API's file endpoint; a failure is thrown with the token taken out of it. */
export function botDownloads(api: Pick<Api, 'getFile'>, apiRoot: string, token: string): Download {
  return async (fileId) => {
    const file = await api.getFile(fileId);
    if (!file.file_path) throw new Error('Telegram gave no file path (files over 20 MB cannot be fetched by bots)');
    if ((file.file_size ?? 0) > maxDownloadBytes) throw new Error('the file is over 20 MB, more than bots may fetch');
    const response = await fetch(`${apiRoot.replace(/\/+$/, '')}/file/bot${token}/${file.file_path}`).catch((error: unknown) => {
      throw new Error(redactToken(`download failed: ${messageOf(error)}`, token));
    });
    if (!response.ok) throw new Error(`download failed: HTTP ${response.status}`);
    return Buffer.from(await response.arrayBuffer());
  };
}

/** The files a message carries, downloaded: its largest photo, a document, a voice note or an audio file (kept as a document). */
export async function receivedFiles(message: Message, download: Download): Promise<ReceivedFile[]> {
  if (message.photo && message.photo.length > 0) {
    const largest = message.photo.at(-1)!;
    return [{ kind: 'photo', name: `photo-${message.message_id}.jpg`, mimeType: 'image/jpeg', data: await download(largest.file_id) }];
  }
  if (message.document) {
    const document = message.document;
    return [{ kind: 'document', name: document.file_name ?? `document-${message.message_id}`, mimeType: document.mime_type ?? 'application/octet-stream', data: await download(document.file_id) }];
  }
  if (message.voice) {
    return [{ kind: 'voice', name: `voice-${message.message_id}.ogg`, mimeType: message.voice.mime_type ?? 'audio/ogg', data: await download(message.voice.file_id) }];
  }
  if (message.audio) {
    const audio = message.audio;
    return [{ kind: 'document', name: audio.file_name ?? `audio-${message.message_id}`, mimeType: audio.mime_type ?? 'application/octet-stream', data: await download(audio.file_id) }];
  }
  return [];
}
