import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { packageRoot } from '../package-root.ts';

const require = createRequire(import.meta.url);
const javascript = 'text/javascript; charset=utf-8';
const css = 'text/css; charset=utf-8';

interface VendorAsset {
  contentType: string;
  load: () => Promise<Buffer>;
}

/**
 * `GET /vendor/<name>`: the libraries the web page imports as ES modules, served from node_modules
 * (no build step, no CDN). Public, like the page itself. Nothing of them is loaded into the
 * server: each file is read (or bundled) on its first request and kept.
 */
export async function vendorRoutes(app: FastifyInstance) {
  const assets: Record<string, VendorAsset> = {
    'marked.js': { contentType: javascript, load: fileLoader(packageFile('marked', 'lib/marked.esm.js')) },
    'dompurify.js': { contentType: javascript, load: fileLoader(packageFile('dompurify', 'dist/purify.es.mjs')) },
    'highlight.js': { contentType: javascript, load: bundleHighlight },
    'highlight-light.css': { contentType: css, load: fileLoader(packageFile('highlight.js', 'styles/github.css')) },
    'highlight-dark.css': { contentType: css, load: fileLoader(packageFile('highlight.js', 'styles/github-dark.css')) },
  };
  for (const [name, asset] of Object.entries(assets)) {
    const load = once(asset.load);
    app.get(`/vendor/${name}`, async (_request, reply) =>
      reply.type(asset.contentType).header('cache-control', 'public, max-age=86400').send(await load()),
    );
  }
}

/** A file of an installed package; found from the package folder, as some packages keep package.json out of their exports map. */
function packageFile(packageName: string, file: string): string {
  for (const modulesFolder of require.resolve.paths(packageName) ?? []) {
    const candidate = path.join(modulesFolder, packageName, file);
    if (existsSync(candidate)) return candidate;
  }
  throw new Error(`${packageName}/${file} is not installed; run npm install.`);
}

function fileLoader(file: string): () => Promise<Buffer> {
  return () => readFile(file);
}

/** highlight.js 11 ships its ES entry points as wrappers around CommonJS, so the common build is bundled into one module. */
async function bundleHighlight(): Promise<Buffer> {
  // esbuild (and highlight.js, which it reads) are loaded on the first request for it, not with the server.
  const { build } = await import('esbuild');
  const result = await build({
    stdin: {
      contents: "import hljs from 'highlight.js/lib/common'; export default hljs;",
      resolveDir: packageRoot,
      sourcefile: 'vendor-highlight.js',
      loader: 'js',
    },
    bundle: true,
    format: 'esm',
    minify: true,
    write: false,
    platform: 'browser',
    logLevel: 'silent',
  });
  const [output] = result.outputFiles;
  if (output === undefined) throw new Error('esbuild produced no highlight.js bundle');
  return Buffer.from(output.contents);
}

/** Runs `load` once, shared by concurrent callers; a failure is forgotten so the next request tries again. */
function once(load: () => Promise<Buffer>): () => Promise<Buffer> {
  let pending: Promise<Buffer> | undefined;
  return () => {
    pending ??= load().catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}
