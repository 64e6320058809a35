// Who decides an approval, through the real server with signed-in people: a child's ask waits for
// the adults (their pages and their notifications), the child's own REST and WebSocket decisions are
// refused and decide nothing, someone who may neither see nor decide it learns nothing of it, an
// adult decides it over REST, and the audit says who asked, who decided and through which channel.
// The whole decision table is checked in memory (test/internals/approval-deciders.test.ts).
import { describe, expect, it } from 'vitest';
import { useHearth } from './support/hearth-server.ts';
import { markingTool } from './support/marking-tool.ts';
import { household } from './support/people.ts';

const startApp = useHearth();

/** Like server_admin, a profile that asks before its one tool; unlike it, children may use it (and adults decide their asks). */
const garageProfile = `---
id: garage
name: Garage
max_iterations: 4
tools: [mark]
people: [owner, adult, child]
approvers: [owner, adult]
approvals:
  default: allow
  ask: [mark]
---
You open and close the garage door.
`;

describe('approvals in a household', () => {
  it("an adult decides a child's ask over REST; the child's REST and WebSocket decisions are refused; the audit says who asked, who decided and where", async () => {
    const runs: string[] = [];
    const hearth = await startApp({ tools: [markingTool(runs)], profiles: { garage: garageProfile } });
    const { owner, people } = await household(hearth, ['adult', 'child', 'guest']);
    const [adult, child, guest] = people;
    const adultPage = await adult.events();
    const childPage = await child.events();

    hearth.llm.script({ toolCalls: [{ name: 'mark', arguments: { label: 'garage door' } }] }, { content: 'Opened.' });
    const sessionId = await child.createSession('garage');
    const socket = await child.connect(sessionId);
    socket.send({ type: 'message', content: 'Open the garage door' });
    const required = await socket.next('approval_required');
    const callId = required.call_id;
    const childName = { id: child.person.id, name: child.person.name };
    // The child's page shows it waiting, for the adults, without the right to decide it.
    expect(required).toMatchObject({ subject: 'garage door', asked_by: childName, can_decide: false });
    expect(required.deciders.map((person) => person.id).sort()).toEqual([owner.person.id, adult.person.id].sort());

    // The adult's page: the card with who asked, theirs to decide, and a notification.
    const card = (await adultPage.nextMatching((event: any) => event.type === 'approvals_changed' && event.pending.length > 0, 'the pending approval')) as any;
    expect(card.pending).toEqual([expect.objectContaining({ session_id: sessionId, call_id: callId, tool: 'mark', subject: 'garage door', asked_by: childName, can_decide: true })]);
    const notification = (await adultPage.nextMatching((event: any) => event.type === 'notification', 'the notification')) as any;
    expect(notification.title).toBe(`${child.person.name} asks to run mark: it waits for your decision`);
    const waitingForChild = (await childPage.nextMatching((event: any) => event.type === 'approvals_changed' && event.pending.length > 0, 'the pending approval')) as any;
    expect(waitingForChild.pending).toEqual([expect.objectContaining({ call_id: callId, can_decide: false })]);

    // What each may decide now.
    const pending = async (who: typeof adult) => (await who.request('GET', '/approvals?status=pending')).body.approvals.map((approval: any) => approval.call_id);
    expect(await pending(adult)).toEqual([callId]);
    expect(await pending(owner)).toEqual([callId]);
    expect(await pending(child)).toEqual([]);
    expect(await pending(guest)).toEqual([]);

    // Refused: the child on their own session (403, saying who may), the guest who may neither see nor decide it (404).
    const url = `/sessions/${sessionId}/approvals/${callId}`;
    const childTried = await child.request('POST', url, { decision: 'allow' });
    expect(childTried.status).toBe(403);
    expect(childTried.body.error.code).toBe('forbidden');
    expect(childTried.body.error.message).toContain(adult.person.name);
    expect(await guest.request('POST', url, { decision: 'allow' })).toMatchObject({ status: 404, body: { error: { code: 'session_not_found' } } });
    socket.send({ type: 'approve', call_id: callId, decision: 'allow' });
    const refused = await socket.next('error');
    expect(refused).toMatchObject({ code: 'forbidden', message: expect.stringContaining(adult.person.name) });
    expect(runs).toEqual([]);
    expect(await pending(adult)).toEqual([callId]);

    // The adult decides it over REST, on a session that is not theirs.
    expect(await adult.request('POST', url, { decision: 'allow' })).toMatchObject({ status: 200, body: { call_id: callId, decision: 'allow', by: 'user' } });
    expect(await socket.next('approval_resolved')).toMatchObject({ decision: 'allow', by: 'user', decider: { id: adult.person.id, name: adult.person.name }, via: 'rest' });
    await socket.next('stream_end');
    expect(runs).toEqual(['garage door']);

    // The audit: the asker, the decider and the owner see the entry, with who asked, who decided and where; the guest does not.
    const entry = { call_id: callId, decision: 'allow', by: 'user', asked_by: childName, decider: { id: adult.person.id, name: adult.person.name }, via: 'rest' };
    for (const who of [adult, child, owner]) {
      const { body } = await who.request('GET', '/approvals');
      expect(body.approvals.filter((approval: any) => approval.call_id === callId)).toEqual([expect.objectContaining(entry)]);
    }
    expect((await guest.request('GET', '/approvals')).body.approvals).toEqual([]);
    socket.close();
    adultPage.close();
    childPage.close();
  });

  it("another adult's ask is neither another adult's nor the owner's to decide or see: 404 on REST, absent from their page and their pending list", async () => {
    const runs: string[] = [];
    const hearth = await startApp({ tools: [markingTool(runs)], profiles: { garage: garageProfile } });
    const { owner, people } = await household(hearth, ['adult', 'adult']);
    const [asker, other] = people;
    const otherPage = await other.events();

    hearth.llm.script({ toolCalls: [{ name: 'mark', arguments: { label: 'shed' } }] }, { content: 'Left it shut.' });
    const sessionId = await asker.createSession('garage');
    const socket = await asker.connect(sessionId);
    socket.send({ type: 'message', content: 'Open the shed' });
    const required = await socket.next('approval_required');
    expect(required.can_decide).toBe(true);

    expect(await other.request('POST', `/sessions/${sessionId}/approvals/${required.call_id}`, { decision: 'allow' })).toMatchObject({ status: 404, body: { error: { code: 'session_not_found' } } });
    expect((await other.request('GET', '/approvals?status=pending')).body.approvals).toEqual([]);
    // An adult's own call, under a profile that lets adults decide, is theirs alone: not the owner's to see nor decide.
    expect((await owner.request('GET', '/approvals?status=pending')).body.approvals).toEqual([]);
    expect(await owner.request('POST', `/sessions/${sessionId}/approvals/${required.call_id}`, { decision: 'allow' })).toMatchObject({ status: 404, body: { error: { code: 'session_not_found' } } });
    socket.send({ type: 'approve', call_id: required.call_id, decision: 'deny' });
    expect(await socket.next('approval_resolved')).toMatchObject({ decision: 'deny', decider: { id: asker.person.id }, via: 'page' });
    await socket.next('stream_end');
    expect(runs).toEqual([]);
    // Nothing of it reached the other adult's page, no card nor notification, before one of their own that follows it.
    await hearth.deps.notifications.raise({ title: 'Bins go out tonight', body: '', personId: other.person.id });
    await otherPage.nextMatching((event: any) => event.type === 'notification', 'their own notification');
    expect(otherPage.types().filter((type: string) => type === 'approvals_changed' || type === 'notification')).toEqual(['notification']);
    socket.close();
    otherPage.close();
  });
});
