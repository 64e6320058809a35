import type { Tool } from '../../src/tools/tool.ts';

/** Tools that exercise every way a call can end; registered only in tests. */
export function createTestTools(): Tool[] {
  return [
    {
      name: 'add_numbers',
      description: 'Adds two numbers.',
      parameters: {
        type: 'object',
        properties: { a: { type: 'number' }, b: { type: 'number' } },
        required: ['a', 'b'],
        additionalProperties: false,
      },
      execute: async (args: { a: number; b: number }) => String(args.a + args.b),
    },
    {
      name: 'explode',
      description: 'Always throws.',
      parameters: { type: 'object', properties: {} },
      execute: async () => {
        throw new Error('the fuse was lit');
      },
    },
    {
      name: 'wait_for_stop',
      description: 'Runs until its signal aborts.',
      parameters: { type: 'object', properties: {} },
      timeoutMs: 60_000,
      execute: (_args, context) =>
        new Promise((resolve) => context.signal.addEventListener('abort', () => resolve('aborted'), { once: true })),
    },
    {
      name: 'too_slow',
      description: 'Ignores its signal and never finishes in time.',
      parameters: { type: 'object', properties: {} },
      timeoutMs: 50,
      execute: () => new Promise(() => {}),
    },
    {
      name: 'report_session',
      description: 'Reports the session id it receives in its context.',
      parameters: { type: 'object', properties: {} },
      execute: async (_args, context) => `session=${context.sessionId}`,
    },
  ];
}

/** A profile exposing the test tools (and scratchpad) with a small iteration budget. */
export function testProfile(maxIterations = 4): string {
  return `---
id: tester
name: Tester
description: Exercises the tool loop.
temperature: 0.1
max_iterations: ${maxIterations}
tools: [add_numbers, explode, wait_for_stop, too_slow, report_session, scratchpad]
---
You test things.
`;
}

/** A profile `tooler` that exposes the named tools (user tools, mostly). */
export function toolerProfile(tools: readonly string[], maxIterations = 12): string {
  return `---
id: tooler
name: Tooler
description: Calls user tools.
temperature: 0.1
max_iterations: ${maxIterations}
planning_enabled: false
tools: [${tools.join(', ')}]
---
You call the tools you are asked to.
`;
}
