// Messages between the server and a user-tool host worker (host-worker.js follows these shapes).

import type { JsonSchema } from '../tool.ts';

export interface ModuleToLoad {
  /** The source file in TOOLS_DIR, for reports. */
  file: string;
  /** The bundled module the worker imports. */
  modulePath: string;
  /** The tool name the file must export: its base name. */
  expectedName: string;
}

export interface ToolManifestEntry {
  name: string;
  description: string;
  parameters: JsonSchema;
  file: string;
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
  | { type: 'call'; callId: number; name: string; args: Record<string, unknown>; sessionId: string }
  | { type: 'abort'; callId: number }
  | { type: 'kv_result'; requestId: number; ok: true; value: unknown }
  | { type: 'kv_result'; requestId: number; ok: false; message: string };

export type HostToServer =
  | { type: 'loading'; file: string }
  | { type: 'manifest'; tools: ToolManifestEntry[]; errors: LoadFailure[] }
  | { type: 'result'; callId: number; output: string; success: boolean; metadata?: Record<string, unknown> }
  | ({ type: 'kv'; requestId: number; tool: string } & KvOperation);

export interface HostWorkerData {
  modules: ModuleToLoad[];
}
