// Messages between the server and a user-tool host process (host-process.mjs follows these
// shapes). They travel as one JSON text per line over a pipe on the host's file descriptor 3.

import type { JsonSchema } from '../tool.ts';

/** What a user tool may ask for with `export const permissions = { … }`; none is given by default. */
export type ToolPermission = 'childProcess' | 'worker' | 'network';

export interface ModuleToLoad {
  /** The source file in TOOLS_DIR, for reports. */
  file: string;
  /** The bundled module the host imports. */
  modulePath: string;
  /** The tool name the file must export: its base name. */
  expectedName: string;
  /** The permissions the module declares (known after a first load), for the host's refusal messages. */
  declared?: ToolPermission[];
  /** The declared permissions the person granted: the host runs with exactly these. */
  granted?: ToolPermission[];
}

export interface ToolManifestEntry {
  name: string;
  description: string;
  parameters: JsonSchema;
  file: string;
  /** The permissions the module declares (`export const permissions`), granted or not. */
  permissions: ToolPermission[];
}

export interface LoadFailure {
  file: string;
  message: string;
}

export type KvOperation =
  | { operation: 'get'; key: string }
  | { operation: 'set'; key: string; value: unknown }
  | { operation: 'delete'; key: string }
  | { operation: 'list'; prefix?: string };

export type ServerToHost =
  | {
      type: 'load';
      modules: ModuleToLoad[];
      /** The one folder the host may write to (its working folder), when it has one. */
      workFolder?: string;
      /** Where /proc cannot be read, the host reports its own RSS this often. */
      memoryReportMs?: number;
    }
  | { type: 'call'; callId: number; name: string; args: Record<string, unknown>; sessionId: string }
  | { type: 'abort'; callId: number }
  | { type: 'kv_result'; requestId: number; ok: true; value: unknown }
  | { type: 'kv_result'; requestId: number; ok: false; message: string };

export type HostToServer =
  | { type: 'loading'; file: string }
  | { type: 'manifest'; tools: ToolManifestEntry[]; errors: LoadFailure[] }
  | { type: 'result'; callId: number; output: string; success: boolean; metadata?: Record<string, unknown> }
  | ({ type: 'kv'; requestId: number; tool: string } & KvOperation)
  /** A tool threw where nobody caught it (a stray callback): the host ends after this. */
  | { type: 'crash'; message: string }
  | { type: 'memory'; rss: number };
