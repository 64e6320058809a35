import { Type, type Static } from '@sinclair/typebox';
import { toolFailure } from '../../failure.ts';
import type { Tool, ToolContext, ToolOutput } from '../tool.ts';
import { conversationOf, profileRefusal, type PersonReach } from './profile-reach.ts';

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

/**
 * `reach` keeps a sub-agent to the profiles the conversation's person may use (a child's model
 * cannot hand work to server_admin), and a session shared with the household to its own profile:
 * whoever writes there would otherwise act with its person's other profiles.
 */
export function createSpawnAgentTool(runSubagent: SubagentRunner, reach?: PersonReach): Tool<Static<typeof parameters>> {
  async function refusal(profileId: string | undefined, context: ToolContext): Promise<string | undefined> {
    const session = reach && (await conversationOf(reach, context));
    if (!reach || !session || profileId === undefined || profileId === session.profileId) return undefined;
    if (session.shared) {
      return `This session is shared with the household: a sub-agent here works only under its own profile, ${session.profileId}, as whoever writes here may not use the others.`;
    }
    return profileRefusal(reach, session.personId, profileId);
  }
  return {
    name: 'spawn_agent',
    description:
      'Hand a self-contained task to a sub-agent that does not see this chat; returns its final answer.',
    parameters,
    timeoutMs: subagentTimeoutMs,
    async execute({ task, profile_id: profileId }, context) {
      const refused = await refusal(profileId, context);
      if (refused !== undefined) return toolFailure(`No sub-agent was started. ${refused}`);
      return runSubagent(task, profileId, context);
    },
  };
}
