// Run as a child (as root, and as the unprivileged test user, by test/security/pdf-jail.test.ts):
// builds the jail Hearth would build for DATA_DIR (argv[2]), reads a PDF through the document
// extractor, then attacks from the PDF reader's jail (the strict one without network that
// runs pdftotext): pdftotext asked to read a PDF in this user's HOME and one in DATA_DIR, and
// curl in the same jail asked to fetch a URL (argv[3]). Prints what happened as JSON.
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseConfig } from '../../src/config.ts';
import { createDocumentExtractor } from '../../src/documents/extract/extract-document.ts';
import { Jail } from '../../src/jail/jail.ts';
import { runJailedFilter } from '../../src/jail/jailed-filter.ts';
import { documentFolder } from './document-files.ts';

const [dataDir, url] = process.argv.slice(2);
const quiet = { warn: () => undefined, info: () => undefined };
const jail = await Jail.create({ config: parseConfig({ DATA_DIR: dataDir }), logger: quiet });
const secret = 'The safe code is 4711';

// A PDF in the user's own HOME and one in DATA_DIR, each readable by this user outside the jail.
const inHome = await documentFolder(path.join(os.homedir(), '.hearth-pdf-jail-'));
const inDataDir = await documentFolder(path.join(dataDir!, 'documents-'));
const homePdf = await inHome.pdf('secret.pdf', [[{ paragraphs: [secret] }]]);
const dataPdf = await inDataDir.pdf('secret.pdf', [[{ paragraphs: [secret] }]]);
const outside = (await promisify(execFile)('pdftotext', [homePdf.path, '-'])).stdout;

const extracted = await createDocumentExtractor({ jail }).extract(dataPdf);
const inJail = (args: string[], executable = 'pdftotext') =>
  runJailedFilter({ executable, args, input: Buffer.alloc(0), jail, timeoutMs: 10_000, maxOutputBytes: 1_000_000 });
const readHome = await inJail([homePdf.path, '-']);
const readDataDir = await inJail([dataPdf.path, '-']);
const fetched = await inJail(['--silent', '--show-error', '--max-time', '5', url!], 'curl');

await inHome.remove();
await inDataDir.remove();
jail.close();
const told = (result: Awaited<ReturnType<typeof inJail>>) => ({ ok: result.ok, output: result.ok ? result.output.toString('utf8') : '', stderr: result.stderr.trim().slice(0, 300) });
process.stdout.write(
  JSON.stringify({
    uid: process.getuid?.(),
    home: os.homedir(),
    jail: jail.status.state,
    outsideReadsHome: outside.includes(secret),
    extracted: extracted.success ? extracted.document.blocks.map((block) => block.text) : extracted.error,
    readHome: told(readHome),
    readDataDir: told(readDataDir),
    fetched: told(fetched),
  }),
);
