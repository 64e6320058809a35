import type { Logger } from '../logger.ts';
import type { Db } from '../store/database.ts';
import type { Message, NewMessage } from '../store/message.ts';
import { appendMessages, listMessages } from '../store/messages-repository.ts';
import { endRun, listActiveRuns, readDraft } from '../store/runs-repository.ts';

export const interruptedCallResult =
  'Interrupted by a server restart before this call finished: it may or may not have taken effect. Check before trying it again.';

/**
 * At start, before anything else runs: closes every run a crash or kill cut off. Each call
 * left without a result gets one saying so (the context stays valid for both backends),
 * and the answer as far as it was checkpointed is kept, marked `interrupted`.
 */
export async function closeInterruptedRuns(db: Db, logger: Logger): Promise<number> {
  const sessions = await listActiveRuns(db);
  for (const sessionId of sessions) {
    const unanswered = unansweredCalls(await listMessages(db, sessionId, 'context'));
    const draft = await readDraft(db, sessionId);
    const closing: NewMessage[] = [
      ...unanswered.map(
        (call): NewMessage => ({ role: 'tool', content: interruptedCallResult, tool_call_id: call.id, name: call.name, success: false }),
      ),
      { role: 'assistant', content: draft.text, ...(draft.thinking !== '' && { thinking: draft.thinking }), interrupted: true },
    ];
    await db.transaction().execute(async (transaction) => {
      await appendMessages(transaction, sessionId, closing);
      await endRun(transaction, sessionId);
    });
    logger.warn({ sessionId, unansweredCalls: unanswered.length, keptCharacters: draft.text.length }, 'closed a run cut off by a restart');
  }
  return sessions.length;
}

/** The calls of the last assistant message that asked for tools and have no result after it. */
function unansweredCalls(context: readonly Message[]): { id: string; name: string }[] {
  const index = context.findLastIndex((message) => message.role === 'assistant' && (message.tool_calls?.length ?? 0) > 0);
  if (index === -1) return [];
  const answered = new Set(context.slice(index + 1).flatMap((message) => (message.role === 'tool' && message.tool_call_id ? [message.tool_call_id] : [])));
  return (context[index]!.tool_calls ?? []).filter((call) => !answered.has(call.id));
}
