import { randomBytes } from 'node:crypto';
import type { ContextMessage } from './chat-message.ts';
import type { NewMessage } from '../store/message.ts';
import { clearSessionWorkState, findSession } from '../store/sessions-repository.ts';
import type { SubagentRunner } from '../tools/builtin/spawn-agent.ts';
import type { ToolContext } from '../tools/tool.ts';
import { defaultToolTimeoutMs, runAgentLoop, type Conversation } from './agent-loop.ts';
import { outsideReadingOf } from './outside-content.ts';
import { profileNamed, setupForProfile, type SetupSources } from './round-setup.ts';
import type { AgentDependencies } from './dependencies.ts';

/** What the sub-agent runner uses: the setup's sources, the gate, MAX_ANSWER_CHARS, and the database for the parent's profile and the sub-agent's work state. */
export type SubagentDependencies = SetupSources & Pick<AgentDependencies, 'db' | 'approvals'> & { config: Pick<AgentDependencies['config'], 'MAX_ANSWER_CHARS'> };

/**
 * Sub-agents run in memory: no history but their task, their own scratchpad and todo
 * under `subagent_<12 hex>`, the parent's stop signal, events marked `is_subagent`.
 */
export function createSubagentRunner(dependencies: () => SubagentDependencies): SubagentRunner {
  return async (task, profileId, parent) => {
    const deps = dependencies();
    if (parent.isSubagent) return { output: 'A sub-agent cannot spawn further agents; do the task yourself.', success: false };
    const session = await findSession(deps.db, parent.sessionId);
    const profile = profileNamed(profileId ?? session?.profileId, deps.profiles);
    if (!('prompt' in profile)) return { output: profile.message, success: false };

    // The task is the parent model's words, not the person's; what the parent read binds the sub-agent (context.outside).
    const messages: ContextMessage[] = [{ role: 'user', content: task, agent_written: true }];
    const remember = async (added: NewMessage[]) => {
      messages.push(...added.map(({ is_plan: _plan, is_summary: _summary, stopped: _stopped, success: _success, ...message }) => message));
    };
    const conversation: Conversation = { load: async () => messages, append: remember, appendToContext: remember };
    const context: ToolContext = {
      sessionId: `subagent_${randomBytes(6).toString('hex')}`,
      parentSessionId: parent.sessionId,
      signal: parent.signal,
      emit: parent.emit,
      isSubagent: true,
      ...(parent.outside && { outside: parent.outside }),
      ...(parent.askedBy !== undefined && { askedBy: parent.askedBy }),
    };
    try {
      const outcome = await runAgentLoop({
        conversation,
        // The parent run's rules keep applying: a sub-agent in a laxer profile gains nothing.
        setup: async () =>
          setupForProfile(profile, deps, {
            subagent: true,
            memory: session && !session.shared ? await deps.memorySummary(session.personId) : undefined,
            governingPolicies: parent.approvalPolicies ?? [],
            sessionProfileId: parent.sessionProfileId ?? session?.profileId,
          }),
        registry: deps.tools,
        authorize: (request) => deps.approvals.authorize(request),
        toolTimeoutMs: defaultToolTimeoutMs,
        maxAnswerCharacters: deps.config.MAX_ANSWER_CHARS,
        context,
      });
      switch (outcome.status) {
        case 'completed': {
          const output = outcome.content || 'The sub-agent finished without a final answer.';
          // Its answer may carry what its pages told it: the parent reads it as outside content, not to be quoted.
          const read = outsideReadingOf(messages).sources;
          return read.length === 0 ? output : { output, outside: { source: `a sub-agent's answer (it read ${read.join(', ')})`, quotable: false } };
        }
        case 'stopped':
          return { output: 'The sub-agent was stopped by the user.', success: false };
        case 'failed':
          return { output: `The sub-agent failed: ${outcome.error.message}`, success: false };
      }
    } finally {
      await Promise.all(deps.tools.list().map((tool) => tool.releaseSession?.(context.sessionId)));
      await clearSessionWorkState(deps.db, context.sessionId);
    }
  };
}
