// One model of which tools a session has (issue 15): a session's tools are its profile's `tools`
// plus every user tool switched on, unless the profile sets `user_tools: false`. Real files in a
// temp TOOLS_DIR, the real watcher and hosts, the real app on port 0, real sockets, the scripted LLM.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../src/protocol/events.ts';
import type { EventSocket } from './support/event-socket.ts';
import { type Hearth, useHearth } from './support/hearth-server.ts';

const testTimeoutMs = 60_000;
const shippedProfiles = ['secretary', 'server_admin', 'smart_home'];

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
// Registered after the hook above, so the app is closed first (hooks run last-registered first).
const start = useHearth();

function toolModule(name: string): string {
  return `export const name = ${JSON.stringify(name)};
export const description = 'Echoes a text (${name}).';
export const parameters = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
export async function execute(params: { text: string }) {
  return ${JSON.stringify(name)} + ': ' + params.text;
}
`;
}

const loneProfile = `---
id: lone
name: Lone
description: Only its own tools.
planning_enabled: false
max_iterations: 4
user_tools: false
tools: [scratchpad, todo]
---
You use only the tools you were given.
`;

/** Hearth on a fresh data folder whose user-tools folder holds `files` (name → text) before it starts. */
async function startWith(files: Record<string, string> = {}): Promise<Hearth> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-tool-model-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const toolsDir = path.join(dataDir, 'user-tools');
  await mkdir(toolsDir, { recursive: true });
  for (const [file, text] of Object.entries(files)) await writeFile(path.join(toolsDir, file), text);
  const hearth = await start({ dataDir, profiles: { lone: loneProfile } });
  await hearth.deps.userTools.whenLoaded();
  return hearth;
}

const toolsDirOf = (started: Hearth) => started.config.TOOLS_DIR;
const toolNamesOf = (body: { tools?: { function: { name: string } }[] }) => (body.tools ?? []).map((tool) => tool.function.name);

/** One turn in which the scripted model calls `name`; gives the finished call and the tools the first request offered. */
async function callIn(started: Hearth, socket: EventSocket, name: string): Promise<{ call: EventOf<'tool_call'>; offered: string[] }> {
  const first = started.llm.requests.length;
  started.llm.script({ toolCalls: [{ name, arguments: { text: 'ada' } }] }, { content: 'Done.' });
  socket.send({ type: 'message', content: `Call ${name}.` });
  const call = await socket.next('tool_call');
  await socket.next('stream_end');
  return { call, offered: toolNamesOf(started.llm.requests[first]!.body) };
}

async function profileTools(started: Hearth, profileId: string): Promise<string[]> {
  const { body } = await started.request('GET', '/agents/profiles');
  return body.profiles.find((profile: { id: string }) => profile.id === profileId).enabled_tools;
}

async function userEntry(started: Hearth, name: string): Promise<Record<string, unknown> | undefined> {
  const { body } = await started.request('GET', '/agents/tools');
  return body.tools.find((tool: { name: string; source: string }) => tool.source === 'user' && tool.name === name);
}

describe('a tool dropped into user-tools/ by hand', () => {
  it(
    'is offered to the model and callable in a chat of each shipped profile, with no other file edited',
    async () => {
      const started = await startWith();
      const announcements = await started.connect(await started.createSession('secretary'));
      await writeFile(path.join(toolsDirOf(started), 'hand_made.ts'), toolModule('hand_made'));
      await announcements.nextMatching(
        (event) => event.type === 'tools_changed' && event.tools.some((tool) => tool.name === 'hand_made'),
        'tools_changed with hand_made',
        30_000,
      );

      expect(await userEntry(started, 'hand_made')).toMatchObject({ enabled: true, file: 'hand_made.ts', status: 'loaded' });
      for (const profileId of shippedProfiles) {
        expect(await profileTools(started, profileId)).toContain('hand_made');
        const socket = await started.connect(await started.createSession(profileId));
        const { call, offered } = await callIn(started, socket, 'hand_made');
        expect(offered).toContain('hand_made');
        expect(call).toMatchObject({ tool: 'hand_made', success: true, result: 'hand_made: ada' });
        socket.close();
      }
    },
    testTimeoutMs,
  );

  it(
    'switched off, leaves the next LLM request and enabled_tools; switched on again, comes back',
    async () => {
      const started = await startWith({ 'hand_made.ts': toolModule('hand_made') });
      const socket = await started.connect(await started.createSession('smart_home'));

      const off = await started.request('PUT', '/agents/tools/hand_made/enabled', { enabled: false });
      expect(off).toMatchObject({ status: 200, body: { name: 'hand_made', source: 'user', enabled: false, status: 'disabled', file: 'hand_made.ts' } });
      await socket.nextMatching((event) => event.type === 'tools_changed', 'tools_changed after the switch');
      expect(JSON.parse(await readFile(path.join(toolsDirOf(started), 'enabled.json'), 'utf8'))).toEqual({ disabled: ['hand_made'] });
      expect(await profileTools(started, 'smart_home')).not.toContain('hand_made');
      const refused = await callIn(started, socket, 'hand_made');
      expect(refused.offered).not.toContain('hand_made');
      expect(refused.offered).toContain('scratchpad');
      expect(refused.call.success).toBe(false);

      const on = await started.request('PUT', '/agents/tools/hand_made/enabled', { enabled: true });
      expect(on).toMatchObject({ status: 200, body: { enabled: true, status: 'loaded' } });
      expect(JSON.parse(await readFile(path.join(toolsDirOf(started), 'enabled.json'), 'utf8'))).toEqual({ disabled: [] });
      const used = await callIn(started, socket, 'hand_made');
      expect(used.offered).toContain('hand_made');
      expect(used.call).toMatchObject({ success: true, result: 'hand_made: ada' });
    },
    testTimeoutMs,
  );

  it(
    'is switched by the PUT route only: a built-in is 400, an unknown tool 404, a body without a boolean 400',
    async () => {
      const started = await startWith({ 'hand_made.ts': toolModule('hand_made') });
      expect(await started.request('PUT', '/agents/tools/scratchpad/enabled', { enabled: false })).toMatchObject({
        status: 400,
        body: { error: { code: 'invalid_request' } },
      });
      expect(await started.request('PUT', '/agents/tools/no_such_tool/enabled', { enabled: false })).toMatchObject({
        status: 404,
        body: { error: { code: 'not_found' } },
      });
      expect((await started.request('PUT', '/agents/tools/hand_made/enabled', { enabled: 'no' })).status).toBe(400);
      expect(await profileTools(started, 'secretary')).toContain('scratchpad');
      expect(await profileTools(started, 'secretary')).toContain('hand_made');
    },
    testTimeoutMs,
  );
});

describe('enabled.json', () => {
  it(
    'in the old format (a list of enabled names) switches nothing off, and the first switch rewrites it',
    async () => {
      const started = await startWith({
        'enabled.json': JSON.stringify(['listed_tool']),
        'listed_tool.ts': toolModule('listed_tool'),
        'unlisted_tool.ts': toolModule('unlisted_tool'),
      });
      expect(await profileTools(started, 'server_admin')).toEqual(expect.arrayContaining(['listed_tool', 'unlisted_tool']));

      expect((await started.request('PUT', '/agents/tools/listed_tool/enabled', { enabled: false })).status).toBe(200);
      expect(JSON.parse(await readFile(path.join(toolsDirOf(started), 'enabled.json'), 'utf8'))).toEqual({ disabled: ['listed_tool'] });
      const tools = await profileTools(started, 'server_admin');
      expect(tools).toContain('unlisted_tool');
      expect(tools).not.toContain('listed_tool');
    },
    testTimeoutMs,
  );

  it(
    'when malformed, turns every user tool off and says why; the switch refuses to overwrite it',
    async () => {
      const started = await startWith({ 'enabled.json': '{"disabled": [', 'hand_made.ts': toolModule('hand_made') });
      const { body } = await started.request('GET', '/agents/tools');
      expect(body.errors).toContainEqual({ file: 'enabled.json', message: expect.stringMatching(/every user tool is off/) });
      expect(await userEntry(started, 'hand_made')).toMatchObject({ enabled: false, status: 'disabled' });
      expect(await profileTools(started, 'secretary')).not.toContain('hand_made');
      expect(await started.request('PUT', '/agents/tools/hand_made/enabled', { enabled: true })).toMatchObject({
        status: 409,
        body: { error: { code: 'tools_file_malformed' } },
      });
      expect(await readFile(path.join(toolsDirOf(started), 'enabled.json'), 'utf8')).toBe('{"disabled": [');
    },
    testTimeoutMs,
  );
});

describe('a profile with user_tools: false', () => {
  it(
    'never gets user tools: not in enabled_tools, not offered, not callable',
    async () => {
      const started = await startWith({ 'hand_made.ts': toolModule('hand_made') });
      expect(await profileTools(started, 'lone')).toEqual(['scratchpad', 'todo']);
      expect(await profileTools(started, 'secretary')).toContain('hand_made');
      const socket = await started.connect(await started.createSession('lone'));
      const { call, offered } = await callIn(started, socket, 'hand_made');
      expect(offered).toEqual(['scratchpad', 'todo']);
      expect(call.success).toBe(false);
    },
    testTimeoutMs,
  );
});

describe('GET /agents/tools', () => {
  it(
    'lists a user tool that failed to load with its file, status and error',
    async () => {
      const started = await startWith({
        'hand_made.ts': toolModule('hand_made'),
        'broken_tool.ts': "export const name = 'broken_tool';\nexport const parameters = { type: 'object' ;\n",
      });
      expect(await userEntry(started, 'broken_tool')).toMatchObject({
        enabled: true,
        file: 'broken_tool.ts',
        status: 'failed',
        error: expect.stringMatching(/Does not compile/),
      });
      expect(await profileTools(started, 'secretary')).not.toContain('broken_tool');
      expect(await userEntry(started, 'hand_made')).toMatchObject({ status: 'loaded' });
    },
    testTimeoutMs,
  );
});
