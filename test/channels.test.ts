import { describe, expect, it } from 'vitest';
import { useHearth } from './support/hearth-server.ts';
import { RecordingChannel } from './support/recording-channel.ts';
import { waitUntil } from './support/wait-until.ts';
import { guardedProfile, markingTool } from './support/marking-tool.ts';

const startApp = useHearth();



for (const backend of ['ollama', 'openai'] as const) {
  describe(`channels (${backend})`, () => {
    async function start(runs: string[] = []) {
      const channel = new RecordingChannel();
      const hearth = await startApp({ backend, tools: [markingTool(runs)], profiles: { guarded: guardedProfile }, channels: [channel] });
      return { server: hearth, channel, sessions: channel.context!.sessions };
    }

    it('is started with the session service, and its status is an integration', async () => {
      const { server, channel } = await start();
      expect(channel.context).toBeDefined();
      const { body } = await server.request('GET', '/integrations');
      expect(body.integrations).toContainEqual({ name: 'recorder', status: 'connected', details: { chats: 0 } });
      await server.close();
      expect(channel.stopped).toBe(true);
    });

    it('is told of every notification', async () => {
      const { server, channel } = await start();
      await server.deps.notifications.raise({ title: 'Reminder', body: 'Water the plants' });
      const [told] = await waitUntil(() => channel.of('notification').length > 0 && channel.of('notification'));
      expect(told!.notification).toMatchObject({ title: 'Reminder', body: 'Water the plants' });
      expect(typeof told!.notification.id).toBe('number');
    });

    it('a waiting approval is presented, and a page decision resolves it on the channel too', async () => {
      const runs: string[] = [];
      const { server, channel } = await start(runs);
      server.llm.script({ toolCalls: [{ name: 'mark', arguments: { label: 'door' } }] }, { content: 'Marked.' });
      const sessionId = await server.createSession('guarded');
      const socket = await server.connect(sessionId);
      socket.send({ type: 'message', content: 'Mark the door' });
      const required = await socket.next('approval_required');
      const [presented] = await waitUntil(() => channel.of('approval').length > 0 && channel.of('approval'));
      expect(presented!.approval).toMatchObject({ session_id: sessionId, call_id: required.call_id, tool: 'mark', subject: 'door' });

      socket.send({ type: 'approve', call_id: required.call_id, decision: 'allow' });
      await socket.next('stream_end');
      const owner = await server.deps.household.firstOwner();
      expect(presented!.approval).toMatchObject({ asked_by: { id: owner.id, name: owner.name }, deciders: [{ id: owner.id, name: owner.name }] });
      expect(channel.of('approval_resolved')).toEqual([
        {
          type: 'approval_resolved',
          approval: presented!.approval,
          resolution: { decision: 'allow', by: 'user', remember: 'once', via: 'page', decider: { id: owner.id, name: owner.name } },
        },
      ]);
      expect(runs).toEqual(['door']);
      socket.close();
    });

    it("a channel's own decision, through the session service, resolves the approval: denied, nothing runs", async () => {
      const runs: string[] = [];
      const { server, channel, sessions } = await start(runs);
      server.llm.script({ toolCalls: [{ name: 'mark', arguments: { label: 'lock' } }] }, { content: 'Left it.' });
      const created = await sessions.findOrCreate('recorder:42', { profileId: 'guarded', origin: 'recorder' });
      if (!created.ok) throw new Error(created.message);
      const sessionId = created.session.id;
      const seen: string[] = [];
      const unfollow = sessions.follow(sessionId, (event) => seen.push(event.type));
      const sent = sessions.send(sessionId, { content: 'Mark the lock' });
      if (!sent.ok) throw new Error(sent.code);

      const [presented] = await waitUntil(() => channel.of('approval').length > 0 && channel.of('approval'));
      const owner = await server.deps.household.firstOwner();
      expect(await sessions.decide(sessionId, presented!.approval.call_id, { decision: 'deny', via: 'recorder', decider: owner })).toEqual({ ok: true });
      expect((await sent.outcome).content).toBe('Left it.');
      expect(runs).toEqual([]);
      expect(channel.of('approval_resolved')[0]!.resolution).toEqual({ decision: 'deny', by: 'user', remember: 'once', via: 'recorder', decider: { id: owner.id, name: owner.name } });
      // A stale button: the call is decided already.
      expect(await sessions.decide(sessionId, presented!.approval.call_id, { decision: 'allow', via: 'recorder', decider: owner })).toMatchObject({ ok: false, code: 'approval_not_found' });
      expect(seen).toContain('approval_required');
      unfollow();

      // The key leads to the same session again, and the page lists it with its origin.
      const again = await sessions.findOrCreate('recorder:42', { profileId: 'guarded', origin: 'recorder' });
      expect(again.ok && again.session.id).toBe(sessionId);
      const { body } = await server.request('GET', `/sessions/${sessionId}`);
      expect(body.origin).toBe('recorder');
      const listed = (await server.request('GET', '/sessions')).body.find((session: any) => session.session_id === sessionId);
      expect(listed.origin).toBe('recorder');
    });
  });
}
