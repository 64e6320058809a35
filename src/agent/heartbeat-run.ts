import { findHeartbeatSession, setHeartbeatSession } from '../store/heartbeat-sessions-repository.ts';
import { dropDisplayMessagesAfter, lastDisplayMessageId } from '../store/messages-repository.ts';
import type { Notification } from '../store/notifications-repository.ts';
import { createSession, findSession, updateSession } from '../store/sessions-repository.ts';
import type { Agent } from './agent.ts';
import { heartbeatPrompt, judgeHeartbeatAnswer } from './heartbeat.ts';

export type HeartbeatResult =
  | { status: 'quiet'; sessionId: string }
  | { status: 'notified'; sessionId: string; notification: Notification }
  | { status: 'failed'; sessionId: string; notification: Notification }
  | { status: 'skipped'; reason: 'unknown_profile' | 'session_busy'; sessionId?: string };

/**
 * One heartbeat run of a profile (README: Heartbeat), in the profile's own heartbeat session:
 * a quiet answer is dropped from the display history, anything else raises a notification.
 * When to call it (every, active hours) is the scheduler's.
 */
export async function runHeartbeat(agent: Agent, profileId: string): Promise<HeartbeatResult> {
  const profile = agent.deps.profiles.get(profileId);
  if (!profile) return { status: 'skipped', reason: 'unknown_profile' };
  const sessionId = await heartbeatSession(agent, profileId, profile.name);
  const before = await lastDisplayMessageId(agent.deps.db, sessionId);
  const sent = agent.send(sessionId, { content: heartbeatPrompt(profile), unattended: true });
  if (!sent.ok) return { status: 'skipped', reason: 'session_busy', sessionId };
  const outcome = await sent.outcome;

  if (outcome.status !== 'completed') {
    const reason = outcome.status === 'failed' || outcome.status === 'refused' ? outcome.error.message : 'the run was stopped';
    const notification = await agent.notifications.raise({ title: `The ${profile.name} heartbeat did not finish`, body: reason, sessionId });
    return { status: 'failed', sessionId, notification };
  }
  const verdict = judgeHeartbeatAnswer(outcome.content);
  if (verdict.type === 'quiet') {
    await dropDisplayMessagesAfter(agent.deps.db, sessionId, before);
    agent.sessionChanged(sessionId, 'updated');
    return { status: 'quiet', sessionId };
  }
  const notification = await agent.notifications.raise({ title: verdict.title, body: verdict.body, sessionId });
  return { status: 'notified', sessionId, notification };
}

/** The profile's heartbeat session, made and titled on the first run (and again if the person deleted it). */
async function heartbeatSession(agent: Agent, profileId: string, profileName: string): Promise<string> {
  const { db } = agent.deps;
  const existing = await findHeartbeatSession(db, profileId);
  if (existing && (await findSession(db, existing))) return existing;
  const session = await createSession(db, profileId);
  await updateSession(db, session.id, { title: `Heartbeat: ${profileName}` });
  await setHeartbeatSession(db, profileId, session.id);
  return session.id;
}
