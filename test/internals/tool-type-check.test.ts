// write_tool's type check in memory: one worker serves every check, keeps TypeScript's library
// between them, and a check that takes too long is skipped without stopping the next one.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ToolTypeChecker, type ToolTypeCheckerOptions } from '../../src/tools/builtin/tool-type-check.ts';

const checkers: ToolTypeChecker[] = [];
afterEach(async () => {
  for (const checker of checkers.splice(0)) await checker.close();
});
afterAll(() => shared.close());

function checker(options: Partial<ToolTypeCheckerOptions> = {}): ToolTypeChecker {
  const made = new ToolTypeChecker({ maxErrors: 2, timeoutMs: 30_000, idleMs: 60_000, ...options });
  checkers.push(made);
  return made;
}

/** Loading TypeScript in a worker costs about a second of CPU: these tests share one where they can. */
const shared = new ToolTypeChecker({ maxErrors: 2, timeoutMs: 30_000, idleMs: 60_000 });

const fileName = '/tools/convert.ts';
const good = `export const name = 'convert';
export async function execute(params: { value: number }) {
  const reply = await fetch('http://example.invalid');
  return Buffer.from(String(params.value * 2)).toString() + reply.status;
}
`;
const threeErrors = `import { helper } from './missing.ts';
export const name = 'convert';
export function execute(params: { value: number }) {
  const first: string = params.value;
  const second: number = 'two';
  return params.value.lenght + helper();
}
`;

describe('the type check of a written tool', () => {
  it('finds nothing in a module that uses the host globals and imports nothing it lacks', async () => {
    expect(await shared.check(fileName, good)).toEqual({ errors: [], more: '' });
  });

  it('gives at most maxErrors errors, each with its line, column and excerpt, and counts the rest; a missing import is no error', async () => {
    const result = await shared.check(fileName, threeErrors);
    expect(result.errors).toHaveLength(2);
    expect(result.errors[0]).toMatch(/^line 4, column \d+: Type 'number' is not assignable to type 'string'\.\n {4}const first: string = params\.value;$/);
    expect(result.errors[1]).toMatch(/^line 5, column \d+: Type 'string' is not assignable to type 'number'\./);
    expect(result.more).toBe('\n(and 1 more)');
    expect(result.note).toBeUndefined();
  });

  it('answers checks sent together, each its own, from one worker that stays for the next', async () => {
    const [clean, typed] = await Promise.all([shared.check(fileName, good), shared.check('/tools/other.ts', threeErrors)]);
    expect(clean.errors).toEqual([]);
    expect(typed.errors).toHaveLength(2);
    expect((await shared.check(fileName, threeErrors)).errors).toEqual(typed.errors);
    expect(shared.workersStarted).toBe(1);
    expect(shared.running).toBe(true);
  });

  it('skips a check that takes too long, saying so, and ends its worker', async () => {
    const hurried = checker({ timeoutMs: 1 });
    expect(await hurried.check(fileName, good)).toEqual({ errors: [], more: '', note: 'The type check was skipped (it took too long).' });
    expect(hurried.running).toBe(false);
  });

  it('ends its worker once idle, and starts another for a later check', async () => {
    const idle = checker({ idleMs: 1 });
    await idle.check(fileName, good);
    await expect.poll(() => idle.running, { timeout: 5_000 }).toBe(false);
    expect((await idle.check(fileName, threeErrors)).errors).toHaveLength(2);
    expect(idle.workersStarted).toBe(2);
  });
});
