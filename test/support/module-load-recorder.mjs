// Given to node as `--import <this file>?record=<file>`: appends to <file> the URL of every module
// the process resolves through ESM or CommonJS `require` (a package's own requires, a createRequire in Hearth's code),
// one per line with the milliseconds since the process started.
import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';

const recordFile = new URL(import.meta.url).searchParams.get('record');
if (!recordFile) throw new Error('module-load-recorder: give the record file as ?record=<path>');
const hooks = `
import { appendFileSync } from 'node:fs';
let recordFile;
const started = performance.timeOrigin;
export function initialize(data) { recordFile = data.recordFile; }
export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  appendFileSync(recordFile, (Date.now() - started).toFixed(0) + ' ' + resolved.url + '\\n');
  return resolved;
}
`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`, { data: { recordFile } });

// Node 20's hooks see only ESM: `require` is recorded where CommonJS resolves every name it loads.
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (...args) {
  const resolved = resolveFilename.apply(this, args);
  if (resolved.startsWith('/')) appendFileSync(recordFile, (performance.now()).toFixed(0) + ' file://' + resolved + '\n');
  return resolved;
};

// A `listen` line marks when the first HTTP server starts listening (Hearth's, after start-up's
// port probe, which is a plain net server): what comes before it is the start's load.
const http = await import('node:http');
const listen = http.Server.prototype.listen;
let listened = false;
http.Server.prototype.listen = function (...args) {
  if (!listened) appendFileSync(recordFile, `${performance.now().toFixed(0)} listen\n`);
  listened = true;
  return listen.apply(this, args);
};
