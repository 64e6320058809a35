/** The media types Hearth reads documents in. */
export const documentMediaTypes = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  html: 'text/html',
  markdown: 'text/markdown',
  text: 'text/plain',
  email: 'message/rfc822',
} as const;

const byExtension: Record<string, string> = {
  '.pdf': documentMediaTypes.pdf,
  '.docx': documentMediaTypes.docx,
  '.html': documentMediaTypes.html,
  '.htm': documentMediaTypes.html,
  '.xhtml': documentMediaTypes.html,
  '.md': documentMediaTypes.markdown,
  '.markdown': documentMediaTypes.markdown,
  '.txt': documentMediaTypes.text,
  '.text': documentMediaTypes.text,
  '.eml': documentMediaTypes.email,
};

const zipSignature = Buffer.from('PK\x03\x04', 'latin1');
const mailHeader = /^(?:Return-Path|Received|Delivered-To|From|To|Subject|Date|Message-ID|MIME-Version|X-[\w-]+):/i;

/**
 * A file's media type by its first bytes (`head`, a few hundred are enough), then by its name's
 * extension; undefined for a kind Hearth does not read. A ZIP is a Word document only when named
 * .docx (other ZIPs are not read), and text without a known extension is plain text.
 */
export function detectMediaType(name: string, head: Buffer): string | undefined {
  const extension = /\.[^./\\]+$/.exec(name.toLowerCase())?.[0] ?? '';
  if (head.subarray(0, 1024).includes('%PDF-')) return documentMediaTypes.pdf;
  if (head.subarray(0, 4).equals(zipSignature)) return extension === '.docx' ? documentMediaTypes.docx : undefined;
  const named = byExtension[extension];
  if (!looksLikeText(head)) return named === documentMediaTypes.pdf || named === documentMediaTypes.docx ? named : undefined;
  const start = head.toString('utf8').replace(/^\uFEFF/, '').trimStart();
  if (named !== undefined && named !== documentMediaTypes.pdf && named !== documentMediaTypes.docx) return named;
  if (/^<(?:!doctype\s+html|html[\s>]|head[\s>]|body[\s>])/i.test(start)) return documentMediaTypes.html;
  if (mailHeader.test(start) && extension === '') return documentMediaTypes.email;
  // A .pdf or .docx that is text is not one; what it is instead is said by the reader that fails on it.
  return named ?? documentMediaTypes.text;
}

/** No NUL byte and hardly any control characters: UTF-8 or a single-byte encoding such as Windows-1252. */
function looksLikeText(head: Buffer): boolean {
  if (head.includes(0)) return false;
  let controls = 0;
  for (const byte of head) if (byte < 0x20 && !textControls.has(byte)) controls += 1;
  return controls <= head.length / 100;
}

/** Tab, line feed, form feed, carriage return and escape appear in text files. */
const textControls = new Set([0x09, 0x0a, 0x0c, 0x0d, 0x1b]);

/** A text file's characters: UTF-8 when it is valid UTF-8, else Windows-1252 (what older files of a home are mostly in). */
export function decodeText(content: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(content);
  } catch {
    return new TextDecoder('windows-1252').decode(content);
  }
}
