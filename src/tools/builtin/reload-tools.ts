import { Type } from '@sinclair/typebox';
import type { Tool } from '../tool.ts';
import type { UserToolManager } from '../user-tools/user-tool-manager.ts';

/** reload_tools: loads the user tools again now and says which loaded and which files failed. */
export function createReloadToolsTool(userTools: () => UserToolManager | undefined): Tool<Record<string, never>> {
  return {
    name: 'reload_tools',
    description: 'Reload the user tools from their folder; reports what loaded and each error.',
    parameters: Type.Object({}, { additionalProperties: false }),
    async execute() {
      const manager = userTools();
      if (!manager) return { output: 'User tools are not available on this server.', success: false };
      const { loaded, errors } = await manager.reload({ force: true });
      const lines = [`Loaded (${loaded.length}): ${loaded.length > 0 ? loaded.join(', ') : 'none'}`];
      if (errors.length > 0) {
        lines.push(`Failed (${errors.length}):`, ...errors.map(({ file, message }) => `- ${file}: ${message}`));
        lines.push('Fix a failed tool with write_tool (the whole module), or remove its file.');
      }
      return lines.join('\n');
    },
  };
}
