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
  private userToolEnabled: (name: string) => boolean = () => true;

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

  /** Whether a user tool is switched on (ToolSwitches decides; every one is on until it is given). */
  setUserToolSwitch(isEnabled: (name: string) => boolean): void {
    this.userToolEnabled = isEnabled;
  }

  isEnabled(name: string): boolean {
    return this.builtins.has(name) || (this.userTools.has(name) && this.userToolEnabled(name));
  }

  list(): Tool[] {
    return [...this.builtins.values(), ...this.userTools.values()].map((entry) => entry.tool);
  }

  /**
   * Replaces every user tool at once. Answers the tools that were refused: a built-in's name,
   * or a schema that does not compile.
   */
  replaceUserTools(tools: Tool[]): { name: string; message: string }[] {
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
    return refused;
  }

  /**
   * The tools a profile exposes: the ones it names, in its order (`*` means every built-in),
   * then, with `userTools`, every user tool switched on. A user tool switched off is never
   * exposed; names that do not exist are skipped.
   */
  forNames(names: readonly string[], options: { userTools: boolean }): Tool[] {
    const chosen = new Set(names.includes('*') ? [...names, ...this.builtins.keys()] : names);
    if (options.userTools) for (const name of this.userTools.keys()) chosen.add(name);
    return [...chosen].flatMap((name) => {
      const entry = this.get(name);
      return entry && this.isEnabled(name) ? [entry.tool] : [];
    });
  }

  summaries(): ToolSummary[] {
    return this.list().map(({ name, description, parameters, source }) => ({ name, description, parameters, source }));
  }
}

function register(tool: Tool): RegisteredTool {
  return { tool, validate: compileArgumentsValidator(tool.parameters) };
}
