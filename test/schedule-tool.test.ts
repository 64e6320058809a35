import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { RunFinished } from '../src/scheduler/scheduler.ts';
import { listMessages } from '../src/store/messages-repository.ts';
import { useHearth } from './support/hearth-server.ts';
import { ManualClock } from './support/manual-clock.ts';

const start = useHearth();


function toolAnswer(request: { body: any }): string {
  const messages = request.body.messages as { role: string; content: string }[];
  return messages.filter((message) => message.role === 'tool').at(-1)!.content;
}

describe('the schedule tool', () => {
  it('sets a reminder from a chat message, echoes its time in the zone, and the reminder runs when the clock reaches it', async () => {
    // Mon 23 Nov 2026, 16:00 in Berlin.
    const clock = new ManualClock('2026-11-23T15:00:00Z');
    const hearth = await start({ clock, env: { SCHEDULER_TIMEZONE: 'Europe/Berlin' } });
    hearth.llm.script(
      {
        toolCalls: [
          { name: 'schedule', arguments: { action: 'create', name: 'Call the plumber', at: '2026-11-24 09:00', prompt: 'Remind the person to call the plumber.' } },
        ],
      },
      { content: 'I will remind you tomorrow at 09:00.' },
    );
    const chatSession = await hearth.createSession('smart_home');
    const socket = await hearth.connect(chatSession);
    socket.send({ type: 'message', content: 'remind me tomorrow at 9 to call the plumber' });
    await socket.next('stream_end');

    const answer = toolAnswer(hearth.llm.requests[1]!);
    expect(answer).toContain('once at Tue 24 Nov 2026 09:00 Europe/Berlin (2026-11-24T09:00:00+01:00)');
    const listed = await hearth.request('GET', '/schedules');
    expect(listed.body.schedules).toHaveLength(1);
    const [schedule] = listed.body.schedules;
    expect(schedule).toMatchObject({ name: 'Call the plumber', at: '2026-11-24T09:00:00+01:00', timezone: 'Europe/Berlin', profile_id: 'smart_home', enabled: true });
    expect(clock.nextTimer()).toBe('2026-11-24T08:00:00.000Z');

    hearth.llm.script({ content: 'Time to call the plumber!' });
    const finished = once(hearth.app.scheduler, 'run_finished').then(([event]) => event as RunFinished);
    clock.advanceTo('2026-11-24T08:00:00Z');
    const run = await finished;
    expect(run).toMatchObject({ scheduleId: schedule.id, status: 'ok' });
    expect(run.sessionId).not.toBe(chatSession);

    const display = await listMessages(hearth.deps.db, run.sessionId!, 'display');
    expect(display.map((message) => [message.role, message.content, message.scheduled ?? false])).toEqual([
      ['user', 'Remind the person to call the plumber.', true],
      ['assistant', 'Time to call the plumber!', false],
    ]);
    const after = (await hearth.request('GET', '/schedules')).body.schedules[0];
    expect(after).toMatchObject({ enabled: false, last_status: 'ok', next_run_at: null });
  });

  it('lists, pauses, resumes and cancels, and refuses a past time with the field named and nothing stored', async () => {
    const clock = new ManualClock('2026-11-23T15:00:00Z');
    const hearth = await start({ clock });
    const created = await hearth.app.scheduler.create({ name: 'Backups', prompt: 'Check the backups', cron: '0 3 * * *', timezone: 'Europe/Berlin' });
    if (!created.ok) throw new Error(created.message);
    const id = created.value.id;
    hearth.llm.script(
      { toolCalls: [{ name: 'schedule', arguments: { action: 'create', name: 'Late', prompt: 'x', at: '2026-11-22 09:00', timezone: 'Europe/Berlin' } }] },
      { toolCalls: [{ name: 'schedule', arguments: { action: 'pause', id } }] },
      { toolCalls: [{ name: 'schedule', arguments: { action: 'list' } }] },
      { toolCalls: [{ name: 'schedule', arguments: { action: 'resume', id } }] },
      { toolCalls: [{ name: 'schedule', arguments: { action: 'cancel', id } }] },
      { toolCalls: [{ name: 'schedule', arguments: { action: 'cancel', id } }] },
      { content: 'Done.' },
    );
    const socket = await hearth.connect(await hearth.createSession());
    socket.send({ type: 'message', content: 'tidy my schedules' });
    await socket.next('stream_end');

    const answers = hearth.llm.requests.slice(1).map(toolAnswer);
    expect(answers[0]).toMatch(/^Not created: at: 2026-11-22T09:00:00\+01:00 is in the past/);
    expect(answers[1]).toContain('[paused or done]');
    expect(answers[2]).toContain(`Backups (id ${id}`);
    expect(answers[2]).toContain('[paused or done]');
    expect(answers[3]).toContain('next: Tue 24 Nov 2026 03:00 Europe/Berlin; Wed 25 Nov 2026 03:00 Europe/Berlin; Thu 26 Nov 2026 03:00 Europe/Berlin');
    expect(answers[4]).toBe(`Cancelled Backups (id ${id}); it will not run again.`);
    expect(answers[5]).toMatch(/^No schedule /);
    expect((await hearth.request('GET', '/schedules')).body.schedules).toEqual([]);
  });
});
