// The documents library in memory: a real SQLite file, the real extractor, the stand-in embedder
// (hashed bag-of-words vectors). Adding, indexing, searching, deleting, restarting, and who sees what.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { createDocumentExtractor } from '../../src/documents/extract/extract-document.ts';
import { documentFolder, type WrittenDocument } from '../support/document-files.ts';
import { jailFor } from '../support/jail.ts';
import { LibraryBench } from '../support/document-library.ts';
import { StandInEmbedder } from '../support/stand-in-embedder.ts';

let bench: LibraryBench;
beforeEach(async () => {
  bench = await LibraryBench.open();
});
afterEach(async () => {
  await bench.close();
});

const manual = `# Cooker hood

## Filters

The hood takes two aluminium grease filters, part GF-200. Wash them every month in hot soapy water.

## Lights

The lamps are 2 W LED bulbs with a G4 base.
`;

describe('adding and indexing', () => {
  it('a Markdown document reaches ready with its passages, and a question finds its passage', async () => {
    const added = await bench.add('adult', 'hood.md', manual);
    expect(added).toMatchObject({ name: 'hood.md', library: 'mine', owner_person_id: bench.people.adult.id, added_by: bench.people.adult.id, media_type: 'text/markdown', status: 'queued', source: 'rest' });
    const ready = await bench.reaches(added.id, 'ready', 'adult');
    expect(ready).toMatchObject({ passages: 2, pages: null, progress: null, error: null });
    const results = await bench.library.search(bench.caller('adult'), 'which filter does the cooker hood take?');
    expect(results[0]).toMatchObject({ document_id: added.id, name: 'hood.md', heading: 'Cooker hood › Filters', passage: 0, page: null });
    expect(results[0]!.text).toContain('GF-200');
    const passages = await bench.library.passages(bench.caller('adult'), added.id, { from: 1 });
    expect(passages).toEqual([{ document_id: added.id, ordinal: 1, page: null, heading: 'Cooker hood › Lights', text: 'The lamps are 2 W LED bulbs with a G4 base.' }]);
  });

  it('an unreadable file fails and says why', async () => {
    const added = await bench.add('adult', 'contract.docx', 'this is not a Word document at all');
    const failed = await bench.reaches(added.id, 'failed', 'adult');
    expect(failed.error).toMatch(/^contract\.docx could not be read as a Word document: .+/);
    expect(await bench.library.search(bench.caller('adult'), 'Word document')).toEqual([]);
  });

  it('a reader that throws on one file fails that document, and the next is still indexed', async () => {
    await bench.library.stop();
    const real = createDocumentExtractor({ jail: jailFor(parseConfig({ DATA_DIR: bench.folder })) });
    bench.library = await bench.openLibrary({
      extractor: { extract: async (file, signal) => (file.name === 'cursed.txt' ? Promise.reject(new TypeError('cannot read properties of undefined')) : real.extract(file, signal)) },
    });
    const cursed = await bench.add('adult', 'cursed.txt', 'Any text.');
    const fine = await bench.add('adult', 'fine.txt', 'The boiler is serviced in May.');
    expect((await bench.reaches(cursed.id, 'failed', 'adult')).error).toBe(
      'Hearth failed reading cursed.txt (an error of its own, in its log): cannot read properties of undefined',
    );
    await bench.reaches(fine.id, 'ready', 'adult');
  });

  it('refuses what it cannot take, saying why', async () => {
    const as = bench.caller('adult');
    const refused = async (name: string, content: Buffer) => bench.library.add({ caller: as, library: 'mine', name, content, source: 'page' });
    expect(await refused('big.txt', Buffer.alloc(3 * 1024 * 1024, 'a'))).toMatchObject({ ok: false, code: 'too_large', message: expect.stringContaining('upload limit') });
    expect(await refused('photo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]))).toMatchObject({ ok: false, code: 'unsupported_type', message: expect.stringContaining('PDF') });
    expect(await refused('empty.txt', Buffer.alloc(0))).toMatchObject({ ok: false, code: 'invalid_request' });
    expect(await refused('  ', Buffer.from('text'))).toMatchObject({ ok: false, code: 'invalid_request' });
    expect(await refused('bell\u0007.txt', Buffer.from('text'))).toMatchObject({ ok: false, code: 'invalid_request' });
    expect(bench.library.list(as)).toEqual([]);
  });
});

describe('real files of every kind', () => {
  it('a question whose answer is on page 3 of a PDF gets that passage first, with its page', async () => {
    const files = await documentFolder();
    try {
      const pdf = await files.pdf('hood-manual.pdf', [
        [{ heading: 'Cooker hood HX-60', level: 1, paragraphs: ['Thank you for choosing the HX-60 cooker hood. Read this manual before use.'] }],
        [{ heading: 'Installation', level: 1, paragraphs: ['Mount the hood 65 cm above an electric hob and 75 cm above a gas hob. Use the four wall plugs supplied.'] }],
        [{ heading: 'Maintenance', level: 1, paragraphs: [] }, { heading: 'Grease filters', level: 2, paragraphs: ['Wash the two aluminium grease filters every four weeks in hot water with washing-up liquid, or in the dishwasher at 65 degrees.'] }],
        [{ heading: 'Warranty', level: 1, paragraphs: ['The warranty covers defects of manufacture for two years from the date of purchase.'] }],
      ]);
      const docx = await files.docx('lease.docx', [{ heading: 'Lease', level: 1, paragraphs: ['The tenant pays the rent on the first day of each month. Pets need the landlord’s consent.'] }]);
      const html = await files.html('school.html', [{ heading: 'Parents evening', level: 1, paragraphs: ['Parents evening is on Thursday 12 March from 6 pm in the main hall.'] }]);
      const markdown = await files.markdown('recipe.md', [{ heading: 'Pancakes', level: 1, paragraphs: ['Whisk 200 g flour, two eggs and 300 ml milk; rest the batter for 30 minutes.'] }]);
      const added = [];
      for (const file of [pdf, docx, html, markdown] as WrittenDocument[]) {
        const summary = await bench.add('adult', file.name, await readFile(file.path), 'household');
        expect(summary.media_type).toBe(file.mediaType);
        added.push(await bench.reaches(summary.id, 'ready'));
      }
      expect(added[0]).toMatchObject({ name: 'hood-manual.pdf', pages: 4 });
      const results = await bench.library.search(bench.caller('child'), 'How often should I clean the grease filters?');
      expect(results[0]).toMatchObject({ document_id: added[0]!.id, name: 'hood-manual.pdf', page: 3, heading: 'Maintenance › Grease filters' });
      expect(results[0]!.text).toContain('every four weeks');
      const [evening] = await bench.library.search(bench.caller('child'), 'when is the parents evening?');
      expect(evening).toMatchObject({ name: 'school.html', page: null });
      const [rent] = await bench.library.search(bench.caller('child'), 'when is the rent due');
      expect(rent).toMatchObject({ name: 'lease.docx' });
    } finally {
      await files.remove();
    }
  });

  it('a scanned PDF fails, saying Hearth does not read text in images', async () => {
    const files = await documentFolder();
    try {
      const scan = await files.scannedPdf('letter.pdf', 2);
      const added = await bench.add('adult', scan.name, await readFile(scan.path));
      const failed = await bench.reaches(added.id, 'failed', 'adult');
      expect(failed.error).toMatch(/no text layer.*OCR/);
    } finally {
      await files.remove();
    }
  });
});

describe('deleting', () => {
  it('a deleted document never comes back: not listed, not opened, not found, its file gone', async () => {
    const added = await bench.add('adult', 'hood.md', manual);
    await bench.reaches(added.id, 'ready', 'adult');
    const as = bench.caller('adult');
    expect(await bench.library.search(as, 'grease filters')).not.toEqual([]);
    const file = bench.library.original(as, added.id)!.path;
    expect(existsSync(file)).toBe(true);
    expect(await bench.library.delete(as, added.id)).toBe(true);
    expect(bench.library.list(as)).toEqual([]);
    expect(bench.library.get(as, added.id)).toBeUndefined();
    expect(await bench.library.passages(as, added.id)).toBeUndefined();
    expect(await bench.library.search(as, 'grease filters')).toEqual([]);
    expect(bench.library.vectorCount).toBe(0);
    expect(existsSync(file)).toBe(false);
    expect(await bench.library.delete(as, added.id)).toBe(false);
    await bench.reopen();
    expect(await bench.library.search(as, 'grease filters')).toEqual([]);
  });

  it('deleted while its vectors are being made: none of them is kept', async () => {
    const held = bench.embedder.hold();
    const added = await bench.add('adult', 'hood.md', manual);
    await held.waiting;
    const as = bench.caller('adult');
    const deleted = new Promise((resolve) => bench.library.on((event) => event.type === 'document_deleted' && resolve(event)));
    expect(await bench.library.delete(as, added.id)).toBe(true);
    held.release();
    expect(await deleted).toEqual({ type: 'document_deleted', id: added.id, library: 'mine', owner_person_id: bench.people.adult.id });
    const other = await bench.add('adult', 'other.md', 'Something else entirely.');
    await bench.reaches(other.id, 'ready', 'adult');
    expect(bench.library.vectorCount).toBe(1);
    expect(await bench.library.search(as, 'grease filters hood')).toEqual([]);
  });
});

describe('restarting', () => {
  it('a restart in the middle of indexing finishes the job, keeping the vectors already made', async () => {
    const long = Array.from({ length: 12 }, (_, index) => `## Part ${index + 1}\n\nThe paragraph of part ${index + 1} about topic${index + 1}.`).join('\n\n');
    // Held as the first batch's progress is told, before the indexer asks for the second.
    const firstBatch = new Promise<ReturnType<StandInEmbedder['hold']>>((resolve) => {
      const stop = bench.library.on((event) => {
        if (event.type === 'document_status' && (event.document.progress ?? 0) > 0) {
          stop();
          resolve(bench.embedder.hold());
        }
      });
    });
    const added = await bench.add('adult', 'parts.md', long);
    const held = await firstBatch;
    await held.waiting;
    expect(bench.library.get(bench.caller('adult'), added.id)).toMatchObject({ status: 'indexing', passages: 12, progress: 4 / 12 });
    const second = new StandInEmbedder();
    const reopened = await bench.reopen(second);
    held.release();
    const ready = await bench.reaches(added.id, 'ready', 'adult', reopened);
    expect(ready).toMatchObject({ passages: 12, progress: null });
    expect(second.embeddedTexts).toBe(8);
    expect(reopened.vectorCount).toBe(12);
    const [first] = await reopened.search(bench.caller('adult'), 'topic3');
    expect(first).toMatchObject({ heading: 'Part 3', passage: 2 });
  });

  it('a new embedding model embeds every passage again in the background, words still found meanwhile', async () => {
    const added = await bench.add('adult', 'hood.md', manual);
    await bench.reaches(added.id, 'ready', 'adult');
    const newer = new StandInEmbedder('hashed-words-2', 128);
    const held = newer.hold();
    const reopened = await bench.reopen(newer);
    await held.waiting;
    expect(reopened.get(bench.caller('adult'), added.id)).toMatchObject({ status: 'indexing', progress: 0 });
    expect((await reopened.search(bench.caller('adult'), 'LED bulbs'))[0]).toMatchObject({ heading: 'Cooker hood › Lights' });
    held.release();
    await bench.reaches(added.id, 'ready', 'adult', reopened);
    // Two passages; the question above was not embedded, as no vector of the new model existed yet.
    expect(newer.embeddedTexts).toBe(2);
    expect(reopened.vectorCount).toBe(2);
    const rows = await bench.db.selectFrom('document_passages').select('embedding_model').execute();
    expect(rows.map((row) => row.embedding_model)).toEqual(['hashed-words-2', 'hashed-words-2']);
  });
});

describe('while the embeddings backend is unreachable', () => {
  it('a document waits saying why, search answers from its words, and it is indexed once the backend is back', async () => {
    bench.embedder.takeDown();
    const added = await bench.add('adult', 'hood.md', manual);
    const waiting = await new Promise<{ status: string; error: string | null }>((resolve) => {
      const stop = bench.library.on((event) => {
        if (event.type === 'document_status' && event.document.error !== null) {
          stop();
          resolve(event.document);
        }
      });
    });
    expect(waiting.status).toBe('indexing');
    expect(waiting.error).toMatch(/^Waiting for the embeddings backend \(EMBEDDING_MODEL hashed-words\): Ollama is not reachable/);
    const callsBefore = bench.embedder.calls;
    const [found] = await bench.library.search(bench.caller('adult'), 'grease filters');
    expect(found).toMatchObject({ document_id: added.id, heading: 'Cooker hood › Filters' });
    expect(bench.embedder.calls).toBe(callsBefore);
    bench.embedder.bringBack();
    expect(await bench.reaches(added.id, 'ready', 'adult')).toMatchObject({ error: null, progress: null });
  });
});

describe('who sees what', () => {
  it("a person's own documents are theirs alone; the household's are everyone's but guests'", async () => {
    const own = await bench.add('adult', 'payslip.txt', 'Salary for November: the payslip of the adult.');
    const shared = await bench.add('adult', 'bins.txt', 'Bin collection: the recycling bin goes out on Tuesday.', 'household');
    await bench.reaches(own.id, 'ready', 'adult');
    await bench.reaches(shared.id, 'ready', 'adult');
    const names = (who: Parameters<LibraryBench['caller']>[0]) => bench.library.list(bench.caller(who)).map((document) => document.name).sort();
    expect(names('adult')).toEqual(['bins.txt', 'payslip.txt']);
    for (const who of ['owner', 'otherAdult', 'child'] as const) {
      expect(names(who)).toEqual(['bins.txt']);
      expect(bench.library.get(bench.caller(who), own.id)).toBeUndefined();
      expect(await bench.library.passages(bench.caller(who), own.id)).toBeUndefined();
      expect(bench.library.original(bench.caller(who), own.id)).toBeUndefined();
      expect(await bench.library.delete(bench.caller(who), own.id)).toBe(false);
      const found = await bench.library.search(bench.caller(who), 'payslip salary November recycling');
      expect(found.map((result) => result.name)).toEqual(['bins.txt']);
    }
    expect(names('guest')).toEqual([]);
    expect(await bench.library.search(bench.caller('guest'), 'recycling bin')).toEqual([]);
    expect(bench.library.get(bench.caller('guest'), shared.id)).toBeUndefined();
  });

  it('children read the household library but do not add to it; guests add nothing; who added it or the owner deletes it', async () => {
    const child = bench.caller('child');
    expect(await bench.library.add({ caller: child, library: 'household', name: 'a.txt', content: Buffer.from('text'), source: 'page' })).toMatchObject({ ok: false, code: 'forbidden' });
    expect(await bench.library.add({ caller: child, library: 'mine', name: 'homework.txt', content: Buffer.from('text'), source: 'page' })).toMatchObject({ ok: true });
    for (const library of ['mine', 'household'] as const) {
      expect(await bench.library.add({ caller: bench.caller('guest'), library, name: 'a.txt', content: Buffer.from('text'), source: 'page' })).toMatchObject({ ok: false, code: 'forbidden' });
    }
    const shared = await bench.add('adult', 'bins.txt', 'Bin collection on Tuesday.', 'household');
    expect(bench.library.mayDelete(child, shared.id)).toBe(false);
    expect(await bench.library.delete(child, shared.id)).toBe(false);
    expect(bench.library.mayDelete(bench.caller('otherAdult'), shared.id)).toBe(false);
    expect(bench.library.mayDelete(bench.caller('owner'), shared.id)).toBe(true);
    expect(bench.library.mayDelete(bench.caller('adult'), shared.id)).toBe(true);
    expect(await bench.library.delete(bench.caller('owner'), shared.id)).toBe(true);
  });
});
