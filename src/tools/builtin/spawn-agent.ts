import { Type, type Static } from '@sinclair/typebox';
import type { Tool, ToolContext, ToolOutput } from '../tool.ts';

const parameters = Type.Object(
  {
    task: Type.String({ minLength: 1, description: 'Complete, self-contained instructions' }),
    profile_id: Type.Optional(Type.String({ description: 'Default: yours' })),
  },
  { additionalProperties: false },
);

/** Runs a task in a fresh, isolated agent and answers with its final reply (provided by the agent layer). */
export type SubagentRunner = (task: string, profileId: string | undefined, context: ToolContext) => Promise<ToolOutput>;

const subagentTimeoutMs = 30 * 60_000;

export function createSpawnAgentTool(runSubagent: SubagentRunner): Tool<Static<typeof parameters>> {
  return {
    name: 'spawn_agent',
    description:
      'Hand a self-contained task to a sub-agent that does not see this chat; returns its final answer.',
    parameters,
    timeoutMs: subagentTimeoutMs,
    execute: ({ task, profile_id: profileId }, context) => runSubagent(task, profileId, context),
  };
}
