import type { AgentEvent } from '../protocol/events.ts';
import type { SubjectPartKind } from '../approvals/normalise-subject.ts';
import type { Outflow, OutsideReading } from '../approvals/outflow.ts';
import type { ApprovalPolicy } from '../approvals/policy.ts';
import type { JailKind } from '../jail/jail-spec.ts';

export type JsonSchema = Record<string, unknown>;

/** What a tool receives besides its arguments. */
export interface ToolContext {
  sessionId: string;
  /** Aborted when the user stops the run or the call times out. */
  signal: AbortSignal;
  emit: (event: AgentEvent) => void;
  isSubagent: boolean;
  /** For a sub-agent: the session that spawned it, whose work folder it shares. */
  parentSessionId?: string;
  /** The approval policies governing the run (docs/agent.md, "Approvals"), handed on to sub-agents. */
  approvalPolicies?: readonly ApprovalPolicy[];
  /** The jail the run's profile gives each tool's processes (`strict` for a tool it does not name). */
  jailKinds?: Readonly<Record<string, JailKind>>;
  /**
   * Who started the run when it is not the session's own person: someone it is shared with wrote,
   * regenerated or edited (a sub-agent's: its parent's). The approval gate has them ask, so their
   * call waits for those who may decide theirs, and its card names them.
   */
  askedBy?: string;
  /**
   * The session's profile this step (a sub-agent's: its parent session's), the one the
   * model acts for: `schedule` creates schedules for it and `switch_profile` switches from it.
   */
  sessionProfileId?: string;
  /**
   * What the run had read from outside when this call was made, and the tools its profile lets
   * past that (docs/security.md: Untrusted content); a sub-agent starts from its parent's.
   */
  outside?: OutsideReading & { allow: readonly string[] };
}

export interface ToolResult {
  output: string;
  success: boolean;
  metadata?: Record<string, unknown>;
  /** The tool ran and its output came from outside, or was written by a model that read such content. */
  outside?: OutsideOutput;
}

/**
 * Where a result's text came from when not from the tool itself: `source` names it; `quotable`
 * says whether it is what outside wrote (a page) rather than a model's words about it (a
 * sub-agent's answer), which taint the run as well but may not be quoted by its requests.
 */
export interface OutsideOutput {
  source: string;
  quotable: boolean;
}

/** A tool may answer with plain text (success) or a full result. */
export type ToolOutput = string | { output: string; success?: boolean; metadata?: Record<string, unknown>; outside?: OutsideOutput };

export interface Tool<Arguments = any> {
  name: string;
  /** One or two sentences: it is sent to the model on every call. */
  description: string;
  parameters: JsonSchema;
  /** The whole documentation `tool_manual` answers, when it says more than the description. */
  manual?: string;
  /** The tool says it destroys or overwrites something: under a default of allow, it is asked about unless a rule matches. */
  destructive?: boolean;
  /**
   * The one line approval rules match for a call (the command, `<host> <command>`,
   * `<action> <path>`…); the tool's name when absent. `context` is absent outside a run.
   */
  subject?(args: Arguments, context?: ToolContext): string;
  /**
   * How the subject's parts are read before rules see it (src/approvals/normalise-subject.ts),
   * e.g. `['word', 'url']` for `<METHOD> <url>`; `['command']` for a command subject, else `['text']`.
   */
  subjectParts?: readonly SubjectPartKind[];
  /**
   * The subject is a command line a shell may run (terminal, ssh_exec, code_exec): an
   * allow glob never matches it when it holds shell control characters.
   */
  commandSubject?: boolean;
  /**
   * A reason this call must be put to the person whatever the allow rules and default say
   * (a deny rule still denies), e.g. a user tool asking for permissions, or the model moving
   * work into another profile's rules; undefined otherwise.
   */
  mustAsk?(args: Arguments, context?: ToolContext): string | undefined | Promise<string | undefined>;
  /**
   * Why this call cannot run now (its integration is not configured…), said to the model before
   * the person is asked to approve it; undefined when it can run. May answer asynchronously
   * (the path policy resolves links before it knows).
   */
  precheck?(args: Arguments, context: ToolContext): string | undefined | Promise<string | undefined>;
  /**
   * This call's result comes from outside Hearth and the person (a web page, search results, an
   * MCP server, a name someone gave a device): the source to name, e.g. the page's host. Undefined
   * when this call's result is the tool's own. A failed call's result is the tool's own words unless
   * its output says otherwise (`outside`, e.g. an error page's text). A run that has read such a result is tainted, and
   * the model sees the result under a provenance line (docs/security.md: Untrusted content).
   */
  untrustedSource?(args: Arguments): string | undefined;
  /**
   * What this call would send beyond the run: the parts of a request, or an effect that outlives
   * it. In a tainted run, it is asked about unless every part appeared in what the person wrote or
   * the run has read; an effect is always asked about.
   */
  outflow?(args: Arguments): Outflow | undefined;
  /** Wall-clock limit of one call; the registry's default applies when absent. */
  timeoutMs?: number;
  execute(args: Arguments, context: ToolContext): Promise<ToolOutput>;
  /** Frees what the tool holds for a session (pooled connections…) when it is deleted or a sub-agent ends. */
  releaseSession?(sessionId: string): Promise<void>;
  /** Frees everything at shutdown. */
  dispose?(): Promise<void>;
}

/**
 * The source a call's result comes from, as the tool declares it. A declaration that throws is a
 * bug of the tool's, and its result is then taken as outside content named after the tool.
 */
export function outsideSourceOf(tool: Tool, args: Record<string, unknown>): string | undefined {
  try {
    return tool.untrustedSource?.(args);
  } catch {
    return `the ${tool.name} tool`;
  }
}

/** What a call sends out, as the tool declares it; one that cannot say is taken as an effect, which a tainted run asks about. */
export function outflowOf(tool: Tool, args: Record<string, unknown>): Outflow | undefined {
  try {
    return tool.outflow?.(args);
  } catch {
    return { effect: `a ${tool.name} call whose reach could not be worked out` };
  }
}

export function toToolResult(output: ToolOutput): ToolResult {
  if (typeof output === 'string') return { output, success: true };
  return {
    output: output.output,
    success: output.success ?? true,
    ...(output.metadata && { metadata: output.metadata }),
    ...(output.outside && { outside: output.outside }),
  };
}
