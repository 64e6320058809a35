import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHearth, type Hearth } from './support/hearth-server.ts';

// docs/protocol.md's examples, run as a reader would run them, against a real server.

const run = promisify(execFile);
const documentedBase = 'http://127.0.0.1:8000';
const answer = 'Hello! How can I help?';
const outputSeparator = '----- next command -----';

function codeBlocks(markdown: string, language: string): string[] {
  const pattern = new RegExp('^```' + language + '\\n([\\s\\S]*?)^```$', 'gm');
  return [...markdown.matchAll(pattern)].map((match) => match[1]!);
}

interface Example {
  command: string;
  /** The `# ` lines under the command: what it prints, `…` standing for any value. */
  printed?: string;
}

function curlExamples(blocks: string[]): Example[] {
  const examples: Example[] = [];
  for (const block of blocks) {
    for (const line of block.split('\n')) {
      if (line.startsWith('#')) {
        const last = examples.at(-1)!;
        last.printed = (last.printed ?? '') + line.replace(/^# ?/, '') + '\n';
      } else if (line.trim() !== '') {
        examples.push({ command: line });
      }
    }
  }
  return examples;
}

/** `documented` with `"…"` as a wildcard: same keys, same array lengths, equal values elsewhere. */
function expectShape(actual: unknown, documented: unknown, where = '$'): void {
  if (documented === '…') {
    expect(actual, where).toBeDefined();
    return;
  }
  if (Array.isArray(documented)) {
    expect(Array.isArray(actual), `${where} is an array`).toBe(true);
    expect((actual as unknown[]).length, `${where}.length`).toBe(documented.length);
    documented.forEach((item, index) => expectShape((actual as unknown[])[index], item, `${where}[${index}]`));
    return;
  }
  if (documented !== null && typeof documented === 'object') {
    expect(actual, where).toBeTypeOf('object');
    expect(Object.keys(actual as object).sort(), `${where} keys`).toEqual(Object.keys(documented).sort());
    for (const [key, value] of Object.entries(documented)) expectShape((actual as Record<string, unknown>)[key], value, `${where}.${key}`);
    return;
  }
  expect(actual, where).toEqual(documented);
}

describe('docs/protocol.md', () => {
  let markdown: string;
  let hearth: Hearth;
  let workFolder: string;

  beforeAll(async () => {
    markdown = await readFile('docs/protocol.md', 'utf8');
    hearth = await startHearth();
    hearth.llm.respondWith(() => ({ content: answer }));
    workFolder = await mkdtemp(path.join(tmpdir(), 'hearth-docs-'));
  });
  afterAll(async () => {
    await hearth?.close();
    if (workFolder) await rm(workFolder, { recursive: true, force: true });
  });

  it('has curl examples that print what the page says they print', async () => {
    const examples = curlExamples(codeBlocks(markdown, 'sh').filter((block) => block.includes('curl ')));
    const checked = examples.filter((example) => example.printed !== undefined);
    expect(checked.length).toBeGreaterThanOrEqual(5);

    const script = ['set -euo pipefail', ...examples.flatMap(({ command }) => [command, `echo; echo '${outputSeparator}'`])]
      .join('\n')
      .replaceAll(documentedBase, hearth.baseUrl);
    const { stdout } = await run('bash', ['-c', script], { cwd: workFolder, env: { ...process.env, PATH: `/usr/bin:${process.env.PATH}` } });
    const outputs = stdout.split(`\n${outputSeparator}\n`);
    expect(outputs).toHaveLength(examples.length + 1);

    examples.forEach((example, index) => {
      const printed = outputs[index]!.trim();
      if (example.printed === undefined) {
        expect(printed, example.command).toBe('');
        return;
      }
      expectShape(JSON.parse(printed), JSON.parse(example.printed), example.command);
    });
    expect(hearth.llm.requests.some((request) => JSON.stringify(request.body).includes('Hello!'))).toBe(true);
  });

  it('has a Node WebSocket client that prints the streamed answer and exits', async () => {
    const [client] = codeBlocks(markdown, 'js');
    expect(client).toContain("from 'ws'");
    // Named with its .mjs ending, it runs as an ES module in a folder without "type": "module".
    expect(client!.split('\n')[0]).toBe('// client.mjs');
    expect(markdown).toContain('`node client.mjs`');
    // Sent only when no run is active: a client that waited for it could wait forever.
    expect(client).not.toContain('session_sync');

    // Inside the repository, so `ws` resolves from its node_modules.
    const folder = path.resolve('test-artifacts');
    await mkdir(folder, { recursive: true });
    const file = path.join(folder, `docs-client-${randomUUID()}.mjs`);
    await writeFile(file, client!.replaceAll(documentedBase, hearth.baseUrl));
    try {
      const { stdout, stderr } = await run(process.execPath, [file], { timeout: 15_000 });
      expect(stderr).toBe('');
      expect(stdout).toBe(`${answer}\n`);
    } finally {
      await rm(file, { force: true });
    }
    const { body: sessions } = await hearth.request('GET', '/sessions');
    const answered = sessions.filter((session: { title: string }) => session.title === 'Hello!');
    expect(answered.length).toBeGreaterThanOrEqual(1);
  });
});
