import { documentMediaTypes } from './detect-media-type.ts';
import type { ExtractedBlock, ExtractionResult } from './extracted-document.ts';
import { htmlBlocks } from './html-text.ts';
import { collapseSpace } from './heading-trail.ts';
import { paragraphsOf } from './plain-text.ts';

/**
 * An e-mail (.eml) through postal-mime: the subject as the heading, a line of who sent it to whom
 * and when, the text body (the HTML one read as HTML when there is no text), and the attachments
 * by name only: their content is not read.
 */
export async function extractEmail(content: Buffer): Promise<ExtractionResult> {
  const PostalMime = (await import('postal-mime')).default;
  const email = await PostalMime.parse(content, { attachmentEncoding: 'arraybuffer' });
  const subject = collapseSpace(email.subject ?? '') || '(no subject)';
  const within = [subject];
  const blocks: ExtractedBlock[] = [{ page: null, headingPath: within, text: subject, kind: 'heading' }];
  const person = (address: { name?: string; address?: string } | undefined) =>
    address === undefined ? undefined : address.name ? `${address.name} <${address.address ?? ''}>` : address.address;
  const line = [
    email.from && `From: ${person(email.from)}`,
    email.to?.length && `To: ${email.to.map(person).join(', ')}`,
    email.date && `Date: ${email.date}`,
  ].filter(Boolean).join('\n');
  if (line !== '') blocks.push({ page: null, headingPath: within, text: line, kind: 'paragraph' });
  const body = email.text?.trim()
    ? paragraphsOf(email.text).map((text): ExtractedBlock => ({ page: null, headingPath: within, text, kind: 'paragraph' }))
    : email.html
      ? await htmlBlocks(email.html, within)
      : [];
  blocks.push(...body);
  const attachments = email.attachments.map((attachment) => attachment.filename).filter((name): name is string => !!name);
  if (attachments.length > 0) blocks.push({ page: null, headingPath: within, text: `Attachments (not read): ${attachments.join(', ')}`, kind: 'paragraph' });
  if (body.length === 0 && email.subject === undefined && email.from === undefined) return { success: false, error: 'The file is not an e-mail Hearth can read: it has no headers and no body.' };
  return { success: true, document: { mediaType: documentMediaTypes.email, pages: null, blocks } };
}
