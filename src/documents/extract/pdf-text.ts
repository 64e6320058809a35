import type { Jail } from '../../jail/jail.ts';
import { runJailedFilter, type FilterResult } from '../../jail/jailed-filter.ts';
import { documentMediaTypes } from './detect-media-type.ts';
import type { ExtractionResult } from './extracted-document.ts';
import { pdfLayoutBlocks } from './pdf-layout.ts';

export interface PdfReaderOptions {
  jail: Jail;
  timeoutMs: number;
  executable: string;
}

/** More layout than this (about a million words) is refused rather than held in memory. */
const maxLayoutBytes = 128 * 1024 * 1024;
export const scannedPdfError = 'This PDF has no text layer (a scanned image); Hearth does not read text in images (OCR).';

/**
 * A PDF read by Debian's poppler `pdftotext` in the strict jail without network, the file on its
 * standard input: the PDF is untrusted and a PDF parser is a large surface. Its word layout gives
 * the pages, the paragraphs and, by type size, the headings.
 */
export class PdfReader {
  constructor(private readonly options: PdfReaderOptions) {}

  async extract(content: Buffer, signal?: AbortSignal): Promise<ExtractionResult> {
    const refused = this.options.jail.refusal('Reading PDFs (pdftotext)');
    if (refused !== undefined) return { success: false, error: refused };
    const result = await runJailedFilter({
      executable: this.options.executable,
      args: ['-bbox-layout', '-enc', 'UTF-8', '-', '-'],
      input: content,
      jail: this.options.jail,
      timeoutMs: this.options.timeoutMs,
      maxOutputBytes: maxLayoutBytes,
      ...(signal !== undefined && { signal }),
    });
    if (!result.ok) return { success: false, error: this.failure(result) };
    const { pages, words, blocks } = pdfLayoutBlocks(result.output.toString('utf8'));
    if (pages === 0) return { success: false, error: `This file could not be read as a PDF (pdftotext: ${pdftotextReason(result.stderr)}).` };
    if (words === 0) return { success: false, error: scannedPdfError };
    return { success: true, document: { mediaType: documentMediaTypes.pdf, pages, blocks } };
  }

  private failure(result: Exclude<FilterResult, { ok: true }>): string {
    switch (result.reason) {
      case 'not_started':
        return /ENOENT/.test(result.message ?? '') ? notInstalled : `PDF reading could not start: ${result.message ?? 'no reason given'}.`;
      case 'timeout':
        return `pdftotext took longer than ${this.options.timeoutMs / 1000} s to read the PDF and was stopped; the file may be damaged or built to be slow.`;
      case 'aborted':
        return 'Stopped before the PDF was read.';
      case 'output_too_large':
        return `The PDF holds more text than Hearth reads from one document (${maxLayoutBytes / 1024 / 1024} MB of layout).`;
      case 'failed':
        if (/execvp|No such file or directory.*pdftotext/.test(result.stderr)) return notInstalled;
        if (/Incorrect password/i.test(result.stderr)) return 'This PDF is locked with a password; Hearth cannot open it. Add a copy saved without the password.';
        return `This file could not be read as a PDF (pdftotext: ${pdftotextReason(result.stderr)}).`;
    }
  }
}

const notInstalled = 'pdftotext is not installed, and Hearth reads PDFs with it: apt install poppler-utils.';

/** pdftotext's last error line, without its "Syntax Error:" prefix noise. */
function pdftotextReason(stderr: string): string {
  const lines = stderr.split('\n').map((line) => line.trim()).filter((line) => line !== '');
  const errors = lines.filter((line) => /error/i.test(line));
  return (errors.at(-1) ?? lines.at(-1) ?? 'no text and no reason given').replace(/^(Syntax |Command Line |I\/O |Internal )?Error( \(\d+\))?:\s*/i, '');
}
