import { defaultToolTimeoutMs } from './agent-loop.ts';
import { compressIfNeeded } from './compression.ts';
import type { AgentDependencies } from './dependencies.ts';
import { setupForSession } from './round-setup.ts';
import type { TurnPorts } from './turn.ts';
import { storedTurns, type TurnStore } from './turn-store.ts';

/** A stored session's turn ports, made of the agent's dependencies; `store` is the SQLite one unless given. */
export function turnPorts(deps: AgentDependencies, store: TurnStore = storedTurns(deps.db, deps.images)): TurnPorts {
  const { config } = deps;
  return {
    store,
    setup: async (sessionId, runProfileId) => {
      const session = await store.findSession(sessionId);
      return { ...(await setupForSession(session, deps, runProfileId)), session };
    },
    registry: deps.tools,
    authorize: (request) => deps.approvals.authorize(request),
    compress: (trigger) => compressIfNeeded(trigger, deps),
    profileIds: () => deps.profiles.list().map((profile) => profile.id),
    logger: deps.logger,
    limits: {
      maxAnswerCharacters: config.MAX_ANSWER_CHARS,
      toolTimeoutMs: defaultToolTimeoutMs,
      compression: config,
    },
  };
}
