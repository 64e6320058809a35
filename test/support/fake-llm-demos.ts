import type { ScriptStep } from './scripted-llm.ts';

/**
 * The words that make the fake LLM show a headline feature: a message starting with "plan"
 * gets a plan in the planning phase, "long" streams for about a minute (time to press Stop),
 * and "make a tool" writes the `roll_dice` tool with write_tool, calls it, and answers with its roll.
 */
export const demoWords = {
  plan: /^\s*plan\b/i,
  long: /^\s*long\b/i,
  makeTool: /^\s*make\s+(a|me\s+a)\s+tool\b/i,
} as const;

export const demoToolName = 'roll_dice';

export const demoToolCode = `export const name = '${demoToolName}';

export const description = 'Roll dice and give each roll and the total.';

export const parameters = {
  type: 'object',
  properties: {
    count: { type: 'integer', minimum: 1, maximum: 20, description: 'How many dice' },
    sides: { type: 'integer', minimum: 2, maximum: 100, description: 'Sides of each die' },
  },
  required: ['count', 'sides'],
  additionalProperties: false,
};

export async function execute(params: { count: number; sides: number }) {
  const rolls = Array.from({ length: params.count }, () => 1 + Math.floor(Math.random() * params.sides));
  const total = rolls.reduce((sum, roll) => sum + roll, 0);
  return \`Rolled \${params.count}d\${params.sides}: \${rolls.join(' + ')} = \${total}\`;
}
`;

/** The planning phase's request ends with its instruction (src/agent/planning.ts). */
export function isPlanningRequest(messages: any[]): boolean {
  const last = messages.at(-1);
  return last?.role === 'system' && typeof last.content === 'string' && last.content.startsWith('Planning step.');
}

/** A numbered plan for a "plan" message (planning.ts needs numbered steps); DIRECT for every other message. */
export function planningStep(userText: string): ScriptStep {
  if (!demoWords.plan.test(userText)) return { content: 'DIRECT' };
  const goal = userText.replace(demoWords.plan, '').trim().replace(/\s+/g, ' ').slice(0, 120) || 'the request';
  const plan = [
    `1. Work out what "${goal}" needs`,
    '2. Write the steps into the todo list (todo)',
    '3. Work through them one by one',
    '4. Answer with what was done and what is left',
  ].join('\n');
  // One pause, then the whole plan: Hearth collects the planning reply from a stream, where the
  // default 8-character chunks each waited the 400 ms (11 s for a plan).
  return { content: plan, chunkSize: plan.length, delayMs: 400 };
}

export function planAnswerStep(thinkingWanted: boolean): ScriptStep {
  return {
    ...(thinkingWanted ? { thinking: 'There is a plan above; I follow it and report back.' } : {}),
    content: [
      '**Fake model here.** I followed the plan above:',
      '',
      '1. Worked out what you asked for.',
      '2. Wrote the steps down (a real model would use the `todo` tool here).',
      '3. Went through them.',
      '',
      'Nothing was really done: this reply comes from `npm run dev:fake-llm`. With planning enabled in the profile, a real model plans the same way before it acts.',
    ].join('\n'),
    delayMs: 15,
  };
}

const longWords =
  'Once upon a time a small hearth kept a house warm through a long winter. Every evening it told the people around it what it had seen that day: ' +
  'the snow on the roof, the fox at the edge of the wood, the kettle that sang too early. ';
const longChunks = 600;
const longChunkDelayMs = 100;

/** About a minute of streamed text, a word a chunk, so there is time to press Stop. */
export function longStep(thinkingWanted: boolean): ScriptStep {
  const words = longWords.split(/(?<= )/);
  return {
    ...(thinkingWanted ? { thinking: 'A long answer was asked for. I will take my time.' } : {}),
    chunkCount: longChunks,
    chunkText: (index) => {
      const word = words[index % words.length] ?? ' ';
      return index > 0 && index % words.length === 0 ? `\n\n${word}` : word;
    },
    delayMs: longChunkDelayMs,
  };
}

export function writeToolStep(thinkingWanted: boolean): ScriptStep {
  return {
    ...(thinkingWanted ? { thinking: `No tool rolls dice yet. I will write ${demoToolName} with write_tool, then call it.` } : {}),
    toolCalls: [{ name: 'write_tool', arguments: { name: demoToolName, code: demoToolCode } }],
    delayMs: 15,
  };
}

export function callNewToolStep(thinkingWanted: boolean): ScriptStep {
  return {
    ...(thinkingWanted ? { thinking: `${demoToolName} is installed. Now I call it.` } : {}),
    toolCalls: [{ name: demoToolName, arguments: { count: 2, sides: 6 } }],
    delayMs: 15,
  };
}

export function newToolAnswerStep(result: string, thinkingWanted: boolean): ScriptStep {
  return {
    ...(thinkingWanted ? { thinking: `${demoToolName} answered. I report the roll.` } : {}),
    content: [
      `I wrote a new tool, \`${demoToolName}\`, installed it with \`write_tool\`, and called it: **${result.trim()}**.`,
      '',
      `It stays in the user-tools folder, so every profile can call \`${demoToolName}\` from now on; the Tools panel lists it.`,
    ].join('\n'),
    delayMs: 15,
  };
}
