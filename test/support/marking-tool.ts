import type { Tool } from '../../src/tools/tool.ts';

/** A tool that only records each run's label: what an approval decision lets through is visible. */
export function markingTool(runs: string[]): Tool<{ label: string }> {
  return {
    name: 'mark',
    description: 'Marks something.',
    parameters: { type: 'object', properties: { label: { type: 'string' } }, required: ['label'], additionalProperties: false },
    subject: (args) => args.label,
    async execute(args) {
      runs.push(args.label);
      return { output: `marked ${args.label}`, success: true };
    },
  };
}

/** A profile that offers only `mark` and asks before every call of it. */
export const guardedProfile = `---\nid: guarded\nname: Guarded\nmax_iterations: 4\ntools: [mark]\napprovals:\n  default: allow\n  ask: [mark]\n---\nYou mark things.\n`;
