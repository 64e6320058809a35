// Given to node as `--import <this file>?record=<file>`: appends to <file> the URL of every module
// the process (and the process it re-executes itself as, which keeps its execArgv) resolves
// through ESM, one per line with the milliseconds since the process started. Packages reached
// through `import` from Hearth's own code are all seen; a CommonJS `require` inside a package is not.
import { register } from 'node:module';

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
