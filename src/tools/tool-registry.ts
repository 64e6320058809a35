import type { ToolSummary } from '../agent/events.ts';
import type { Tool } from './tool.ts';
import { compileArgumentsValidator, type ArgumentsValidator } from './validation.ts';

export interface RegisteredTool {
  tool: Tool;
  validate: ArgumentsValidator;
}

/** The tools the agent can call, by name. Built-ins are fixed; user tools are swapped as a set on reload. */
export class ToolRegistry {
  private builtins = new Map<string, RegisteredTool>();
  private userTools = new Map<string, RegisteredTool>();
  private enabledUserTools = new Set<string>();

  constructor(builtins: Tool[] = []) {
    this.addBuiltins(builtins);
  }

  /** Built-ins that need the registry itself (list_tools, tool_manual) are added after it exists. */
  addBuiltins(tools: Tool[]): void {
    for (const tool of tools) this.builtins.set(tool.name, register(tool));
  }

  get(name: string): RegisteredTool | undefined {
    return this.builtins.get(name) ?? this.userTools.get(name);
  }

  isBuiltin(name: string): boolean {
    return this.builtins.has(name);
  }

  list(): Tool[] {
    return [...this.builtins.values(), ...this.userTools.values()].map((entry) => entry.tool);
  }

  /**
   * Replaces every user tool at once. `enabled` names the user tools that join every
   * profile. Answers the tools that were refused: a built-in's name, or a schema that
   * does not compile.
   */
  replaceUserTools(tools: Tool[], enabled: Iterable<string> = []): { name: string; message: string }[] {
    const next = new Map<string, RegisteredTool>();
    const refused: { name: string; message: string }[] = [];
    for (const tool of tools) {
      if (this.builtins.has(tool.name)) {
        refused.push({ name: tool.name, message: `"${tool.name}" is the name of a built-in tool; choose another name.` });
        continue;
      }
      try {
        next.set(tool.name, register(tool));
      } catch (error) {
        refused.push({ name: tool.name, message: `Its parameters are not a valid JSON Schema: ${(error as Error).message}` });
      }
    }
    this.userTools = next;
    this.enabledUserTools = new Set(enabled);
    return refused;
  }

  /**
   * The tools a profile exposes, in the profile's order, then the user tools enabled for
   * every profile; `*` means every tool; names that do not exist are skipped.
   */
  forNames(names: readonly string[]): Tool[] {
    if (names.includes('*')) return this.list();
    const chosen = new Set(names);
    for (const name of this.enabledUserTools) if (this.userTools.has(name)) chosen.add(name);
    return [...chosen].flatMap((name) => {
      const entry = this.get(name);
      return entry ? [entry.tool] : [];
    });
  }

  summaries(): ToolSummary[] {
    return this.list().map(({ name, description, parameters, source }) => ({ name, description, parameters, source }));
  }
}

function register(tool: Tool): RegisteredTool {
  return { tool, validate: compileArgumentsValidator(tool.parameters) };
}
