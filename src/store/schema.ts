import type { Generated } from 'kysely';

export interface SessionsTable {
  id: string;
  title: string;
  title_set_by_user: number;
  profile_id: string;
  pinned: number;
  context_tokens: number;
  created_at: string;
  last_active: string;
  /** The channel the session came from (`telegram`); null for the page's, schedules' and heartbeats'. */
  origin: string | null;
  /** The model the session's turns use instead of its profile's; null follows the profile. */
  model: string | null;
  /** Whose session it is (people.id). */
  person_id: string;
  /** 1: shared with the household on purpose, seen by everyone who may use its profile. */
  shared: number;
}

export type BufferName = 'display' | 'context';

export interface MessagesTable {
  id: Generated<number>;
  session_id: string;
  buffer: BufferName;
  position: number;
  role: string;
  content: string;
  /** JSON of the message's optional fields (thinking, images, tool_calls, flags). */
  details: string;
  created_at: string;
}

export interface ScratchpadSectionsTable {
  session_id: string;
  section: string;
  content: string;
  updated_at: string;
}

export interface TodoListsTable {
  session_id: string;
  /** JSON array of {text, status}. */
  items: string;
  updated_at: string;
}

export interface UserToolKvTable {
  tool: string;
  key: string;
  /** JSON text. */
  value: string;
  updated_at: string;
}

export interface MemoryFactsTable {
  id: Generated<number>;
  /** Whose fact it is; unique per person, category and key. */
  person_id: string;
  /** Stored trimmed, lower-case, with inner whitespace as `_` (see memory-repository.ts). */
  category: string;
  key: string;
  value: string;
  created_at: string;
  updated_at: string;
}

/** One row a person, made by the first change to their facts. */
export interface MemorySummariesTable {
  person_id: string;
  content: string;
  updated_at: string;
  /** Bumped by triggers on every change to the person's memory_facts. */
  facts_version: number;
  /** The facts_version the stored summary was written from. */
  summarised_version: number;
}

export interface SessionMemoryStateTable {
  session_id: string;
  extracted_at: string;
  /** The highest display-buffer position the last extraction covered. */
  last_position: number;
}

export interface ApprovalsTable {
  id: Generated<number>;
  session_id: string;
  call_id: string;
  tool: string;
  subject: string;
  /** The rule that decided or asked, or `default`. */
  rule: string;
  is_subagent: number;
  /** `allow` or `deny`; null while the person has not decided. */
  decision: string | null;
  /** `user`, `rule`, `timeout` or `stop`. */
  decided_by: string | null;
  /** `session`: the person allowed this tool and subject for the rest of the session. */
  remember: string;
  /** The person whose run asked (people.id). */
  asked_by: string | null;
  /** The person who decided, when `decided_by` is `user`. */
  decider_id: string | null;
  /** Where they decided: `page`, `rest`, or a channel's id (`telegram`). */
  decided_via: string | null;
  /** The roles the asking profile let decide (JSON, e.g. `["owner","adult"]`); null on rows from before. */
  approvers: string | null;
  requested_at: string;
  expires_at: string | null;
  decided_at: string | null;
}

export interface ActiveRunsTable {
  session_id: string;
  started_at: string;
}

export interface AnswerDraftsTable {
  id: Generated<number>;
  session_id: string;
  text: string;
  thinking: string;
}

export interface SchedulesTable {
  id: string;
  name: string;
  prompt: string;
  cron: string | null;
  every_ms: number | null;
  /** ISO 8601 with offset. */
  at: string | null;
  timezone: string;
  profile_id: string;
  enabled: number;
  created_at: string;
  next_run_at: string | null;
  last_run_at: string | null;
  last_status: string | null;
  /** Who made it; its runs are theirs. */
  person_id: string;
}

export interface ScheduleRunsTable {
  id: Generated<number>;
  schedule_id: string;
  started_at: string;
  finished_at: string | null;
  /** `running`, then `ok`, `failed`, `skipped` or `stopped`. */
  status: string;
  session_id: string | null;
  error: string | null;
}

export interface NotificationsTable {
  id: Generated<number>;
  title: string;
  body: string;
  session_id: string | null;
  created_at: string;
  read_at: string | null;
  /** Whom it is for. */
  person_id: string;
}

/** An outside key (`telegram:<chat id>`, `heartbeat:<profile id>`) and the session it leads to. */
export interface SessionKeysTable {
  key: string;
  session_id: string;
}

export interface PeopleTable {
  id: string;
  /** Unique whatever its case. */
  name: string;
  /** `owner`, `adult`, `child` or `guest`. */
  role: string;
  /** `scrypt$…` (people-repository.ts); null until the person chose a passphrase. */
  passphrase_hash: string | null;
  created_at: string;
  updated_at: string;
}

/** A sign-in: what the `hearth_session` cookie names (its secret is never stored, only its SHA-256). */
export interface SignInsTable {
  id: string;
  secret_hash: string;
  person_id: string;
  /** The address it was made from. */
  address: string;
  created_at: string;
  /** Written at most hourly; a sign-in unused for 30 days has ended. */
  last_used_at: string;
}

/** A personal API token, shown once when made; stored as its SHA-256. */
export interface ApiTokensTable {
  id: string;
  secret_hash: string;
  person_id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

/** A passkey (WebAuthn credential) of a person; `id` is the credential id, base64url. */
export interface PasskeysTable {
  id: string;
  person_id: string;
  name: string;
  /** COSE public key, base64url. */
  public_key: string;
  /** The signature counter last seen (0 for authenticators that keep none). */
  counter: number;
  /** JSON array of the transports the authenticator named. */
  transports: string;
  created_at: string;
  last_used_at: string | null;
}

/** A one-time invitation to join the household with a role. */
export interface InvitationsTable {
  id: string;
  code_hash: string;
  role: string;
  invited_by: string | null;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  accepted_by: string | null;
}

/** A chat account linked to a person: `account` is the channel's id of the user (a Telegram user id). */
export interface ChannelLinksTable {
  channel: string;
  account: string;
  person_id: string;
  linked_at: string;
}

/** A one-time code that links a chat account to its person (10 minutes); stored as its SHA-256. */
export interface ChannelLinkCodesTable {
  code_hash: string;
  channel: string;
  person_id: string;
  created_at: string;
  expires_at: string;
}

export interface DocumentsTable {
  id: string;
  name: string;
  /** `mine` (owner_person_id's) or `household`. */
  library: string;
  owner_person_id: string | null;
  added_by: string | null;
  media_type: string;
  size: number;
  pages: number | null;
  /** Set once the text is split into passages. */
  passages: number | null;
  /** `queued`, `indexing`, `ready` or `failed`. */
  status: string;
  progress: number | null;
  error: string | null;
  added_at: string;
  /** `page`, `rest`, `telegram` or `folder`. */
  source: string;
  /** The original, under DOCUMENTS_DIR. */
  stored_path: string;
  /** The watched folder's file it came from (`folder` documents). */
  source_path: string | null;
  /** The model every passage's vector was made with, once all are. */
  embedding_model: string | null;
  /** SHA-256 of the original, hex. */
  content_hash: string;
}

export interface DocumentPassagesTable {
  id: Generated<number>;
  document_id: string;
  ordinal: number;
  page: number | null;
  heading: string | null;
  text: string;
  /** Float32 little-endian bytes, unit length; null until embedded. */
  vector: Uint8Array | null;
  embedding_model: string | null;
}

export interface Database {
  people: PeopleTable;
  channel_links: ChannelLinksTable;
  channel_link_codes: ChannelLinkCodesTable;
  sign_ins: SignInsTable;
  api_tokens: ApiTokensTable;
  invitations: InvitationsTable;
  passkeys: PasskeysTable;
  sessions: SessionsTable;
  messages: MessagesTable;
  scratchpad_sections: ScratchpadSectionsTable;
  todo_lists: TodoListsTable;
  user_tool_kv: UserToolKvTable;
  memory_facts: MemoryFactsTable;
  memory_summaries: MemorySummariesTable;
  session_memory_state: SessionMemoryStateTable;
  approvals: ApprovalsTable;
  active_runs: ActiveRunsTable;
  answer_drafts: AnswerDraftsTable;
  notifications: NotificationsTable;
  session_keys: SessionKeysTable;
  schedules: SchedulesTable;
  schedule_runs: ScheduleRunsTable;
  documents: DocumentsTable;
  document_passages: DocumentPassagesTable;
}
