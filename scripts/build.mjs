// `npm run build`: src/main.ts and src/cli.ts into dist/ with esbuild, as `npm start` and the
// systemd unit run them. The packages the server loads before it listens
// (scripts/bundled-packages.json) are bundled in: Node resolving, reading and compiling their
// ~2,000 files one by one was about half of every start's CPU time (issue 38). Every other
// package stays in node_modules: the native ones (better-sqlite3, koffi), and the clients loaded
// only once their integration is configured.
// Usage: node scripts/build.mjs [--outdir=dist] [--out-extension=.js]
import { readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Ajv } from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const { values } = parseArgs({ options: { outdir: { type: 'string', default: 'dist' }, 'out-extension': { type: 'string', default: '.js' } } });
const bundled = new Set(JSON.parse(readFileSync(new URL('./bundled-packages.json', import.meta.url), 'utf8')).packages);
const packageName = (specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');

/** ajv's standalone code for the validator `file` exports, compiled with its schema and options. */
async function standaloneValidator(file) {
  const { outputFiles } = await build({ entryPoints: [file], bundle: true, platform: 'node', format: 'esm', write: false, logLevel: 'warning' });
  const module = await import(`data:text/javascript;base64,${Buffer.from(outputFiles[0].text).toString('base64')}`);
  const ajv = new Ajv({ ...module.frontMatterValidatorOptions, code: { source: true, esm: true } });
  return `${standaloneCode(ajv, ajv.compile(module.frontMatterSchema))}\nexport { validate as validateFrontMatter };\n`;
}

// A chunk's name carries its content's hash: the chunks of earlier builds would pile up beside this one's.
rmSync(values.outdir, { recursive: true, force: true });
await build({
  entryPoints: ['src/main.ts', 'src/cli.ts'],
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  minifyWhitespace: true,
  legalComments: 'none',
  sourcemap: true,
  sourcesContent: false,
  outdir: values.outdir,
  outExtension: { '.js': values['out-extension'] },
  logLevel: 'warning',
  // The bundled CommonJS packages require Node's own modules (and a few optional packages by a
  // name esbuild cannot see); in an ES module only a require made by createRequire can.
  banner: { js: "import{createRequire as __hearthCreateRequire}from'node:module';const require=__hearthCreateRequire(import.meta.url);" },
  plugins: [
    {
      // A profile's front matter is checked at every start: its validator comes compiled by ajv's
      // standalone code in place of src/profiles/front-matter-validator.ts, which compiles it when
      // imported (issue 38). The module itself, bundled on its own, gives the schema and options.
      name: 'profile-validator-compiled-ahead',
      setup(builder) {
        builder.onLoad({ filter: /[\\/]src[\\/]profiles[\\/]front-matter-validator\.ts$/ }, async ({ path }) => ({
          contents: await standaloneValidator(path),
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
  ],
});
