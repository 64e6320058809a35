import type { Config } from '../config.ts';
import type { BackendRegistry } from '../llm/backend-registry.ts';
import type { Logger } from '../logger.ts';
import type { ProfileRegistry } from '../profiles/profile-registry.ts';
import type { Db } from '../store/database.ts';
import type { MessageImages } from '../store/message-images.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';
import type { ApprovalGate } from './approval-gate.ts';

/** What the agent layer is built from: `createDependencies` in app.ts makes one, tests make their own. */
export interface AgentDependencies {
  db: Db;
  config: Config;
  profiles: ProfileRegistry;
  tools: ToolRegistry;
  backends: BackendRegistry;
  persona: string;
  logger: Logger;
  /** The person's long-term memory summary, injected into their sessions' calls, if they have one. */
  memorySummary: (personId: string) => Promise<string | undefined>;
  /** The gate every tool call passes (docs/agent.md, "Approvals"). */
  approvals: ApprovalGate;
  /** Where the images of stored messages live. */
  images: MessageImages;
}
