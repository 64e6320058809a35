#!/usr/bin/env node
// `npx hearth …` (package.json's bin): the command-line tool as `npm run build` built it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  console.error(`hearth: ${fileURLToPath(cli)} is missing: run \`npm run build\` in the checkout (\`npm ci\` runs it).`);
  process.exit(1);
}
await import(cli.href);
