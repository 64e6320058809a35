import { documentMediaTypes } from './detect-media-type.ts';
import type { ExtractionResult } from './extracted-document.ts';
import { extractHtml } from './html-text.ts';
import { inflatedBytes, zipEntries } from './zip-entries.ts';

/**
 * The most a Word document's XML may inflate to. mammoth runs in Hearth's process, so a small file
 * that unpacks to gigabytes (a ZIP bomb) is refused before mammoth opens it; a thousand pages of text are ~50 MB.
 */
const maxXmlBytes = 200 * 1024 * 1024;

/** A Word document through mammoth, which maps its heading styles to h1–h6; then read as HTML. Images are left out, never unpacked. */
export async function extractDocx(content: Buffer): Promise<ExtractionResult> {
  const entries = zipEntries(content);
  // What is not a readable ZIP is left to mammoth, whose error says what is wrong with it.
  if (entries !== undefined && inflatedBytes(content, entries.filter((entry) => /\.(xml|rels)$/i.test(entry.name)), maxXmlBytes) === undefined) {
    return { success: false, error: `This Word document's text does not unpack: it is damaged, or unpacks to more than the ${maxXmlBytes / 1024 / 1024} MB Hearth reads.` };
  }
  const mammoth = (await import('mammoth')).default;
  const { value } = await mammoth.convertToHtml({ buffer: content }, { convertImage: mammoth.images.imgElement(async () => ({ src: '' })) });
  const result = await extractHtml(value, documentMediaTypes.docx);
  if (!result.success) return { success: false, error: 'The Word document holds no text.' };
  return result;
}
