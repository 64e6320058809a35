// Shared by the user-tool sandbox tests: tool modules written as an attacker (or the model) would,
// Hearth started on a data folder that already holds them, and one scripted turn per batch of calls.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import type { EventOf } from '../../src/protocol/events.ts';
import type { EventSocket } from '../support/event-socket.ts';
import { startHearth, useHearth, type Hearth, type HearthOptions } from '../support/hearth-server.ts';
import type { ScriptedToolCall } from '../support/scripted-llm.ts';

export interface ToolFile {
  /** Imports and module-level code. */
  prelude?: string;
  /** The properties of the parameters schema. */
  properties?: Record<string, unknown>;
  /** `export const permissions = …` text, e.g. `{ childProcess: true }`. */
  permissions?: string;
  /** The body of `async function execute(params, ctx)`. */
  execute: string;
}

export function toolModule(name: string, tool: ToolFile): string {
  return `${tool.prelude ?? ''}
export const name = ${JSON.stringify(name)};
export const description = 'Test tool ${name}.';
export const parameters = { type: 'object', properties: ${JSON.stringify(tool.properties ?? {})} };
${tool.permissions !== undefined ? `export const permissions = ${tool.permissions};\n` : ''}export async function execute(params: any, ctx: any): Promise<unknown> {
${tool.execute}
}
`;
}

/** A profile that exposes the named tools, with no approvals block: the gate allows every call, only the sandbox stands in the way. */
export function attackerProfile(tools: string[]): string {
  return `---
id: attacker
name: Attacker
description: Calls user tools.
temperature: 0.1
max_iterations: 8
planning_enabled: false
tools: [${tools.join(', ')}]
---
You call the tools you are asked to.
`;
}

export interface StartOptions extends HearthOptions {
  /** User-tool modules: name → module. */
  userTools: Record<string, ToolFile>;
  /** Other files of TOOLS_DIR: file name → text (permissions.json…). */
  toolFiles?: Record<string, string>;
}

/** A fresh data folder whose user-tools folder holds the tools, and Hearth started on it (the tools load at start). */
export async function startWithTools(options: StartOptions, start: (options: HearthOptions) => Promise<Hearth> = startHearth): Promise<Hearth> {
  const { userTools: tools, toolFiles = {}, ...hearthOptions } = options;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-sandbox-'));
  const toolsDir = path.join(dataDir, 'user-tools');
  await mkdir(toolsDir, { recursive: true });
  for (const [name, tool] of Object.entries(tools)) await writeFile(path.join(toolsDir, `${name}.ts`), toolModule(name, tool));
  for (const [file, text] of Object.entries(toolFiles)) await writeFile(path.join(toolsDir, file), text);
  const hearth = await start({
    ...hearthOptions,
    dataDir,
    profiles: { attacker: attackerProfile(Object.keys(tools)), ...hearthOptions.profiles },
  });
  // Start-up does not wait for user tools; these tests call them at once.
  await hearth.deps.userTools.whenLoaded();
  // startHearth keeps a data folder it was given: this one is removed with the server.
  const close = hearth.close;
  hearth.close = async () => {
    await close();
    await rm(dataDir, { recursive: true, force: true });
  };
  return hearth;
}

/** `startWithTools` through `useHearth()`: each Hearth it starts is closed (and its folder removed) after the test. */
export function useToolsHearth(): (options: StartOptions) => Promise<Hearth> {
  const start = useHearth();
  return (options) => startWithTools(options, start);
}

/** One turn: the scripted model makes the calls (one after another), then answers. Gives the calls' results in order. */
export async function callTools(hearth: Hearth, socket: EventSocket, calls: ScriptedToolCall[]): Promise<EventOf<'tool_call'>[]> {
  const before = socket.ofType('tool_call').length;
  hearth.llm.script({ toolCalls: calls }, { content: 'Done.' });
  socket.send({ type: 'message', content: 'Do it.' });
  expect((await socket.next('stream_end', 30_000)).content).toBe('Done.');
  return socket.ofType('tool_call').slice(before);
}

export async function callTool(hearth: Hearth, socket: EventSocket, name: string, args: Record<string, unknown> = {}): Promise<EventOf<'tool_call'>> {
  const [result] = await callTools(hearth, socket, [{ name, arguments: args }]);
  expect(result?.tool).toBe(name);
  return result!;
}

/** A session's folder under SESSION_FILES_DIR: its tools' working folder, the one place they may write. */
export const sessionFolder = (hearth: Hearth, sessionId: string) => path.join(hearth.config.SESSION_FILES_DIR, sessionId);
