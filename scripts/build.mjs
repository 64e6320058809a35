// `npm run build`: src/main.ts and src/cli.ts into dist/ with esbuild, as `npm start` and the
// systemd unit run them. The packages the server loads before it listens
// (scripts/bundled-packages.json) are bundled in: Node resolving, reading and compiling their
// ~2,000 files one by one was about half of every start's CPU time (issue 38). Every other
// package stays in node_modules: the native ones (better-sqlite3, koffi), and the clients loaded
// only once their integration is configured.
//
// The server itself (src/start-server.ts and all it imports) is one CommonJS bundle, which
// src/main.ts runs with V8's code cache (src/code-cached-script.ts); the build starts it once to
// make that cache. Node 20 keeps no compiled code for ES modules. The MCP SDK, loaded once an
// MCP server is configured, is a bundle of its own beside it (dist/mcp-sdk.cjs).
// Usage: node scripts/build.mjs [--outdir=dist] [--out-extension=.js]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { Ajv } from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const { values } = parseArgs({ options: { outdir: { type: 'string', default: 'dist' }, 'out-extension': { type: 'string', default: '.js' } } });
const bundled = new Set(JSON.parse(readFileSync(new URL('./bundled-packages.json', import.meta.url), 'utf8')).packages);
const packageName = (specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

/**
 * ajv's standalone code for the validators a module compiles at run time from the sources: its
 * `compiledAhead` names each schema (the module, bundled on its own, gives them and the options),
 * and the code exports each validator under that name, as the module does.
 */
async function standaloneValidators(file) {
  const { outputFiles } = await build({ entryPoints: [file], bundle: true, platform: 'node', format: 'esm', write: false, logLevel: 'warning' });
  const { compiledAhead } = await import(`data:text/javascript;base64,${Buffer.from(outputFiles[0].text).toString('base64')}`);
  const ajv = new Ajv({ ...compiledAhead.options, code: { source: true, esm: true } });
  const names = Object.keys(compiledAhead.schemas);
  for (const name of names) ajv.addSchema(compiledAhead.schemas[name], name);
  return standaloneCode(ajv, Object.fromEntries(names.map((name) => [name, name])));
}

/** What both builds share: Node 20, whitespace left out, source maps without the sources. */
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  minifyWhitespace: true,
  legalComments: 'none',
  sourcemap: true,
  sourcesContent: false,
  outdir: values.outdir,
  logLevel: 'warning',
};

/** What the bundled packages need, in both builds. */
const plugins = [
  {
    // Validators compiled ahead by ajv's standalone code in place of the modules that compile
    // them at run time (issue 38): a profile's front matter, checked at every start (about 60 ms
    // compiling), the frames of a session's socket (about 20 ms at the first frame), and the
    // entries of mcp.json (about 20 ms just after listening, when MCP servers are configured).
    name: 'validators-compiled-ahead',
    setup(builder) {
      builder.onLoad({ filter: /[\\/]src[\\/](profiles[\\/]front-matter-validator|server[\\/]client-frame-validators|tools[\\/]mcp[\\/]mcp-entry-validators)\.ts$/ }, async ({ path }) => ({
        contents: await standaloneValidators(path),
        loader: 'js',
        resolveDir: dirname(path),
      }));
    },
  },
  {
    // js-yaml (under gray-matter, which reads the profiles) requires esprima at load, by a name
    // esbuild cannot see, only for its !!js/function type, which gray-matter's safe loading never
    // reads: 280 KB of source parsed at every start and about 2 MB of memory kept (issue 38).
    // Without it js-yaml does what its browser build does: no such type.
    name: 'js-yaml-without-esprima',
    setup(builder) {
      builder.onLoad({ filter: /[\\/]js-yaml[\\/]lib[\\/]js-yaml[\\/]type[\\/]js[\\/]function\.js$/ }, async ({ path }) => {
        const source = await readFile(path, 'utf8');
        const withoutEsprima = source.replace("esprima = _require('esprima');", '');
        if (withoutEsprima === source) throw new Error(`${path} no longer requires esprima as scripts/build.mjs expects: look again`);
        return { contents: withoutEsprima, loader: 'js' };
      });
    },
  },
  {
    // @fastify/static requires glob at load only to list a folder for `wildcard: false`, which
    // src/app.ts does not use: 91 KB of source compiled and run at every start (issue 38).
    name: 'fastify-static-without-glob',
    setup(builder) {
      builder.onResolve({ filter: /^glob$/ }, ({ importer }) =>
        /[\\/]@fastify[\\/]static[\\/]/.test(importer) ? { path: 'glob', namespace: 'no-glob' } : undefined,
      );
      builder.onLoad({ filter: /.*/, namespace: 'no-glob' }, () => ({
        contents: "export function glob() { throw new Error('@fastify/static was built without glob (scripts/build.mjs): register it with wildcard: true'); }",
        loader: 'js',
      }));
    },
  },
  {
    name: 'bundle-the-start-packages-only',
    setup(builder) {
      builder.onResolve({ filter: /^[^./]/ }, ({ path }) => (bundled.has(packageName(path)) ? undefined : { path, external: true }));
    },
  },
];

const mcpSdkFile = 'mcp-sdk.cjs';

/**
 * The MCP SDK's modules the server imports (`@modelcontextprotocol/sdk/client/index.js`, …),
 * taken from one bundle of their own, dist/mcp-sdk.cjs, rather than from node_modules: Node
 * resolving and compiling the SDK's and zod's files one by one blocked the server's event loop
 * for 120-180 ms just after it started listening, when an MCP server is configured (bench 20b);
 * the bundle loads in about 45 ms. It is not in the server's own bundle, whose code every start
 * reads, configured or not. Records the subpaths it saw for buildMcpSdk.
 */
function mcpSdkBesideTheServer(subpaths) {
  return {
    name: 'mcp-sdk-beside-the-server',
    setup(builder) {
      builder.onResolve({ filter: /^@modelcontextprotocol\/sdk\// }, ({ path }) => {
        const subpath = path.slice('@modelcontextprotocol/sdk/'.length);
        subpaths.add(subpath);
        return { path: subpath, namespace: 'mcp-sdk' };
      });
      builder.onLoad({ filter: /.*/, namespace: 'mcp-sdk' }, ({ path }) => ({
        contents: `module.exports = require(${JSON.stringify(`./${mcpSdkFile}`)}).modules[${JSON.stringify(path)}];`,
        loader: 'js',
      }));
      builder.onResolve({ filter: new RegExp(`^\\./${mcpSdkFile.replace('.', '\\.')}$`) }, ({ path }) => ({ path, external: true }));
    },
  };
}

/** dist/mcp-sdk.cjs: the SDK's modules the server imports, and all they import, under `modules`. */
async function buildMcpSdk(subpaths) {
  const names = [...subpaths].sort();
  if (names.length === 0) throw new Error('build: the server imports nothing of @modelcontextprotocol/sdk; scripts/build.mjs expects it to');
  await build({
    ...common,
    stdin: {
      contents:
        names.map((subpath, index) => `import * as module${index} from ${JSON.stringify(`@modelcontextprotocol/sdk/${subpath}`)};`).join('\n') +
        `\nexport const modules = { ${names.map((subpath, index) => `${JSON.stringify(subpath)}: module${index}`).join(', ')} };`,
      resolveDir: resolve('.'),
      sourcefile: 'mcp-sdk.js',
    },
    outdir: undefined,
    outfile: join(values.outdir, mcpSdkFile),
    format: 'cjs',
  });
}

/**
 * The server as one CommonJS function expression for src/code-cached-script.ts, named by its
 * content's hash (V8 checks a cache against its source's length only). Its file name.
 */
async function buildServer(mcpSdkSubpaths) {
  const { metafile } = await build({
    ...common,
    entryPoints: ['src/start-server.ts'],
    format: 'cjs',
    entryNames: '[name]-[hash]',
    outExtension: { '.js': '.cjs' },
    metafile: true,
    // Strict, as the ES modules it is made of are.
    banner: { js: '(function (exports, require, module, __filename, __dirname) {"use strict";const __hearthModuleUrl=require("node:url").pathToFileURL(__filename).href;' },
    footer: { js: '})' },
    define: { 'import.meta.url': '__hearthModuleUrl' },
    // import() in a vm script needs Node's experimental vm modules: the packages loaded once a
    // feature is configured are required instead (an ES module one through Node 20.19's require).
    supported: { 'dynamic-import': false },
    plugins: [mcpSdkBesideTheServer(mcpSdkSubpaths), ...plugins],
  });
  return basename(Object.keys(metafile.outputs).find((file) => file.endsWith('.cjs')));
}

/** src/main.ts and src/cli.ts as ES modules; main.ts loads the server bundle through src/load-built-start-server.ts. */
async function buildEntries(serverScript) {
  await build({
    ...common,
    entryPoints: ['src/main.ts', 'src/cli.ts'],
    splitting: true,
    format: 'esm',
    outExtension: { '.js': values['out-extension'] },
    // The bundled CommonJS packages require Node's own modules (and a few optional packages by a
    // name esbuild cannot see); in an ES module only a require made by createRequire can.
    banner: { js: "import{createRequire as __hearthCreateRequire}from'node:module';const require=__hearthCreateRequire(import.meta.url);" },
    define: { HEARTH_START_SCRIPT: JSON.stringify(serverScript) },
    plugins: [
      {
        name: 'main-loads-the-built-server',
        setup(builder) {
          builder.onResolve({ filter: /^\.\/load-start-server\.ts$/ }, ({ importer, resolveDir }) =>
            importer.endsWith(join('src', 'main.ts')) ? { path: join(resolveDir, 'load-built-start-server.ts') } : undefined,
          );
        },
      },
      ...plugins,
    ],
  });
}

/**
 * Starts the built server once in a temporary DATA_DIR, with nothing configured, so that it
 * writes V8's code for what a start compiles (src/load-built-start-server.ts). Without it the
 * server still starts, compiling as it goes.
 */
async function makeCodeCache(serverScript) {
  const cacheFile = join(values.outdir, serverScript.replace(/\.cjs$/, '.code-cache'));
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-code-cache-'));
  try {
    const child = spawn(process.execPath, [resolve(values.outdir, `main${values['out-extension']}`)], {
      cwd: dataDir,
      // V8 refuses a cache made with other flags: the node options the server will run with (a memory limit) apply here too.
      env: {
        PATH: process.env.PATH,
        ...(process.env.NODE_OPTIONS ? { NODE_OPTIONS: process.env.NODE_OPTIONS } : {}),
        HOME: dataDir,
        DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'warn',
        HEARTH_MAKE_CODE_CACHE: '1',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let errors = '';
    child.stderr.on('data', (data) => (errors += data));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const [code, signal] = await once(child, 'exit');
    clearTimeout(timer);
    if (code !== 0 || !existsSync(cacheFile)) {
      console.warn(`build: the start made no code cache (exit ${code ?? signal}); the server will compile its code at each start.\n${errors}`);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// A bundle's name carries its content's hash: the files of earlier builds would pile up beside this one's.
rmSync(values.outdir, { recursive: true, force: true });
const mcpSdkSubpaths = new Set();
const serverScript = await buildServer(mcpSdkSubpaths);
await buildMcpSdk(mcpSdkSubpaths);
await buildEntries(serverScript);
await makeCodeCache(serverScript);
