// ─────────────────────────────────────────────────────────────────────────────────────────
// The shape of a Hearth user tool. Copy this file to `<name>.ts` (for example
// `word_stats.ts`) in TOOLS_DIR, your tools folder (DATA_DIR's user-tools/, by default
// ~/.local/share/hearth/user-tools), change the four exports, and the server loads it: a change
// to a file there is picked up at once, or call reload_tools. The model writes tools the same
// way with write_tool (read `tool_manual write_tool`). This folder in Hearth's checkout holds
// the tools Hearth ships; a tool of the same name in TOOLS_DIR replaces one of them.
//
// Adding a tool by hand: drop the file in TOOLS_DIR and nothing else. It is enabled for
// every profile, unless a profile sets `user_tools: false` in its front matter. To stop using
// it, switch it off in the page's Tools panel (which also shows whether it loaded, and why
// not); the switches are kept in TOOLS_DIR's enabled.json as {"disabled": ["tool_name", …]}.
//
// This file starts with `_`, so it is never loaded as a tool: files whose names start with
// `_` are helper modules, which tools import (`import { slugify } from './_text.ts'`).
// Files starting with `.` are ignored too. Tools are `.ts`, `.mts`, `.js` or `.mjs`.
//
// A tool is a plain module with four exports and nothing from the server imported:
//   name         the tool's name; must equal the file name without its extension,
//                2-64 characters: lowercase letters, digits and _, starting with a letter
//   description  one or two sentences; it is sent to the model on every turn, so keep it short
//   parameters   a JSON Schema with type "object": what the model must send
//   execute      async (params, ctx) => string | { output: string, success?: boolean }
// and one optional export, only for a tool that must run programs or threads:
//   permissions  { childProcess: true } to run programs (child_process), { worker: true } to
//                start worker threads, or both. Write it exactly so (a plain object of `true`s):
//                  export const permissions = { childProcess: true };
//                Nothing is granted by declaring it: the person grants it, either when the
//                model installs the tool with write_tool (it always asks them first) or by
//                adding the tool to permissions.json in TOOLS_DIR:
//                  { "my_tool": { "permissions": ["childProcess"] } }
//                A program it runs is NOT sandboxed: it has the server user's rights.
//
// The arguments are validated against `parameters` before execute runs, so execute can
// trust their types. Return a string (a success), or { output, success: false } for a
// failure the model should see and act on. A thrown error becomes a failure that quotes its
// message. Anything else is turned into JSON.
//
// ctx (the second argument of execute):
//   ctx.sessionId  the conversation the call belongs to
//   ctx.signal     an AbortSignal, aborted when the user stops the run or the call times
//                  out. Honour it in long work: check ctx.signal.aborted in loops, and pass
//                  it to fetch(url, { signal: ctx.signal }). A tool that ignores it is ended
//                  with its host.
//   ctx.kv         this tool's own small persistent key-value store (kept in the server's
//                  database, survives restarts, not shared with other tools); values are
//                  anything JSON can hold:
//                    await ctx.kv.get(key)          → the value, or undefined
//                    await ctx.kv.set(key, value)
//                    await ctx.kv.delete(key)       → true if it existed
//                    await ctx.kv.list(prefix?)     → the keys, in order
//
// The sandbox (docs/security.md, "User tools"): tools run in a separate process, one per
// conversation, under Node's permission model.
//   - Files: a tool may read and write only its conversation's folder in SESSION_FILES_DIR
//     (uploads land there). It is the working folder, so relative paths go there:
//     readFile('report.csv'), writeFile('summary.txt', …). Anything else (TOOLS_DIR, the
//     database, other conversations, /etc, the temp folder) fails with "may not read/write".
//     Code at the top level of the module runs with no file access at all.
//   - No child processes or worker threads unless declared in `permissions` and granted.
//   - The environment holds no secrets (no AUTH_TOKEN, no API keys); the server's
//     TOOL_ENV_PASSTHROUGH names the variables that pass.
//   - The network is open: fetch works.
//   - A call may take USER_TOOL_TIMEOUT_MS (30 s unless the server sets it otherwise);
//     then it fails with "timed out" and the host is restarted.
//   - Memory: a 128 MB JavaScript heap, and USER_TOOL_MAX_RSS_MB (256 MB by default) for the
//     whole process, Buffers included; a tool that uses more is ended with its host.
//   - They can use Node's built-in modules (node:fs, node:crypto…), fetch, helper modules in
//     TOOLS_DIR and packages installed in a node_modules folder there or above it
//     (`npm install <package>` in TOOLS_DIR).
//   - One broken file never stops the other tools from loading; its error is shown by
//     reload_tools and GET /agents/tools.
// ─────────────────────────────────────────────────────────────────────────────────────────

export const name = 'word_stats'; // a copy saved as word_stats.ts would load as "word_stats"

export const description = 'Count the words, lines and characters of a text, and how often it has been asked.';

export const parameters = {
  type: 'object',
  properties: {
    text: { type: 'string', description: 'The text to count' },
    top: { type: 'integer', minimum: 0, maximum: 20, description: 'How many of the most frequent words to list; default 3' },
  },
  required: ['text'],
  additionalProperties: false,
};

/** Typing `params` and `ctx` is optional, but it lets the type check catch mistakes. */
interface Params {
  text: string;
  top?: number;
}

interface Context {
  sessionId: string;
  signal: AbortSignal;
  kv: {
    get(key: string): Promise<unknown>;
    set(key: string, value: unknown): Promise<void>;
    delete(key: string): Promise<boolean>;
    list(prefix?: string): Promise<string[]>;
  };
}

export async function execute(params: Params, ctx: Context) {
  const words = params.text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
  if (words.length === 0) return { output: 'The text has no words in it.', success: false };

  const counts = new Map<string, number>();
  for (const [index, word] of words.entries()) {
    // Long work checks the signal now and then, and stops when asked.
    if (index % 10_000 === 0 && ctx.signal.aborted) return { output: 'Stopped before counting finished.', success: false };
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  const frequent = [...counts.entries()]
    .sort((first, second) => second[1] - first[1])
    .slice(0, params.top ?? 3)
    .map(([word, count]) => `${word} (${count})`);

  // ctx.kv remembers things between calls and restarts.
  const asked = (((await ctx.kv.get('times_asked')) as number | undefined) ?? 0) + 1;
  await ctx.kv.set('times_asked', asked);

  return [
    `${words.length} words, ${params.text.split('\n').length} lines, ${params.text.length} characters.`,
    frequent.length > 0 ? `Most frequent: ${frequent.join(', ')}.` : '',
    `Counted ${asked} time(s) so far.`,
  ]
    .filter((line) => line !== '')
    .join('\n');
}
