import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ToolContext } from '../tool.ts';

/**
 * The session's own folder under SESSION_FILES_DIR, where relative paths and commands
 * start; created on first use. A sub-agent works in the folder of the session that spawned it.
 */
export async function sessionWorkFolder(sessionFilesDir: string, context: Pick<ToolContext, 'sessionId' | 'parentSessionId'>): Promise<string> {
  const owner = context.parentSessionId ?? context.sessionId;
  if (!/^[A-Za-z0-9_-]+$/.test(owner)) throw new Error(`Invalid session id for a work folder: ${owner}`);
  const folder = path.resolve(sessionFilesDir, owner);
  await mkdir(folder, { recursive: true });
  return folder;
}
