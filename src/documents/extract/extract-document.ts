import type { Jail } from '../../jail/jail.ts';
import { readFile } from 'node:fs/promises';
import { messageOf } from '../../failure.ts';
import { decodeText, detectMediaType, documentMediaTypes } from './detect-media-type.ts';
import { extractDocx } from './docx-text.ts';
import { extractEmail } from './email-text.ts';
import { extractHtml } from './html-text.ts';
import { extractMarkdown } from './markdown-text.ts';
import { PdfReader } from './pdf-text.ts';
import { extractPlainText } from './plain-text.ts';
import type { ExtractionResult } from './extracted-document.ts';

export { detectMediaType, documentMediaTypes } from './detect-media-type.ts';
export type { ExtractedBlock, ExtractedDocument, ExtractionResult } from './extracted-document.ts';

export interface DocumentExtractor {
  /** The text of a file, by its media type (detected from its first bytes and name when not given). Never rejects. */
  extract(file: { path: string; name: string; mediaType?: string }, signal?: AbortSignal): Promise<ExtractionResult>;
}

export interface DocumentExtractorOptions {
  /** pdftotext runs in its strict jail without network: the file is untrusted, and a PDF parser is a large surface. */
  jail: Jail;
  /** How long pdftotext may take on one file (default 60 s). */
  timeoutMs?: number;
  /** The pdftotext to run (Debian's poppler-utils, found on PATH, by default). */
  pdftotext?: string;
}

const defaultTimeoutMs = 60_000;

export function createDocumentExtractor(options: DocumentExtractorOptions): DocumentExtractor {
  const pdf = new PdfReader({ jail: options.jail, timeoutMs: options.timeoutMs ?? defaultTimeoutMs, executable: options.pdftotext ?? 'pdftotext' });
  return {
    async extract(file, signal) {
      let content: Buffer;
      try {
        content = await readFile(file.path);
      } catch (error) {
        return { success: false, error: `The file could not be read: ${messageOf(error)}.` };
      }
      const mediaType = file.mediaType ?? detectMediaType(file.name, content.subarray(0, 512));
      try {
        switch (mediaType) {
          case documentMediaTypes.pdf:
            return await pdf.extract(content, signal);
          case documentMediaTypes.docx:
            return await extractDocx(content);
          case documentMediaTypes.html:
            return await extractHtml(decodeText(content));
          case documentMediaTypes.markdown:
            return await extractMarkdown(decodeText(content));
          case documentMediaTypes.text:
            return extractPlainText(decodeText(content));
          case documentMediaTypes.email:
            return await extractEmail(content);
          default:
            return { success: false, error: unsupported(file.name, mediaType) };
        }
      } catch (error) {
        // The parsers throw on what they cannot read; that is the file's fault, said as such.
        return { success: false, error: `${file.name} could not be read as ${describe(mediaType)}: ${messageOf(error)}.` };
      }
    },
  };
}

function unsupported(name: string, mediaType: string | undefined): string {
  const what = mediaType === undefined ? 'a kind of file Hearth does not recognise' : `${mediaType}, which Hearth does not read`;
  return `${name} is ${what}. Hearth reads PDF (with a text layer), Word (.docx), HTML, Markdown, plain text and e-mail (.eml).`;
}

function describe(mediaType: string | undefined): string {
  const names: Record<string, string> = {
    [documentMediaTypes.docx]: 'a Word document',
    [documentMediaTypes.html]: 'HTML',
    [documentMediaTypes.markdown]: 'Markdown',
    [documentMediaTypes.text]: 'text',
    [documentMediaTypes.email]: 'an e-mail',
  };
  return (mediaType && names[mediaType]) ?? String(mediaType);
}
