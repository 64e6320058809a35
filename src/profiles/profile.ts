import { Type, type Static } from '@sinclair/typebox';
import type { ApprovalPolicy } from '../approvals/policy.ts';
import { backendIds, type BackendId } from '../backend-ids.ts';
import type { JailKind } from '../jail/jail-spec.ts';
import { roles, type Role } from '../people/person.ts';
import type { ProfileAccess } from '../people/rights.ts';
import type { HeartbeatSettings } from './heartbeat-settings.ts';

export interface Profile extends ProfileAccess {
  id: string;
  name: string;
  description: string;
  /** Example prompts the page offers for a new conversation. */
  examples: string[];
  model?: string;
  backend?: BackendId;
  temperature: number;
  max_iterations: number;
  planning_enabled: boolean;
  tools: string[];
  /** Whether every user tool that is switched on joins `tools` (front matter `user_tools: false` opts out). */
  user_tools: boolean;
  /** Whether every MCP tool switched on in the Tools panel joins `tools` (front matter `mcp_tools: false` opts out). */
  mcp_tools: boolean;
  scratchpad_sections: string[];
  /** Which calls run, wait for the person, or are refused (docs/agent.md, "Approvals"). */
  approvals: ApprovalPolicy;
  /** Which jail each tool's processes run in (docs/security.md: The jail); `strict` for any tool not named. */
  jail: Readonly<Record<string, JailKind>>;
  /**
   * Tools that may send and act after the run has read outside content without asking
   * (docs/security.md: Untrusted content); the path policy and approval rules still apply.
   */
  untrusted: { allow: readonly string[] };
  /** How often the profile looks things over unasked (docs/agent.md, "Heartbeat"). */
  heartbeat?: HeartbeatSettings;
  /** What a heartbeat checks: the body of `<id>.heartbeat.md` beside the profile, when there is one. */
  heartbeat_checklist?: string;
  /** The domain system prompt: the file's body after the front matter. */
  prompt: string;
  /** Path of the file the profile was read from. */
  file: string;
}

export const PROFILE_ID_PATTERN = '^[a-z][a-z0-9_]{0,63}$';

// Function names as OpenAI-compatible and Ollama APIs accept them.
// `*` stands for every tool.
const TOOL_NAME_PATTERN = '^([A-Za-z0-9_-]{1,64}|\\*|mcp:[A-Za-z0-9_-]{1,64})$';

const RoleList = Type.Array(Type.Unsafe<Role>({ type: 'string', enum: [...roles] }), { uniqueItems: true });

const ApprovalRules = Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { uniqueItems: true });

export const ProfileFrontMatterSchema = Type.Object(
  {
    id: Type.String({ pattern: PROFILE_ID_PATTERN }),
    name: Type.String({ minLength: 1, maxLength: 100 }),
    description: Type.Optional(Type.String({ maxLength: 300, default: '' })),
    examples: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 300 }), { maxItems: 4, uniqueItems: true, default: [] })),
    model: Type.Optional(Type.String({ minLength: 1 })),
    // An enum rather than a union of literals: Ajv then reports one readable error.
    backend: Type.Optional(Type.Unsafe<BackendId>({ type: 'string', enum: [...backendIds] })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2, default: 0.7 })),
    max_iterations: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 25 })),
    planning_enabled: Type.Optional(Type.Boolean({ default: false })),
    tools: Type.Optional(
      Type.Array(Type.String({ pattern: TOOL_NAME_PATTERN }), { uniqueItems: true, default: [] }),
    ),
    user_tools: Type.Optional(Type.Boolean({ default: true })),
    mcp_tools: Type.Optional(Type.Boolean({ default: true })),
    scratchpad_sections: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { uniqueItems: true, default: [] }),
    ),
    approvals: Type.Optional(
      Type.Object(
        {
          default: Type.Optional(Type.Unsafe<'allow' | 'ask' | 'deny'>({ type: 'string', enum: ['allow', 'ask', 'deny'] })),
          deny: Type.Optional(ApprovalRules),
          allow: Type.Optional(ApprovalRules),
          ask: Type.Optional(ApprovalRules),
        },
        { additionalProperties: false },
      ),
    ),
    // Only the terminal may see the host: code, user tools and MCP servers are always strict.
    jail: Type.Optional(
      Type.Object(
        { terminal: Type.Optional(Type.Unsafe<JailKind>({ type: 'string', enum: ['strict', 'host'] })) },
        { additionalProperties: false },
      ),
    ),
    untrusted: Type.Optional(
      Type.Object(
        { allow: Type.Optional(Type.Array(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }), { uniqueItems: true })) },
        { additionalProperties: false },
      ),
    ),
    // Who may use the profile and who may decide its approvals (docs/people.md); the owner always may.
    people: Type.Optional(RoleList),
    approvers: Type.Optional(RoleList),
    // Formats are checked by parseHeartbeat, which names the field and the expected shape.
    heartbeat: Type.Optional(
      Type.Object({ every: Type.String(), active_hours: Type.Optional(Type.String()) }, { additionalProperties: false }),
    ),
  },
  // A misspelt key (say `planing_enabled`) would otherwise be ignored without a word.
  { additionalProperties: false },
);

export type ProfileFrontMatter = Static<typeof ProfileFrontMatterSchema>;
