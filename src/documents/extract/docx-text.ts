import { documentMediaTypes } from './detect-media-type.ts';
import type { ExtractionResult } from './extracted-document.ts';
import { extractHtml } from './html-text.ts';

/** A Word document through mammoth, which maps its heading styles to h1–h6; then read as HTML. Images are left out. */
export async function extractDocx(content: Buffer): Promise<ExtractionResult> {
  const mammoth = (await import('mammoth')).default;
  const { value } = await mammoth.convertToHtml({ buffer: content }, { convertImage: mammoth.images.imgElement(async () => ({ src: '' })) });
  const result = await extractHtml(value, documentMediaTypes.docx);
  if (!result.success) return { success: false, error: 'The Word document holds no text.' };
  return result;
}
