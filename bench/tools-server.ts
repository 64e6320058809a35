// Scenarios 8 and 10: a server process of their own whose TOOLS_DIR (and PROFILES_DIR, a copy of
// the project's) is a temp folder the bench writes tool files into, with one session socket open
// to receive `tools_changed`. The shared server of scenarios 1–5 keeps the project's folders.
import { cp, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ToolSummary } from '../src/protocol/events.ts';
import { epochNow } from './epoch-time.ts';
import { createSession, SessionSocket } from './hearth-client.ts';
import { projectRoot } from './project-root.ts';
import { ServerProcess } from './server-process.ts';
import { makeTemporaryDirectory, removeTemporaryDirectory } from './temporary-directories.ts';

export interface ToolsServer {
  server: ServerProcess;
  socket: SessionSocket;
  toolsDir: string;
  /** tools_changed events received so far. */
  readonly toolsChangedEvents: number;
  /** Writes `source` to TOOLS_DIR/`file` and resolves with the time from just before the write to the first
   * `tools_changed` whose tool `name` has `description`. */
  writeAndAwait(file: string, source: string, name: string, description: string, timeoutMs: number): Promise<number>;
  /** Resolves once a `tools_changed` event satisfies `matches`, with the time it was received. */
  awaitTools(matches: (tools: ToolSummary[]) => boolean, timeoutMs: number, description: string): Promise<number>;
  stop(): Promise<void>;
}

export async function startToolsServer(llmUrl: string, initialFiles: Record<string, string>): Promise<ToolsServer> {
  const directory = await makeTemporaryDirectory('hearth-bench-tools-server-');
  let server: ServerProcess | undefined;
  let socket: SessionSocket | undefined;
  const stop = async () => {
    await socket?.close().catch(() => undefined);
    await server?.stop().catch(() => undefined);
    await removeTemporaryDirectory(directory);
  };
  try {
    const toolsDir = path.join(directory, 'tools');
    const profilesDir = path.join(directory, 'profiles');
    const dataDir = path.join(directory, 'data');
    await mkdir(toolsDir);
    await mkdir(dataDir);
    await cp(path.join(projectRoot, 'profiles'), profilesDir, { recursive: true });
    for (const [file, source] of Object.entries(initialFiles)) await writeFile(path.join(toolsDir, file), source);
    ({ server } = await ServerProcess.start({
      dataDir,
      databaseFile: path.join(dataDir, 'hearth.db'),
      llmUrl,
      environment: { TOOLS_DIR: toolsDir, PROFILES_DIR: profilesDir },
    }));
    const started = server;
    const sessionId = await createSession(started);
    const connected = await SessionSocket.connect(started, sessionId);
    socket = connected;
    let toolsChangedEvents = 0;
    connected.listen((event) => {
      if (event.type === 'tools_changed') toolsChangedEvents++;
    });
    const awaitTools = async (matches: (tools: ToolSummary[]) => boolean, timeoutMs: number, description: string) => {
      const waiting = connected.nextMatching('tools_changed', (event) => matches(event.tools), timeoutMs, description);
      return (await waiting).receivedAt;
    };
    return {
      server: started,
      socket: connected,
      toolsDir,
      get toolsChangedEvents() {
        return toolsChangedEvents;
      },
      awaitTools,
      async writeAndAwait(file, source, name, description, timeoutMs) {
        const matches = (tools: ToolSummary[]) => tools.some((tool) => tool.name === name && tool.description === description);
        // Listening starts before the write, so an event cannot slip past.
        const arrived = awaitTools(matches, timeoutMs, `tools_changed with ${name} "${description}"`);
        arrived.catch(() => undefined); // a failed write below must not leave this rejection unhandled
        const writtenAt = epochNow();
        await writeFile(path.join(toolsDir, file), source);
        return (await arrived) - writtenAt;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
