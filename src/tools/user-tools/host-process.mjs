// @ts-check
// The user-tool host: a child process of the server, started by user-tool-host.ts under Node's
// permission model (it may read only what it was granted and write only its session's folder;
// see docs/security.md). It imports each bundled tool module, reports a manifest, and runs the
// calls the server sends it. Plain JavaScript, so it starts without a TypeScript loader.
// It talks to the server over the pipe on file descriptor 3, one JSON message per line; the
// message shapes are in protocol.ts.
import net from 'node:net';
import { pathToFileURL } from 'node:url';

/** A result's output longer than this is cut here, so one message stays far below the server's limit. */
const maxOutputCharacters = 8_000_000;
/** A ctx.kv value whose JSON is longer than this is refused. */
const maxKvValueCharacters = 8_000_000;

// A tool may signal only its own process: the server and the other hosts run as the same user.
// (Node's permission model does not cover signals. ChildProcess#kill does not go through these.)
const ownPid = process.pid;
const rawKill = process._kill;
/** @param {number} pid @param {number} signal */
function guardedRawKill(pid, signal) {
  if (Number(pid) !== ownPid) {
    const error = /** @type {Error & {code?: string}} */ (new Error('User tools may not send signals to other processes.'));
    error.code = 'ERR_ACCESS_DENIED';
    throw error;
  }
  return rawKill.call(process, pid, signal);
}
// process.kill checks its arguments and then calls process._kill, which is all a tool can reach.
Object.defineProperty(process, '_kill', { value: guardedRawKill, writable: false, configurable: false });

const channel = new net.Socket({ fd: 3, readable: true, writable: true });
channel.setEncoding('utf8');
// The server went away (or closed the pipe): nothing can reach this host any more.
channel.on('end', () => process.exit(0));
channel.on('error', () => process.exit(0));

/** @param {object} message */
function send(message) {
  channel.write(`${JSON.stringify(message)}\n`);
}

/** @type {Map<string, {name: string, execute: Function, module: any}>} */
const tools = new Map();
/** @type {Map<number, AbortController>} */
const running = new Map();
/** @type {Map<number, {resolve: (value: unknown) => void, reject: (error: Error) => void}>} */
const kvRequests = new Map();
let nextKvRequest = 1;
/** @type {string | undefined} */
let workFolder;

process.on('uncaughtException', (error) => {
  // A tool's stray callback threw: report it, then end like a crashed worker would.
  channel.write(`${JSON.stringify({ type: 'crash', message: describe(error) })}\n`, () => process.exit(70));
  setTimeout(() => process.exit(70), 1_000);
});

/** @param {unknown} value */
const isPlainObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

/** @param {unknown} error */
function describe(error) {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

// The same list as permissions.ts's toolPermissions: a module declaring `network` must load, or the grant can never be used.
const knownPermissions = ['childProcess', 'worker', 'network'];

/**
 * The permissions a module declares, or a problem sentence.
 * @param {unknown} declared
 * @returns {{ permissions: string[] } | { problem: string }}
 */
function permissionsOf(declared) {
  if (declared === undefined) return { permissions: [] };
  const shape = '`permissions` must be an object such as { childProcess: true, worker: true }';
  if (!isPlainObject(declared)) return { problem: shape };
  const permissions = [];
  for (const [key, value] of Object.entries(/** @type {object} */ (declared))) {
    if (!knownPermissions.includes(key)) return { problem: `${shape}; "${key}" is not a permission (known: ${knownPermissions.join(', ')})` };
    if (typeof value !== 'boolean') return { problem: `${shape}; ${key} must be true or false` };
    if (value) permissions.push(key);
  }
  return { permissions };
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
  const permissions = permissionsOf(exports.permissions);
  if ('problem' in permissions) return permissions.problem;
  return undefined;
}

/** @param {string} tool */
function kvFor(tool) {
  /** @param {object} operation */
  const request = (operation) =>
    new Promise((resolve, reject) => {
      const requestId = nextKvRequest++;
      kvRequests.set(requestId, { resolve, reject });
      send({ type: 'kv', requestId, tool, ...operation });
    });
  return Object.freeze({
    /** @param {string} key */
    get: (key) => request({ operation: 'get', key: String(key) }),
    /** @param {string} key @param {unknown} value */
    set: async (key, value) => {
      const text = JSON.stringify(value);
      if (text !== undefined && text.length > maxKvValueCharacters) {
        throw new Error(`ctx.kv.set: the value is ${text.length} characters of JSON; at most ${maxKvValueCharacters} fit`);
      }
      return request({ operation: 'set', key: String(key), value });
    },
    /** @param {string} key */
    delete: (key) => request({ operation: 'delete', key: String(key) }),
    /** @param {string} [prefix] */
    list: (prefix) => request({ operation: 'list', ...(prefix === undefined ? {} : { prefix: String(prefix) }) }),
  });
}

/** @param {string} output */
function capped(output) {
  if (output.length <= maxOutputCharacters) return output;
  return `${output.slice(0, maxOutputCharacters)}\n… [cut: the tool answered ${output.length} characters; the first ${maxOutputCharacters} are kept]`;
}

/** @param {unknown} value */
function toResult(value) {
  if (typeof value === 'string') return { output: capped(value), success: true };
  if (isPlainObject(value) && typeof (/** @type {any} */ (value).output) === 'string') {
    const result = /** @type {{output: string, success?: unknown, metadata?: unknown}} */ (value);
    return {
      output: capped(result.output),
      success: result.success !== false,
      ...(isPlainObject(result.metadata) ? { metadata: result.metadata } : {}),
    };
  }
  if (value === undefined || value === null) return { output: '(no output)', success: true };
  try {
    return { output: capped(JSON.stringify(value, null, 2)), success: true };
  } catch {
    return { output: capped(String(value)), success: true };
  }
}

const permissionWords = {
  ChildProcess: { permission: 'childProcess', doing: 'start child processes' },
  WorkerThreads: { permission: 'worker', doing: 'start worker threads' },
};

/**
 * Node's ERR_ACCESS_DENIED, said so that the model (and the person) know what the sandbox
 * allows and how to ask for more.
 * @param {string} toolName
 * @param {{permission?: string, resource?: string, message: string}} error
 */
function refusal(toolName, error) {
  const module = tools.get(toolName)?.module ?? {};
  const declared = /** @type {string[]} */ (module.declared ?? []);
  const where = workFolder ? `the session's folder (${workFolder}, its working folder)` : 'no folder at all (it is only being loaded)';
  switch (error.permission) {
    case 'FileSystemRead':
      return `Error: ${toolName} may not read ${error.resource ?? 'that path'}: user tools run in a sandbox that may read only ${where} and the tools' own code. Work on files in the session's folder (the person can upload them there).`;
    case 'FileSystemWrite':
      return `Error: ${toolName} may not write to ${error.resource ?? 'that path'}: user tools may write only in ${where}; use relative paths.`;
    case 'ChildProcess':
    case 'WorkerThreads': {
      const { permission, doing } = permissionWords[error.permission];
      if (declared.includes(permission)) {
        return (
          `Error: ${toolName} may not ${doing}: it declares the permission ${permission}, but the person has not granted it. ` +
          `Installing it again with write_tool asks the person to approve it; or the person adds "${toolName}": { "permissions": ["${permission}"] } ` +
          'to permissions.json in the user-tools folder and reloads the tools.'
        );
      }
      return (
        `Error: ${toolName} may not ${doing}: user tools need the permission ${permission} for that. Add ` +
        `\`export const permissions = { ${permission}: true }\` to the module and install it with write_tool: the person is asked to approve it.`
      );
    }
    default:
      return `Error: ${toolName} failed: ${error.message} (refused by the user-tool sandbox${error.permission ? `: ${error.permission}` : ''}).`;
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
    send({ type: 'result', callId: message.callId, ...toResult(value) });
  } catch (error) {
    const denied = /** @type {any} */ (error)?.code === 'ERR_ACCESS_DENIED';
    const output = denied ? refusal(message.name, /** @type {any} */ (error)) : `Error: ${message.name} failed: ${describe(error)}`;
    send({ type: 'result', callId: message.callId, output, success: false });
  } finally {
    running.delete(message.callId);
  }
}

/** @param {import('./protocol.ts').ModuleToLoad[]} modules */
async function load(modules) {
  /** @type {{file: string, message: string}[]} */
  const errors = [];
  /** @type {{name: string, description: string, parameters: object, file: string, permissions: string[]}[]} */
  const manifest = [];
  for (const module of modules) {
    send({ type: 'loading', file: module.file });
    try {
      const exports = await import(pathToFileURL(module.modulePath).href);
      const problem = problemWith(exports, module.expectedName);
      if (problem) {
        errors.push({ file: module.file, message: `Not a tool: ${problem}.` });
        continue;
      }
      // The schema crosses to the server as JSON: functions or cycles in it are a mistake worth naming.
      const parameters = JSON.parse(JSON.stringify(exports.parameters));
      const { permissions } = /** @type {{permissions: string[]}} */ (permissionsOf(exports.permissions));
      tools.set(exports.name, { name: exports.name, execute: exports.execute, module });
      manifest.push({ name: exports.name, description: exports.description.trim(), parameters, file: module.file, permissions });
    } catch (error) {
      const denied = /** @type {{code?: string, permission?: string, resource?: string}} */ (error);
      const reason =
        denied?.code === 'ERR_ACCESS_DENIED'
          ? `the sandbox refused ${denied.permission ?? 'it'}${denied.resource ? ` (${denied.resource})` : ''}: code at the top level of a tool runs without file access or permissions; move it into execute`
          : describe(error);
      errors.push({ file: module.file, message: `Failed while loading: ${reason}` });
    }
  }
  send({ type: 'manifest', tools: manifest, errors });
}

let pending = '';
channel.on('data', (/** @type {string} */ chunk) => {
  pending += chunk;
  for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n')) {
    const line = pending.slice(0, end);
    pending = pending.slice(end + 1);
    receive(JSON.parse(line));
  }
});

/** @param {any} message */
function receive(message) {
  switch (message.type) {
    case 'load':
      workFolder = message.workFolder;
      if (message.memoryReportMs) setInterval(() => send({ type: 'memory', rss: process.memoryUsage.rss() }), message.memoryReportMs).unref();
      void load(message.modules);
      return;
    case 'call':
      void call(message);
      return;
    case 'abort':
      running.get(message.callId)?.abort(new Error('stopped'));
      return;
    case 'kv_result': {
      const waiting = kvRequests.get(message.requestId);
      kvRequests.delete(message.requestId);
      if (message.ok) waiting?.resolve(message.value);
      else waiting?.reject(new Error(message.message));
      return;
    }
  }
}
