import { EventEmitter } from 'node:events';
import type { ToolSummary } from '../protocol/events.ts';
import type { Tool } from './tool.ts';
import { argumentsValidatorOnFirstUse, compileArgumentsValidator, type ArgumentsValidator } from './validation.ts';

/** Where a tool comes from: Hearth itself, a file in TOOLS_DIR, or an MCP server. */
export type ToolSourceKind = 'builtin' | 'user' | 'mcp';

export interface RegisteredTool {
  tool: Tool;
  source: ToolSourceKind;
  /** The id of the source holding it: `builtin`, `user`, or `mcp:<server>`. */
  origin: string;
  validate: ArgumentsValidator;
}

export interface ToolRefusal {
  name: string;
  message: string;
}

/** One source's hold on the registry: its tools are replaced or removed as a set, never one by one. */
export interface ToolSource {
  readonly id: string;
  readonly kind: ToolSourceKind;
  /** Replaces every tool of this source at once; answers the ones refused (a taken name, a schema that does not compile). */
  replace(tools: readonly Tool[]): ToolRefusal[];
  /** Takes this source and its tools out of the registry. */
  remove(): void;
}

interface SourceEntry {
  kind: ToolSourceKind;
  tools: Map<string, RegisteredTool>;
}

/**
 * The tools the agent can call, by name, held by any number of sources: the built-ins first,
 * then the user tools and each MCP server. A name belongs to the first source holding it.
 * Every change of a source's set is announced as `changed` with the source's id.
 */
export class ToolRegistry extends EventEmitter<{ changed: [sourceId: string] }> {
  private readonly sources = new Map<string, SourceEntry>();
  private byName = new Map<string, RegisteredTool>();
  private switchedOn: (name: string) => boolean = () => true;
  private onEverywhere: (name: string) => boolean = () => false;
  private readonly builtinSource: ToolSource;
  private readonly readiness: (() => Promise<void>)[] = [];

  constructor(builtins: Tool[] = []) {
    super();
    this.builtinSource = this.addSource('builtin', 'builtin');
    this.addBuiltins(builtins);
  }

  /** Built-ins that need the registry itself (list_tools, tool_manual) are added after it exists. */
  addBuiltins(tools: Tool[]): void {
    const current = [...(this.sources.get('builtin')?.tools.values() ?? [])].map((entry) => entry.tool);
    this.builtinSource.replace([...current, ...tools]);
  }

  /** Opens a source; `id` must be new (`user`, `mcp:<server>`). */
  addSource(id: string, kind: ToolSourceKind): ToolSource {
    if (this.sources.has(id)) throw new Error(`The tool source ${id} is already registered.`);
    const entry: SourceEntry = { kind, tools: new Map() };
    this.sources.set(id, entry);
    let removed = false;
    return {
      id,
      kind,
      replace: (tools) => {
        if (removed) throw new Error(`The tool source ${id} was removed.`);
        const refused = this.fill(id, entry, tools);
        this.emit('changed', id);
        return refused;
      },
      remove: () => {
        if (removed) return;
        removed = true;
        this.sources.delete(id);
        this.reindex();
        this.emit('changed', id);
      },
    };
  }

  /**
   * Adds to what `ready()` waits for: a source whose tools are still on their way right after a
   * start (the user tools loading, the MCP servers connecting) says how to wait for them. The
   * wait is bounded by the source's own limit and never fails: a source that cannot load leaves
   * the tools there are.
   */
  addReadiness(ready: () => Promise<void>): void {
    this.readiness.push(ready);
  }

  /** Settles once every source given a readiness has its tools or has waited its limit; at once when all have. */
  async ready(): Promise<void> {
    await Promise.all(this.readiness.map((ready) => ready()));
  }

  get(name: string): RegisteredTool | undefined {
    return this.byName.get(name);
  }

  isBuiltin(name: string): boolean {
    return this.byName.get(name)?.source === 'builtin';
  }

  /** Whether a tool that is not a built-in is switched on (ToolSwitches decides; every one is on until it is given). */
  setSwitch(isEnabled: (name: string) => boolean, isOnEverywhere: (name: string) => boolean = () => false): void {
    this.switchedOn = isEnabled;
    this.onEverywhere = isOnEverywhere;
  }

  isEnabled(name: string): boolean {
    const entry = this.byName.get(name);
    return entry !== undefined && (entry.source === 'builtin' || this.switchedOn(name));
  }

  list(): Tool[] {
    return [...this.byName.values()].map((entry) => entry.tool);
  }

  /** The registered tools of one kind, in registration order. */
  ofKind(kind: ToolSourceKind): RegisteredTool[] {
    return [...this.byName.values()].filter((entry) => entry.source === kind);
  }

  /**
   * The tools a profile exposes, in its order: the ones it names, `mcp:<server>` for all of one
   * server's tools, `*` for every built-in and MCP tool; then, with `userTools`, every user tool,
   * and with `mcpTools`, every MCP tool switched on for every profile.
   * A tool switched off is never exposed; names that do not exist are skipped.
   */
  forNames(names: readonly string[], options: { userTools: boolean; mcpTools?: boolean }): Tool[] {
    const chosen = new Set<string>();
    for (const name of names) {
      if (name === '*') {
        for (const entry of this.byName.values()) if (entry.source !== 'user') chosen.add(entry.tool.name);
      } else if (name.startsWith('mcp:')) {
        for (const toolName of this.sources.get(name)?.tools.keys() ?? []) chosen.add(toolName);
      } else {
        chosen.add(name);
      }
    }
    if (options.userTools) for (const entry of this.ofKind('user')) chosen.add(entry.tool.name);
    if (options.mcpTools) for (const entry of this.ofKind('mcp')) if (this.onEverywhere(entry.tool.name)) chosen.add(entry.tool.name);
    return [...chosen].flatMap((name) => {
      const entry = this.byName.get(name);
      return entry && this.isEnabled(name) ? [entry.tool] : [];
    });
  }

  summaries(): ToolSummary[] {
    return [...this.byName.values()].map(({ tool, source, origin }) => ({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      source,
      ...(source === 'mcp' && { server: origin.slice('mcp:'.length) }),
    }));
  }

  private fill(id: string, entry: SourceEntry, tools: readonly Tool[]): ToolRefusal[] {
    const next = new Map<string, RegisteredTool>();
    const refused: ToolRefusal[] = [];
    for (const tool of tools) {
      const holder = this.holderOf(tool.name, id);
      if (holder !== undefined || next.has(tool.name)) {
        refused.push({ name: tool.name, message: `"${tool.name}" is already the name of ${describeHolder(holder ?? entry.kind)} tool; choose another name.` });
        continue;
      }
      try {
        // A user tool's or an MCP server's schema is checked as it arrives, so a bad one is refused here.
        const validate = entry.kind === 'builtin' ? argumentsValidatorOnFirstUse(tool.parameters) : compileArgumentsValidator(tool.parameters);
        next.set(tool.name, { tool, source: entry.kind, origin: id, validate });
      } catch (error) {
        refused.push({ name: tool.name, message: `Its parameters are not a valid JSON Schema: ${(error as Error).message}` });
      }
    }
    entry.tools = next;
    this.reindex();
    return refused;
  }

  /** The kind of an earlier source that holds `name`, if any (sources later than `id` give way). */
  private holderOf(name: string, id: string): ToolSourceKind | undefined {
    for (const [sourceId, source] of this.sources) {
      if (sourceId === id) return undefined;
      if (source.tools.has(name)) return source.kind;
    }
    return undefined;
  }

  private reindex(): void {
    const byName = new Map<string, RegisteredTool>();
    for (const source of this.sources.values()) for (const [name, registered] of source.tools) if (!byName.has(name)) byName.set(name, registered);
    this.byName = byName;
  }
}

function describeHolder(kind: ToolSourceKind): string {
  return kind === 'builtin' ? 'a built-in' : kind === 'user' ? 'a user' : 'an MCP';
}
