// Every frame of the events socket `/ws/events` (README: The events socket): what concerns the whole
// Hearth rather than one session's run.

import type { IntegrationStatus } from '../integrations/integration-registry.ts';
import type { BackendStatus } from '../llm/backend-status.ts';
import type { ToolSummary } from '../protocol/events.ts';

export interface PendingApprovalSummary {
  session_id: string;
  call_id: string;
  tool: string;
  subject: string;
  expires_at: string;
}

export type HearthEvent =
  | { type: 'hello'; unread_notifications: number; pending_approvals: PendingApprovalSummary[]; backend: BackendStatus }
  | { type: 'sessions_changed'; session_id: string; change: 'created' | 'updated' | 'deleted' }
  | { type: 'tools_changed'; tools: ToolSummary[] }
  /** A profile file was added, edited, renamed or removed; GET /agents/profiles has the details. */
  | { type: 'profiles_changed'; profiles: { id: string; name: string }[] }
  | { type: 'approvals_changed'; pending: PendingApprovalSummary[] }
  | { type: 'notification'; id: number; title: string; body: string; session_id?: string; created_at: string }
  | ({ type: 'integration_status' } & IntegrationStatus)
  /** The default backend's reachability or its model's availability changed (README: GET /status). */
  | { type: 'backend_status'; backend: BackendStatus };

export type HearthEventListener = (event: HearthEvent) => void;

/** Fans events out to every open events socket. */
export class HearthEventHub {
  private readonly listeners = new Set<HearthEventListener>();

  subscribe(listener: HearthEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  publish(event: HearthEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}
