// @ts-check
// The user-tool host: runs in a worker thread, never on the server's main thread. It imports
// each bundled tool module, reports a manifest, and runs calls the server sends it. Plain
// JavaScript, so the worker starts without a TypeScript loader. Message shapes: protocol.ts.
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';

if (!parentPort) throw new Error('host-worker.js must run in a worker thread');
const port = parentPort;

/** @type {Map<string, {name: string, execute: Function}>} */
const tools = new Map();
/** @type {Map<number, AbortController>} */
const running = new Map();
/** @type {Map<number, {resolve: (value: unknown) => void, reject: (error: Error) => void}>} */
const kvRequests = new Map();
let nextKvRequest = 1;

/** @param {unknown} value */
const isPlainObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

/** @param {unknown} error */
function describe(error) {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

/**
 * Checks the exports of one module; answers a problem sentence, or undefined when it is a tool.
 * @param {Record<string, unknown>} exports
 * @param {string} expectedName
 */
function problemWith(exports, expectedName) {
  if (typeof exports.name !== 'string') return 'it must export `name` (a string)';
  if (exports.name !== expectedName) return `it exports name "${exports.name}" but the file is named ${expectedName}: they must match`;
  if (typeof exports.description !== 'string' || exports.description.trim() === '') return 'it must export a non-empty `description` string';
  if (!isPlainObject(exports.parameters) || /** @type {any} */ (exports.parameters).type !== 'object') {
    return 'it must export `parameters`: a JSON Schema object such as { type: "object", properties: {}, required: [] }';
  }
  if (typeof exports.execute !== 'function') return 'it must export an `execute(params, ctx)` function';
  return undefined;
}

/** @param {string} tool */
function kvFor(tool) {
  /** @param {object} operation */
  const request = (operation) =>
    new Promise((resolve, reject) => {
      const requestId = nextKvRequest++;
      kvRequests.set(requestId, { resolve, reject });
      port.postMessage({ type: 'kv', requestId, tool, ...operation });
    });
  return Object.freeze({
    /** @param {string} key */
    get: (key) => request({ operation: 'get', key: String(key) }),
    /** @param {string} key @param {unknown} value */
    set: (key, value) => request({ operation: 'set', key: String(key), value }),
    /** @param {string} key */
    delete: (key) => request({ operation: 'delete', key: String(key) }),
    /** @param {string} [prefix] */
    list: (prefix) => request({ operation: 'list', ...(prefix === undefined ? {} : { prefix: String(prefix) }) }),
  });
}

/** @param {unknown} value */
function toResult(value) {
  if (typeof value === 'string') return { output: value, success: true };
  if (isPlainObject(value) && typeof (/** @type {any} */ (value).output) === 'string') {
    const result = /** @type {{output: string, success?: unknown, metadata?: unknown}} */ (value);
    return {
      output: result.output,
      success: result.success !== false,
      ...(isPlainObject(result.metadata) ? { metadata: result.metadata } : {}),
    };
  }
  if (value === undefined || value === null) return { output: '(no output)', success: true };
  try {
    return { output: JSON.stringify(value, null, 2), success: true };
  } catch {
    return { output: String(value), success: true };
  }
}

/** @param {{callId: number, name: string, args: Record<string, unknown>, sessionId: string}} message */
async function call(message) {
  const tool = tools.get(message.name);
  const controller = new AbortController();
  running.set(message.callId, controller);
  try {
    if (!tool) throw new Error(`this host has no tool "${message.name}"`);
    const context = Object.freeze({ sessionId: message.sessionId, signal: controller.signal, kv: kvFor(tool.name) });
    const value = await tool.execute(message.args, context);
    port.postMessage({ type: 'result', callId: message.callId, ...toResult(value) });
  } catch (error) {
    port.postMessage({ type: 'result', callId: message.callId, output: `Error: ${message.name} failed: ${describe(error)}`, success: false });
  } finally {
    running.delete(message.callId);
  }
}

port.on('message', (/** @type {any} */ message) => {
  switch (message.type) {
    case 'call':
      void call(message);
      return;
    case 'abort':
      running.get(message.callId)?.abort(new Error('stopped'));
      return;
    case 'kv_result': {
      const pending = kvRequests.get(message.requestId);
      kvRequests.delete(message.requestId);
      if (message.ok) pending?.resolve(message.value);
      else pending?.reject(new Error(message.message));
      return;
    }
  }
});

/** @type {{file: string, message: string}[]} */
const errors = [];
/** @type {{name: string, description: string, parameters: object, file: string}[]} */
const manifest = [];
for (const module of /** @type {import('./protocol.ts').HostWorkerData} */ (workerData).modules) {
  port.postMessage({ type: 'loading', file: module.file });
  try {
    const exports = await import(pathToFileURL(module.modulePath).href);
    const problem = problemWith(exports, module.expectedName);
    if (problem) {
      errors.push({ file: module.file, message: `Not a tool: ${problem}.` });
      continue;
    }
    // The schema crosses to the server as JSON: functions or cycles in it are a mistake worth naming.
    const parameters = JSON.parse(JSON.stringify(exports.parameters));
    tools.set(exports.name, { name: exports.name, execute: exports.execute });
    manifest.push({ name: exports.name, description: exports.description.trim(), parameters, file: module.file });
  } catch (error) {
    errors.push({ file: module.file, message: `Failed while loading: ${describe(error)}` });
  }
}
port.postMessage({ type: 'manifest', tools: manifest, errors });
