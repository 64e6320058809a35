import { mkdir } from 'node:fs/promises';
import path from 'node:path';

/** The session's own folder under SESSION_FILES_DIR, where relative paths and commands start; created on first use. */
export async function sessionWorkFolder(sessionFilesDir: string, sessionId: string): Promise<string> {
  if (!/^[A-Za-z0-9_-]+$/.test(sessionId)) throw new Error(`Invalid session id for a work folder: ${sessionId}`);
  const folder = path.resolve(sessionFilesDir, sessionId);
  await mkdir(folder, { recursive: true });
  return folder;
}
