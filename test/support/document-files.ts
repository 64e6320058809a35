// Real documents written by a test into a temp folder, for the documents library (issue 39):
// PDFs with a text layer (pdfkit, which is maintained and lays out text with the standard fonts,
// one heading size per level), a scanned PDF (an image and no text), a PDF that keeps pdftotext
// busy forever, a Word document (the `docx` package, with Word's own heading styles), Markdown,
// HTML, plain text and an e-mail.
//
//   const files = await documentFolder();
//   const pdf = await files.pdf('manual.pdf', [[{ heading: 'Warranty', paragraphs: ['Two years.'] }], [...page 2]]);
//   ... files.remove() in afterEach (or afterAll)
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import { deflateRawSync } from 'node:zlib';
import { Document, HeadingLevel, Packer, Paragraph } from 'docx';
import PDFDocument from 'pdfkit';
import { documentMediaTypes as mediaTypes } from '../../src/documents/extract/detect-media-type.ts';

/** A heading (level 1 outermost) and the paragraphs under it; no heading continues the one before. */
export interface DocumentSection {
  heading?: string;
  level?: 1 | 2 | 3;
  paragraphs: string[];
}

/** A file written, with the name and media type it would be added under. */
export interface WrittenDocument {
  path: string;
  name: string;
  mediaType: string;
}

export interface EmailContent {
  subject: string;
  from: string;
  to: string;
  date?: Date;
  text?: string;
  html?: string;
  /** File names and contents, attached as application/octet-stream. */
  attachments?: { name: string; content: string }[];
}

export interface DocumentFolder {
  folder: string;
  /** One page per entry of `pages`, each its sections in order; `footer` is written at the foot of each page. */
  pdf(name: string, pages: DocumentSection[][], options?: { footer?: (page: number) => string; password?: string }): Promise<WrittenDocument>;
  /** Pages holding only an image, as a scanner makes them: no text layer. */
  scannedPdf(name: string, pages?: number): Promise<WrittenDocument>;
  /** A 3 KB PDF whose page draws a form nine levels deep, ten times each: a billion drawing operations, minutes of pdftotext. */
  endlessPdf(name: string): Promise<WrittenDocument>;
  docx(name: string, sections: DocumentSection[]): Promise<WrittenDocument>;
  /** A ~1 MB .docx whose document.xml inflates to `megabytes` of spaces (a ZIP bomb); its checksums are not filled in. */
  bombDocx(name: string, megabytes: number): Promise<WrittenDocument>;
  markdown(name: string, sections: DocumentSection[]): Promise<WrittenDocument>;
  html(name: string, sections: DocumentSection[], options?: { title?: string; script?: string }): Promise<WrittenDocument>;
  text(name: string, content: string | Buffer, mediaType?: string): Promise<WrittenDocument>;
  email(name: string, content: EmailContent): Promise<WrittenDocument>;
  remove(): Promise<void>;
}


/** An 8×8 grey checkerboard PNG: what a scanned page holds instead of text. */
const scanImage = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAAAAADhZOFXAAAAE0lEQVR4nGPQOAGBDFBag4EsEQA4hB4Bk0b9qwAAAABJRU5ErkJggg==', 'base64');
const headingSizes = { 1: 20, 2: 16, 3: 13.5 } as const;
const bodySize = 11;

/** A new folder in the temp folder, or where an absolute `prefix` says (a HOME, a DATA_DIR). */
export async function documentFolder(prefix = 'hearth-documents-'): Promise<DocumentFolder> {
  const folder = await mkdtemp(path.isAbsolute(prefix) ? prefix : path.join(tmpdir(), prefix));
  const written = (name: string, mediaType: string): WrittenDocument => ({ path: path.join(folder, name), name, mediaType });
  const writePdf = async (name: string, draw: (document: PDFKit.PDFDocument) => void, password?: string): Promise<WrittenDocument> => {
    const file = written(name, mediaTypes.pdf);
    const document = new PDFDocument({ autoFirstPage: false, info: { Title: name }, ...(password !== undefined && { userPassword: password }) });
    const output = createWriteStream(file.path);
    document.pipe(output);
    draw(document);
    document.end();
    await finished(output);
    return file;
  };
  return {
    folder,
    pdf: (name, pages, options = {}) =>
      writePdf(name, (document) => {
        for (const [index, sections] of pages.entries()) {
          document.addPage();
          if (options.footer) document.font('Helvetica').fontSize(9).text(options.footer(index + 1), 72, 740, { lineBreak: false }).text('', 72, 72);
          for (const section of sections) {
            if (section.heading !== undefined) document.font('Helvetica-Bold').fontSize(headingSizes[section.level ?? 1]).text(section.heading).moveDown(0.5);
            for (const paragraph of section.paragraphs) document.font('Helvetica').fontSize(bodySize).text(paragraph).moveDown(0.8);
          }
        }
      }, options.password),
    scannedPdf: (name, pages = 1) =>
      writePdf(name, (document) => {
        for (let page = 0; page < pages; page += 1) document.addPage().image(scanImage, 72, 72, { width: 400 });
      }),
    endlessPdf: (name) =>
      writePdf(name, (document) => {
        document.addPage().text('A page whose drawing never ends.');
        let inner: PDFKit.PDFKitReference | undefined;
        for (let depth = 0; depth < 9; depth += 1) {
          const form = document.ref({ Type: 'XObject', Subtype: 'Form', BBox: [0, 0, 10, 10], Resources: inner ? { XObject: { X: inner } } : {} });
          form.end(inner ? '/X Do '.repeat(10) : '0 0 m 1 1 l S '.repeat(10));
          inner = form;
        }
        (document.page as unknown as { xobjects: Record<string, unknown> }).xobjects.Endless = inner;
        document.addContent('/Endless Do');
      }),
    docx: async (name, sections) => {
      const file = written(name, mediaTypes.docx);
      const levels = { 1: HeadingLevel.HEADING_1, 2: HeadingLevel.HEADING_2, 3: HeadingLevel.HEADING_3 } as const;
      const children = sections.flatMap((section) => [
        ...(section.heading === undefined ? [] : [new Paragraph({ text: section.heading, heading: levels[section.level ?? 1] })]),
        ...section.paragraphs.map((paragraph) => new Paragraph({ text: paragraph })),
      ]);
      await writeFile(file.path, await Packer.toBuffer(new Document({ sections: [{ children }] })));
      return file;
    },
    bombDocx: async (name, megabytes) => {
      const file = written(name, mediaTypes.docx);
      const types = Buffer.from('<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>');
      await writeFile(file.path, zipArchive([
        { name: '[Content_Types].xml', method: 0, data: types },
        { name: 'word/document.xml', method: 8, data: deflateRawSync(Buffer.alloc(megabytes * 1024 * 1024, 0x20), { level: 1 }) },
      ]));
      return file;
    },
    markdown: async (name, sections) => {
      const file = written(name, mediaTypes.markdown);
      const text = sections
        .map((section) => [...(section.heading === undefined ? [] : [`${'#'.repeat(section.level ?? 1)} ${section.heading}`]), ...section.paragraphs].join('\n\n'))
        .join('\n\n');
      await writeFile(file.path, `${text}\n`);
      return file;
    },
    html: async (name, sections, options = {}) => {
      const file = written(name, mediaTypes.html);
      const body = sections
        .map((section) => {
          const level = section.level ?? 1;
          const heading = section.heading === undefined ? '' : `<h${level}>${escapeHtml(section.heading)}</h${level}>\n`;
          return `<section>\n${heading}${section.paragraphs.map((paragraph) => `<p>${escapeHtml(paragraph)}</p>`).join('\n')}\n</section>`;
        })
        .join('\n');
      const script = options.script === undefined ? '' : `<script>${options.script}</script>`;
      await writeFile(file.path, `<!doctype html>\n<html><head><title>${escapeHtml(options.title ?? name)}</title><style>p { color: black }</style>${script}</head>\n<body>\n${body}\n</body></html>\n`);
      return file;
    },
    text: async (name, content, mediaType = mediaTypes.text) => {
      const file = written(name, mediaType);
      await writeFile(file.path, content);
      return file;
    },
    email: async (name, content) => {
      const file = written(name, mediaTypes.email);
      await writeFile(file.path, emailSource(content));
      return file;
    },
    remove: () => rm(folder, { recursive: true, force: true }),
  };
}

/** A ZIP archive of entries already compressed by `method` (0 stored, 8 deflated), CRCs left zero. */
function zipArchive(entries: { name: string; method: number; data: Buffer }[]): Buffer {
  const locals: Buffer[] = [];
  const directory: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(entry.method, 8);
    local.writeUInt32LE(entry.data.length, 18);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(entry.method, 10);
    central.writeUInt32LE(entry.data.length, 20);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, entry.data);
    directory.push(central, name);
    offset += local.length + name.length + entry.data.length;
  }
  const directorySize = directory.reduce((sum, part) => sum + part.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directorySize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...directory, end]);
}

/** An RFC 5322 message: multipart when it has an HTML body or attachments. */
function emailSource(content: EmailContent): string {
  const boundary = 'hearth-test-boundary';
  const headers = [
    `From: ${content.from}`,
    `To: ${content.to}`,
    `Subject: ${content.subject}`,
    `Date: ${(content.date ?? new Date('2026-11-02T09:30:00Z')).toUTCString()}`,
    'Message-ID: <test-message@hearth.invalid>',
    'MIME-Version: 1.0',
  ];
  const parts = [
    ...(content.text === undefined ? [] : [`Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n${content.text}`]),
    ...(content.html === undefined ? [] : [`Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n${content.html}`]),
    ...(content.attachments ?? []).map(
      (attachment) =>
        `Content-Type: application/octet-stream; name="${attachment.name}"\r\nContent-Disposition: attachment; filename="${attachment.name}"\r\nContent-Transfer-Encoding: base64\r\n\r\n${Buffer.from(attachment.content).toString('base64')}`,
    ),
  ];
  if (parts.length === 1 && content.attachments === undefined) return `${headers.join('\r\n')}\r\n${parts[0]!}\r\n`;
  const multipart = parts.map((part) => `--${boundary}\r\n${part}\r\n`).join('');
  return `${headers.join('\r\n')}\r\nContent-Type: multipart/mixed; boundary="${boundary}"\r\n\r\n${multipart}--${boundary}--\r\n`;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
