import type { ClockOffset, LlmProcess } from '../llm-process.ts';
import type { ServerProcess } from '../server-process.ts';

/** What every scenario gets: the running server, the scripted LLM and the clock offset between them. */
export interface BenchContext {
  server: ServerProcess;
  llm: LlmProcess;
  clockOffset: ClockOffset;
}
