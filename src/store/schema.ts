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

export interface Database {
  sessions: SessionsTable;
  messages: MessagesTable;
  scratchpad_sections: ScratchpadSectionsTable;
  todo_lists: TodoListsTable;
  user_tool_kv: UserToolKvTable;
}
