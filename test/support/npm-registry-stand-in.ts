// A stand-in for the npm registry on 127.0.0.1, serving a package and everything it depends on as
// they are installed in this checkout's node_modules: each package folder packed as a tarball
// (system tar), with a packument carrying its integrity. npm and npx fetch from it as from
// registry.npmjs.org, so a test can prepare a real `npx -y <package>` without the Internet.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

export interface NpmRegistryStandIn {
  /** With a trailing slash, as npm's `registry` setting spells it. */
  url: string;
  /** The paths requested, in order. */
  requests: string[];
  close(): Promise<void>;
}

interface Manifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [field: string]: unknown;
}

/** The folder of `name` as Node resolves it from `from`: the nearest node_modules above that holds it. */
function installedFolder(name: string, from: string): string | undefined {
  for (let folder = from; ; folder = path.dirname(folder)) {
    const candidate = path.join(folder, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (path.dirname(folder) === folder) return undefined;
  }
}

/** Every installed package folder `root` needs, itself first. */
function closure(root: string, from: string): Map<string, Manifest> {
  const found = new Map<string, Manifest>();
  const visit = (name: string, origin: string, required: boolean) => {
    const folder = installedFolder(name, origin);
    if (folder === undefined) {
      if (required) throw new Error(`${name} (needed from ${origin}) is not installed`);
      return;
    }
    if (found.has(folder)) return;
    const manifest = JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8')) as Manifest;
    found.set(folder, manifest);
    for (const dependency of Object.keys(manifest.dependencies ?? {})) visit(dependency, folder, true);
    for (const dependency of Object.keys(manifest.optionalDependencies ?? {})) visit(dependency, folder, false);
    for (const [dependency] of Object.entries(manifest.peerDependencies ?? {})) visit(dependency, folder, manifest.peerDependenciesMeta?.[dependency]?.optional !== true);
  };
  visit(root, from, true);
  return found;
}

export async function npmRegistryStandIn(root: string, projectFolder: string): Promise<NpmRegistryStandIn> {
  const folder = await mkdtemp(path.join(tmpdir(), 'hearth-registry-'));
  const packuments = new Map<string, { name: string; 'dist-tags': { latest: string }; versions: Record<string, unknown> }>();
  const tarballs = new Map<string, string>();
  const requests: string[] = [];
  const server = http.createServer((request, response) => {
    const requested = decodeURIComponent((request.url ?? '/').split('?')[0]!);
    requests.push(requested);
    const tarball = tarballs.get(requested);
    if (tarball !== undefined) {
      void readFile(tarball).then((body) => response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(body));
      return;
    }
    const packument = packuments.get(requested.slice(1));
    if (packument === undefined) {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'Not found' }));
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(packument));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

  let index = 0;
  for (const [packageFolder, manifest] of closure(root, projectFolder)) {
    const file = path.join(folder, `${index}.tgz`);
    const packed = spawnSync('tar', ['-cf', '-', '--exclude=./node_modules', '--transform', 's,^\\.,package,', '-C', packageFolder, '.'], { maxBuffer: 1 << 30 });
    if (packed.status !== 0) throw new Error(`tar ${packageFolder}: ${packed.stderr.toString('utf8')}`);
    // The fastest gzip level (npm unpacks any): the default made packing the hundred packages of a server cost half a CPU-second more.
    const body = gzipSync(packed.stdout, { level: 1 });
    writeFileSync(file, body);
    const tarballPath = `/-/tarballs/${index}.tgz`;
    tarballs.set(tarballPath, file);
    index += 1;
    const { scripts: _scripts, devDependencies: _devDependencies, ...published } = Object.fromEntries(Object.entries(manifest).filter(([field]) => !field.startsWith('_'))) as Manifest;
    // An optional dependency that is not installed here is not offered.
    const optional = Object.fromEntries(Object.entries(manifest.optionalDependencies ?? {}).filter(([name]) => installedFolder(name, packageFolder) !== undefined));
    const version = {
      ...published,
      ...(manifest.optionalDependencies && { optionalDependencies: optional }),
      dist: {
        tarball: `${url}${tarballPath.slice(1)}`,
        integrity: `sha512-${createHash('sha512').update(body).digest('base64')}`,
        shasum: createHash('sha1').update(body).digest('hex'),
      },
    };
    const packument = packuments.get(manifest.name) ?? { name: manifest.name, 'dist-tags': { latest: manifest.version }, versions: {} };
    packument.versions[manifest.version] = version;
    packuments.set(manifest.name, packument);
  }

  return {
    url,
    requests,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(folder, { recursive: true, force: true });
    },
  };
}
