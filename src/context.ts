import { AsyncLocalStorage } from 'node:async_hooks';
import type { AgentEvent } from './protocol/events.ts';

/** What every piece of code running inside one agent run can know about it (README: How a turn works). */
export interface RunContext {
  sessionId: string;
  signal: AbortSignal;
  emit: (event: AgentEvent) => void;
  isSubagent: boolean;
}

const storage = new AsyncLocalStorage<RunContext>();

export function runWithContext<T>(context: RunContext, work: () => T): T {
  return storage.run(context, work);
}

export function currentContext(): RunContext | undefined {
  return storage.getStore();
}
