// What Hearth reads out of each kind of document (issue 39): real files written by the test,
// PDFs read by Debian's pdftotext in the strict jail, the others by their libraries.
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { createDocumentExtractor, detectMediaType, documentMediaTypes, type ExtractedDocument, type ExtractionResult } from '../../src/documents/extract/extract-document.ts';
import { documentFolder, type DocumentFolder, type DocumentSection } from '../support/document-files.ts';
import { jailFor } from '../support/jail.ts';
import { processHasEnded } from '../support/processes.ts';
import { waitUntil } from '../support/wait-until.ts';

const jail = jailFor(parseConfig({}));
const extractor = createDocumentExtractor({ jail });
let files: DocumentFolder;

beforeAll(async () => {
  files = await documentFolder();
});
afterAll(async () => {
  await files.remove();
  jail.close();
});

const manual: DocumentSection[][] = [
  [
    { heading: 'Cooker hood KH-60', paragraphs: ['Thank you for choosing the KH-60. Read this manual before you install the hood.'] },
    { heading: 'Safety', level: 2, paragraphs: ['Never flambé under the hood.', 'Keep children away while it runs.'] },
  ],
  [{ heading: 'Warranty', paragraphs: ['The warranty lasts two years from the date of purchase.'] }, { heading: 'Exclusions', level: 2, paragraphs: ['Water damage is not covered.'] }],
  [
    { paragraphs: ['Exclusions also cover damage by misuse.'] },
    { heading: 'Filters', paragraphs: ['Change the filters every three months.'] },
    { heading: 'Carbon filter', level: 2, paragraphs: ['The hood takes the carbon filter CF-22, sold in pairs.'] },
  ],
];

/** The file as an upload of unknown type: its media type found from its bytes and name. */
function unnamed(file: { path: string; name: string }): { path: string; name: string } {
  return { path: file.path, name: file.name };
}

function extracted(result: ExtractionResult): ExtractedDocument {
  if (!result.success) throw new Error(`expected text, got: ${result.error}`);
  return result.document;
}

/** Each block as `page|kind|heading path|text`, the shape the assertions read best in. */
function lines(document: ExtractedDocument): string[] {
  return document.blocks.map((block) => `${block.page ?? '-'}|${block.kind}|${block.headingPath.join(' › ')}|${block.text}`);
}

describe('a PDF with a text layer', () => {
  it('gives its pages, paragraphs and headings by type size, with each block on its page', async () => {
    const pdf = await files.pdf('hood-manual.pdf', manual);
    const document = extracted(await extractor.extract(pdf));
    expect(document.mediaType).toBe(documentMediaTypes.pdf);
    expect(document.pages).toBe(3);
    expect(lines(document)).toEqual([
      '1|heading|Cooker hood KH-60|Cooker hood KH-60',
      '1|paragraph|Cooker hood KH-60|Thank you for choosing the KH-60. Read this manual before you install the hood.',
      '1|heading|Cooker hood KH-60 › Safety|Safety',
      '1|paragraph|Cooker hood KH-60 › Safety|Never flambé under the hood.',
      '1|paragraph|Cooker hood KH-60 › Safety|Keep children away while it runs.',
      '2|heading|Warranty|Warranty',
      '2|paragraph|Warranty|The warranty lasts two years from the date of purchase.',
      '2|heading|Warranty › Exclusions|Exclusions',
      '2|paragraph|Warranty › Exclusions|Water damage is not covered.',
      // A page that goes on under the last heading keeps it.
      '3|paragraph|Warranty › Exclusions|Exclusions also cover damage by misuse.',
      '3|heading|Filters|Filters',
      '3|paragraph|Filters|Change the filters every three months.',
      '3|heading|Filters › Carbon filter|Carbon filter',
      '3|paragraph|Filters › Carbon filter|The hood takes the carbon filter CF-22, sold in pairs.',
    ]);
  });

  it('joins a paragraph wrapped over lines into one, and says its media type without being told', async () => {
    const long = 'The parents evening is on Thursday the fourth of December, from six until eight, in the main hall; '.repeat(4).trim();
    const pdf = await files.pdf('letter.pdf', [[{ paragraphs: [long] }]]);
    const document = extracted(await extractor.extract({ path: pdf.path, name: 'letter (no extension)' }));
    expect(document.blocks).toEqual([{ page: 1, headingPath: [], text: long, kind: 'paragraph' }]);
  });

  it('leaves out the header or footer that comes back on every page', async () => {
    const pages = [1, 2, 3, 4].map((page) => [{ heading: `Step ${page}`, paragraphs: [`Do step number ${page} of the descaling.`] }]);
    const pdf = await files.pdf('descaling.pdf', pages, { footer: (page) => `Coffee machine CM-3, descaling guide, page ${page} of 4` });
    const document = extracted(await extractor.extract(pdf));
    expect(document.pages).toBe(4);
    expect(document.blocks.map((block) => block.text)).toEqual(pages.flatMap(([section]) => [section!.heading, ...section!.paragraphs]));
  });

  it('says a scanned PDF has no text layer, rather than giving an empty document', async () => {
    const scan = await files.scannedPdf('scan.pdf', 2);
    expect(await extractor.extract(scan)).toEqual({
      success: false,
      error: 'This PDF has no text layer (a scanned image); Hearth does not read text in images (OCR).',
    });
  });

  it('says a PDF locked with a password cannot be opened', async () => {
    const locked = await files.pdf('payslip.pdf', [[{ paragraphs: ['Net pay: 2,100 euros.'] }]], { password: 'secret' });
    expect(await extractor.extract(locked)).toEqual({ success: false, error: 'This PDF is locked with a password; Hearth cannot open it. Add a copy saved without the password.' });
  });

  it('says why a damaged PDF cannot be read, in pdftotext words', async () => {
    const damaged = await files.text('damaged.pdf', Buffer.from('%PDF-1.7\n1 0 obj << /Type /Catalog >>\nthe rest is missing'));
    const result = await extractor.extract(unnamed(damaged));
    expect(result.success).toBe(false);
    expect(!result.success && result.error).toMatch(/^This file could not be read as a PDF \(pdftotext: .*\w.*\)\.$/);
  });

  it('ends a pdftotext that does not finish when the timeout comes, with all it started', async () => {
    const endless = await files.endlessPdf('endless.pdf');
    const timeoutMs = 1500;
    const started = Date.now();
    const pending = createDocumentExtractor({ jail, timeoutMs }).extract(endless);
    // It really runs (and so really hangs) before the timeout ends it.
    const running = await waitUntil(() => {
      const found = descendantsNamed(process.pid, 'pdftotext');
      return found.length > 0 && found;
    });
    const result = await pending;
    expect(result).toEqual({ success: false, error: 'pdftotext took longer than 1.5 s to read the PDF and was stopped; the file may be damaged or built to be slow.' });
    expect(Date.now() - started).toBeLessThan(timeoutMs + 5_000);
    await waitUntil(() => running.every(processHasEnded));
  });

  it('stops reading when its signal aborts', async () => {
    const endless = await files.endlessPdf('endless-aborted.pdf');
    const abort = new AbortController();
    const pending = extractor.extract(endless, abort.signal);
    await waitUntil(() => descendantsNamed(process.pid, 'pdftotext').length > 0);
    abort.abort();
    expect(await pending).toEqual({ success: false, error: 'Stopped before the PDF was read.' });
  });
});

describe('a Word document', () => {
  it('gives its Heading 1 and Heading 2 paragraphs as nested headings, through mammoth', async () => {
    const docx = await files.docx('contract.docx', [
      { heading: 'Rental contract', paragraphs: ['Between the landlord and the tenants.'] },
      { heading: 'Rent', level: 2, paragraphs: ['The rent is 950 euros a month, due on the first.'] },
      { heading: 'Notice', level: 2, paragraphs: ['Three months, in writing.'] },
      { heading: 'Signatures', paragraphs: ['Signed in Utrecht.'] },
    ]);
    const document = extracted(await extractor.extract(docx));
    expect(document.mediaType).toBe(documentMediaTypes.docx);
    expect(document.pages).toBeNull();
    expect(lines(document)).toEqual([
      '-|heading|Rental contract|Rental contract',
      '-|paragraph|Rental contract|Between the landlord and the tenants.',
      '-|heading|Rental contract › Rent|Rent',
      '-|paragraph|Rental contract › Rent|The rent is 950 euros a month, due on the first.',
      '-|heading|Rental contract › Notice|Notice',
      '-|paragraph|Rental contract › Notice|Three months, in writing.',
      '-|heading|Signatures|Signatures',
      '-|paragraph|Signatures|Signed in Utrecht.',
    ]);
  });

  it('refuses one whose text unpacks to more than 200 MB before mammoth opens it (a ZIP bomb)', async () => {
    const bomb = await files.bombDocx('bomb.docx', 210);
    expect(await extractor.extract(bomb)).toEqual({
      success: false,
      error: "This Word document's text does not unpack: it is damaged, or unpacks to more than the 200 MB Hearth reads.",
    });
  });

  it('says a damaged one cannot be read as a Word document', async () => {
    const damaged = await files.text('damaged.docx', Buffer.from('PK\x03\x04 not really a zip', 'latin1'));
    const result = await extractor.extract(unnamed(damaged));
    expect(!result.success && result.error).toMatch(/^damaged\.docx could not be read as a Word document: .+\.$/);
  });
});

describe('HTML, Markdown and text', () => {
  it('reads HTML headings and paragraphs, and never its scripts or styles', async () => {
    const html = await files.html('recipe.html', [
      { heading: 'Pancakes', paragraphs: ['Serves four.'] },
      { heading: 'Batter', level: 2, paragraphs: ['Whisk 250 g flour, 3 eggs and 500 ml milk.'] },
    ], { script: 'document.title = "never read"' });
    const document = extracted(await extractor.extract(html));
    expect(lines(document)).toEqual([
      '-|heading|Pancakes|Pancakes',
      '-|paragraph|Pancakes|Serves four.',
      '-|heading|Pancakes › Batter|Batter',
      '-|paragraph|Pancakes › Batter|Whisk 250 g flour, 3 eggs and 500 ml milk.',
    ]);
    expect(JSON.stringify(document)).not.toMatch(/never read|color: black/);
  });

  it('reads loose text in HTML containers and list items as paragraphs, inside a form too', async () => {
    // A page saved from a site that wraps it all in a form (as ASP.NET pages do) is read all the same; the buttons are not.
    const html = await files.text('notes.html', '<form><div>Bins go out on Tuesday.<ul><li>Paper: blue bin</li><li>Glass: <b>green</b> bin</li></ul></div><button>Send</button></form>', documentMediaTypes.html);
    expect(lines(extracted(await extractor.extract(html)))).toEqual(['-||Bins go out on Tuesday.', '-||Paper: blue bin', '-||Glass: green bin'].map((line) => line.replace('||', '|paragraph||')));
  });

  it('reads Markdown headings as nested headings, and a # in code as code', async () => {
    const markdown = await files.text('plants.md', '# Plants\n\nWater weekly.\n\n## Fern\n\nKeep it out of the sun.\n\n```sh\n# not a heading\n```\n\n# Garden\n\nMow in May.\n');
    const document = extracted(await extractor.extract(unnamed(markdown)));
    expect(document.mediaType).toBe(documentMediaTypes.markdown);
    expect(lines(document)).toEqual([
      '-|heading|Plants|Plants',
      '-|paragraph|Plants|Water weekly.',
      '-|heading|Plants › Fern|Fern',
      '-|paragraph|Plants › Fern|Keep it out of the sun.',
      '-|paragraph|Plants › Fern|```sh\n# not a heading\n```',
      '-|heading|Garden|Garden',
      '-|paragraph|Garden|Mow in May.',
    ]);
  });

  it('reads the helper Markdown with its levels', async () => {
    const markdown = await files.markdown('levels.md', [{ heading: 'A', paragraphs: ['one'] }, { heading: 'B', level: 2, paragraphs: ['two'] }]);
    expect(lines(extracted(await extractor.extract(markdown)))).toEqual(['-|heading|A|A', '-|paragraph|A|one', '-|heading|A › B|B', '-|paragraph|A › B|two']);
  });

  it('splits plain text at blank lines', async () => {
    const text = await files.text('wifi.txt', 'Network: home-5g\r\nPassword: on the router\r\n\r\n\r\nGuests: home-guest\n');
    const document = extracted(await extractor.extract(unnamed(text)));
    expect(document).toEqual({
      mediaType: documentMediaTypes.text,
      pages: null,
      blocks: [
        { page: null, headingPath: [], text: 'Network: home-5g\nPassword: on the router', kind: 'paragraph' },
        { page: null, headingPath: [], text: 'Guests: home-guest', kind: 'paragraph' },
      ],
    });
  });

  it('reads a text file in Windows-1252, as older files often are, as well as UTF-8', async () => {
    const latin = await files.text('recipes.txt', Buffer.from('Caf\xe9 au lait\n\nCr\xe8me br\xfbl\xe9e', 'latin1'));
    expect(lines(extracted(await extractor.extract(unnamed(latin))))).toEqual(['-|paragraph||Café au lait', '-|paragraph||Crème brûlée']);
  });

  it('says an empty text file holds no text', async () => {
    const empty = await files.text('empty.txt', '\n\n  \n');
    expect(await extractor.extract(unnamed(empty))).toEqual({ success: false, error: 'The file holds no text.' });
  });
});

describe('an e-mail', () => {
  it('gives the subject as the heading, who and when, the body, and the attachments by name only', async () => {
    const eml = await files.email('school.eml', {
      subject: 'Parents evening',
      from: 'School Office <office@school.example>',
      to: 'parents@home.example',
      date: new Date('2026-11-02T09:30:00Z'),
      text: 'It is on Thursday at 18:00.\n\nBring the signed form.',
      attachments: [{ name: 'form.pdf', content: 'the attachment is never read' }],
    });
    const document = extracted(await extractor.extract(eml));
    expect(document.mediaType).toBe(documentMediaTypes.email);
    expect(lines(document)).toEqual([
      '-|heading|Parents evening|Parents evening',
      '-|paragraph|Parents evening|From: School Office <office@school.example>\nTo: parents@home.example\nDate: 2026-11-02T09:30:00.000Z',
      '-|paragraph|Parents evening|It is on Thursday at 18:00.',
      '-|paragraph|Parents evening|Bring the signed form.',
      '-|paragraph|Parents evening|Attachments (not read): form.pdf',
    ]);
    expect(JSON.stringify(document)).not.toContain('never read');
  });

  it('reads an HTML-only body as HTML, under the subject', async () => {
    const eml = await files.email('newsletter.eml', { subject: 'Club news', from: 'club@example.org', to: 'me@home.example', html: '<h1>Training</h1><p>Moves to <b>Wednesday</b>.</p><script>steal()</script>' });
    expect(lines(extracted(await extractor.extract(eml))).slice(2)).toEqual(['-|heading|Club news › Training|Training', '-|paragraph|Club news › Training|Moves to Wednesday.']);
  });
});

describe('what Hearth does not read', () => {
  it('names the formats it reads for another kind of file', async () => {
    const png = await files.text('photo.png', Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'));
    expect(await extractor.extract(unnamed(png))).toEqual({
      success: false,
      error: 'photo.png is a kind of file Hearth does not recognise. Hearth reads PDF (with a text layer), Word (.docx), HTML, Markdown, plain text and e-mail (.eml).',
    });
  });

  it('says a file that is not there cannot be read', async () => {
    const result = await extractor.extract({ path: `${files.folder}/missing.txt`, name: 'missing.txt' });
    expect(!result.success && result.error).toMatch(/^The file could not be read: ENOENT/);
  });
});

describe('detectMediaType', () => {
  const text = Buffer.from('Hello there\n');
  it.each([
    ['manual.PDF', Buffer.from('%PDF-1.4\n%\xe2\xe3'), documentMediaTypes.pdf],
    ['manual', Buffer.from('%PDF-1.4\n'), documentMediaTypes.pdf],
    ['letter.docx', Buffer.from('PK\x03\x04\x14\x00', 'latin1'), documentMediaTypes.docx],
    ['archive.zip', Buffer.from('PK\x03\x04\x14\x00', 'latin1'), undefined],
    ['page.htm', text, documentMediaTypes.html],
    ['saved', Buffer.from('<!DOCTYPE html><html><body>x'), documentMediaTypes.html],
    ['notes.md', text, documentMediaTypes.markdown],
    ['notes.txt', text, documentMediaTypes.text],
    ['README', text, documentMediaTypes.text],
    ['mail.eml', text, documentMediaTypes.email],
    ['message', Buffer.from('Received: from mx\r\nSubject: hi\r\n'), documentMediaTypes.email],
    ['photo.jpg', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]), undefined],
    ['data.bin', Buffer.from([0, 1, 2, 3]), undefined],
  ])('%s → %s', (name, head, expected) => {
    expect(detectMediaType(name, head)).toBe(expected);
  });
});

/** The processes below `ancestor` whose command is `name`, found through /proc. */
function descendantsNamed(ancestor: number, name: string): number[] {
  const parents = new Map<number, number>();
  const names = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      names.set(Number(entry), stat.slice(stat.indexOf('(') + 1, close));
      parents.set(Number(entry), Number(stat.slice(close + 2).split(' ')[1]));
    } catch {
      // ended meanwhile
    }
  }
  const below = (pid: number): boolean => {
    for (let parent = parents.get(pid); parent !== undefined && parent > 1; parent = parents.get(parent)) if (parent === ancestor) return true;
    return false;
  };
  return [...names].filter(([pid, command]) => command === name && below(pid)).map(([pid]) => pid);
}
