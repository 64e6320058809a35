// RunHub alone: which sessions have a run, their stop signals, and the fan-out of a run's events
// to every follower of its session, a follower who joins mid-run first hearing what it missed.
import { describe, expect, it } from 'vitest';
import { RunHub, type StartResult } from '../../src/agent/run-hub.ts';
import type { AgentEvent } from '../../src/protocol/events.ts';

/** A follower that keeps every event it hears. */
function follower(hub: RunHub, sessionId: string): { heard: AgentEvent[]; leave: () => void } {
  const heard: AgentEvent[] = [];
  const leave = hub.subscribe(sessionId, (event) => heard.push(event));
  return { heard, leave };
}

function claimed(result: StartResult): Extract<StartResult, { ok: true }> {
  if (!result.ok) throw new Error('the session was not free');
  return result;
}

const ended: AgentEvent = { type: 'stream_end', content: 'Hello there', length: 11, context_tokens: 42, max_context_tokens: 8192 };

describe('claiming a session', () => {
  it('a second start is refused while a run holds the session; other sessions are free; the run end frees it', () => {
    const hub = new RunHub();
    const run = claimed(hub.start('kitchen'));
    expect(hub.isRunning('kitchen')).toBe(true);
    expect(hub.start('kitchen')).toEqual({ ok: false });
    expect(hub.start('garden').ok).toBe(true);

    run.emit({ type: 'stream_start' });
    expect(hub.start('kitchen')).toEqual({ ok: false });
    run.emit(ended);
    expect(hub.isRunning('kitchen')).toBe(false);
    expect(hub.start('kitchen').ok).toBe(true);
  });

  it.each<[string, AgentEvent]>([
    ['stream_end', ended],
    ['stream_stopped', { type: 'stream_stopped', length: 0, reason: 'user' }],
    ['session_sync running: false', { type: 'session_sync', running: false }],
  ])('%s ends the run; events the old run emits after it reach nobody', (_, end) => {
    const hub = new RunHub();
    const run = claimed(hub.start('kitchen'));
    const { heard } = follower(hub, 'kitchen');
    run.emit(end);
    expect(hub.isRunning('kitchen')).toBe(false);
    run.emit({ type: 'stream_delta', delta: 'late' });
    const next = claimed(hub.start('kitchen'));
    run.emit({ type: 'stream_delta', delta: 'from the old run' });
    next.emit({ type: 'stream_start' });
    expect(heard).toEqual([end, { type: 'stream_start' }]);
  });

  it('the session is free before the run end reaches a follower, so a follower may start the next run from it', () => {
    const hub = new RunHub();
    const run = claimed(hub.start('kitchen'));
    const restarts: boolean[] = [];
    hub.subscribe('kitchen', (event) => {
      if (event.type === 'stream_end') restarts.push(hub.isRunning('kitchen'), hub.start('kitchen').ok);
    });
    run.emit(ended);
    expect(restarts).toEqual([false, true]);
    expect(hub.isRunning('kitchen')).toBe(true);
  });
});

describe('stop', () => {
  it("aborts the run's signal with the reason; false when the session has no run", () => {
    const hub = new RunHub();
    expect(hub.stop('kitchen')).toBe(false);
    const byPerson = claimed(hub.start('kitchen'));
    const byShutdown = claimed(hub.start('garden'));
    expect(byPerson.signal.aborted).toBe(false);
    expect(hub.stop('kitchen')).toBe(true);
    expect(byPerson.signal.aborted).toBe(true);
    expect(byPerson.signal.reason).toBe('user');
    expect(hub.stop('garden', 'shutdown')).toBe(true);
    expect(byShutdown.signal.reason).toBe('shutdown');
    // Stopping asks; the session stays held until the run says it ended.
    expect(hub.isRunning('kitchen')).toBe(true);
    byPerson.emit({ type: 'stream_stopped', length: 0, reason: 'user' });
    expect(hub.isRunning('kitchen')).toBe(false);
    expect(hub.stop('kitchen')).toBe(false);
  });
});

describe('followers', () => {
  it('every follower of a session hears each event, and only its own session\'s', () => {
    const hub = new RunHub();
    const first = follower(hub, 'kitchen');
    const second = follower(hub, 'kitchen');
    const elsewhere = follower(hub, 'garden');
    const run = claimed(hub.start('kitchen'));
    run.emit({ type: 'stream_start' });
    run.emit({ type: 'stream_delta', delta: 'Hel' });
    const idle: AgentEvent = { type: 'session_sync', running: false };
    expect(first.heard).toEqual([idle, { type: 'stream_start' }, { type: 'stream_delta', delta: 'Hel' }]);
    expect(second.heard).toEqual(first.heard);
    expect(elsewhere.heard).toEqual([idle]);

    second.leave();
    run.emit({ type: 'stream_delta', delta: 'lo' });
    expect(first.heard.at(-1)).toEqual({ type: 'stream_delta', delta: 'lo' });
    expect(second.heard).toHaveLength(3);
  });

  it('a follower joining mid-run first hears the run so far, consecutive deltas merged, then every live event', () => {
    const hub = new RunHub();
    const run = claimed(hub.start('kitchen'));
    const events: AgentEvent[] = [
      { type: 'stream_start' },
      { type: 'thinking_delta', delta: 'The person ' },
      { type: 'thinking_delta', delta: 'greets me.' },
      { type: 'thinking_end' },
      { type: 'stream_delta', delta: 'Hel' },
      { type: 'stream_delta', delta: 'lo' },
      { type: 'tool_started', call_id: 'c1', tool: 'clock', args: {}, is_subagent: false },
      { type: 'stream_delta', delta: ' there' },
    ];
    for (const event of events) run.emit(event);
    const late = follower(hub, 'kitchen');
    expect(late.heard).toEqual([
      { type: 'stream_start' },
      { type: 'thinking_delta', delta: 'The person greets me.' },
      { type: 'thinking_end' },
      { type: 'stream_delta', delta: 'Hello' },
      { type: 'tool_started', call_id: 'c1', tool: 'clock', args: {}, is_subagent: false },
      { type: 'stream_delta', delta: ' there' },
    ]);
    run.emit(ended);
    expect(late.heard.at(-1)).toEqual(ended);

    // Once the run has ended, a newcomer hears that the session is idle, not the old run.
    expect(follower(hub, 'kitchen').heard).toEqual([{ type: 'session_sync', running: false }]);
  });

  it('the unwatched callback hears of a session once its last follower leaves, once', () => {
    const unwatched: string[] = [];
    const hub = new RunHub((sessionId) => unwatched.push(sessionId));
    const first = follower(hub, 'kitchen');
    const second = follower(hub, 'kitchen');
    expect(hub.isWatched('kitchen')).toBe(true);
    first.leave();
    expect(unwatched).toEqual([]);
    expect(hub.isWatched('kitchen')).toBe(true);
    second.leave();
    second.leave();
    expect(unwatched).toEqual(['kitchen']);
    expect(hub.isWatched('kitchen')).toBe(false);

    // A follower who left the session's earlier set does not end the watch of the followers who came after.
    const again = follower(hub, 'kitchen');
    first.leave();
    expect(hub.isWatched('kitchen')).toBe(true);
    again.leave();
    expect(unwatched).toEqual(['kitchen', 'kitchen']);
  });
});

describe('tell and broadcast', () => {
  it("tell puts an event into the active run's history, so a later follower hears it too; without a run it reaches the followers alone", () => {
    const hub = new RunHub();
    const present = follower(hub, 'kitchen');
    const switched: AgentEvent = { type: 'profile_switched', profile_id: 'guarded', profile_name: 'Guarded' };
    hub.tell('kitchen', switched);
    expect(present.heard).toEqual([{ type: 'session_sync', running: false }, switched]);

    const run = claimed(hub.start('kitchen'));
    run.emit({ type: 'stream_start' });
    hub.tell('kitchen', switched);
    expect(present.heard.slice(2)).toEqual([{ type: 'stream_start' }, switched]);
    expect(follower(hub, 'kitchen').heard).toEqual([{ type: 'stream_start' }, switched]);

    // An end told from outside ends the run as the run's own would.
    hub.tell('kitchen', { type: 'session_sync', running: false });
    expect(hub.isRunning('kitchen')).toBe(false);
  });

  it('broadcast reaches every follower of every session, or of the one named, and is kept in no history', () => {
    const hub = new RunHub();
    const kitchen = follower(hub, 'kitchen');
    const garden = follower(hub, 'garden');
    const run = claimed(hub.start('kitchen'));
    const changed: AgentEvent = { type: 'tools_changed', tools: [] };
    hub.broadcast(changed);
    const refused: AgentEvent = { type: 'error', code: 'session_busy', message: 'The session is busy.' };
    hub.broadcast(refused, 'garden');
    expect(kitchen.heard).toEqual([{ type: 'session_sync', running: false }, changed]);
    expect(garden.heard).toEqual([{ type: 'session_sync', running: false }, changed, refused]);
    run.emit({ type: 'stream_start' });
    expect(follower(hub, 'kitchen').heard).toEqual([{ type: 'stream_start' }]);
    hub.broadcast(changed, 'nobody-follows');
  });
});
