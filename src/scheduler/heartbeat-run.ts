import type { Notifications } from '../events/notifications.ts';
import { heartbeatPrompt, judgeHeartbeatAnswer } from '../agent/heartbeat.ts';
import type { ProfileRegistry } from '../profiles/profile-registry.ts';
import type { Sessions } from '../sessions/sessions.ts';
import type { Notification } from '../store/notifications-repository.ts';

export type HeartbeatResult =
  | { status: 'quiet'; sessionId: string }
  | { status: 'notified'; sessionId: string; notification: Notification }
  | { status: 'failed'; sessionId: string; notification: Notification }
  | { status: 'skipped'; reason: 'unknown_profile' | 'session_busy'; sessionId?: string };

/** What a heartbeat run asks of sessions: the profile's heartbeat session, one turn in it, and a quiet answer's removal. */
export type HeartbeatSessions = Pick<Sessions, 'findOrCreate' | 'lastDisplayMessageId' | 'send' | 'dropDisplayMessagesAfter' | 'announce'>;

export interface HeartbeatRunner {
  sessions: HeartbeatSessions;
  profiles: ProfileRegistry;
  notifications: Notifications;
}

/**
 * One heartbeat run of a profile (docs/agent.md, "Heartbeat"), in the profile's own heartbeat session
 * (the session the key `heartbeat:<profile id>` leads to): a quiet answer is dropped from the
 * display history, anything else raises a notification. When to call it (every, active hours)
 * is the timers'.
 */
export async function runHeartbeat(runner: HeartbeatRunner, profileId: string): Promise<HeartbeatResult> {
  const { sessions, profiles, notifications } = runner;
  const profile = profiles.get(profileId);
  if (!profile) return { status: 'skipped', reason: 'unknown_profile' };
  // Titled on the first run, and again if the person deleted it; announced from its first answer on, as the page's are.
  const session = await sessions.findOrCreate(`heartbeat:${profileId}`, { profileId, title: `Heartbeat: ${profile.name}` });
  if (!session.ok) return { status: 'skipped', reason: 'unknown_profile' };
  const sessionId = session.session.id;
  const before = await sessions.lastDisplayMessageId(sessionId);
  const sent = sessions.send(sessionId, { content: heartbeatPrompt(profile), unattended: true });
  if (!sent.ok) return { status: 'skipped', reason: 'session_busy', sessionId };
  const outcome = await sent.outcome;

  if (outcome.status !== 'completed') {
    const reason = outcome.status === 'failed' || outcome.status === 'refused' ? outcome.error.message : 'the run was stopped';
    const notification = await notifications.raise({ title: `The ${profile.name} heartbeat did not finish`, body: reason, sessionId });
    return { status: 'failed', sessionId, notification };
  }
  const verdict = judgeHeartbeatAnswer(outcome.content);
  if (verdict.type === 'quiet') {
    await sessions.dropDisplayMessagesAfter(sessionId, before);
    sessions.announce(sessionId, 'updated');
    return { status: 'quiet', sessionId };
  }
  const notification = await notifications.raise({ title: verdict.title, body: verdict.body, sessionId });
  return { status: 'notified', sessionId, notification };
}
