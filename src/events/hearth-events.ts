// Every frame of the events socket `/ws/events` (README: The events socket): what concerns the whole
// Hearth rather than one session's run.

import type { IntegrationStatus } from '../integrations/integration-registry.ts';
import type { BackendStatus } from '../llm/backend-status.ts';
import type { PersonName } from '../people/person.ts';
import type { ToolSummary } from '../protocol/events.ts';

/** A tool call waiting for a decision, as the gate knows it. */
export interface PendingApprovalSummary {
  session_id: string;
  call_id: string;
  tool: string;
  subject: string;
  /** Why it asks (as `approval_required`'s `reason`). */
  reason: string;
  expires_at: string;
  /** The person whose session's run waits; null when the session names nobody who still lives here. */
  asked_by: PersonName | null;
  /** Who may decide it: the household's people `mayDecide` allowed when it was asked. */
  deciders: PersonName[];
}

/** A waiting call as one person's page is told of it: whether they may decide it (else it waits for `deciders`). */
export interface PendingApprovalView extends PendingApprovalSummary {
  can_decide: boolean;
}

export type HearthEvent =
  /** `pending_approvals`: the calls this socket's person asked or may decide. */
  | { type: 'hello'; unread_notifications: number; pending_approvals: PendingApprovalView[]; backend: BackendStatus }
  | { type: 'sessions_changed'; session_id: string; change: 'created' | 'updated' | 'deleted' }
  | { type: 'tools_changed'; tools: ToolSummary[] }
  /** A profile file was added, edited, renamed or removed; GET /agents/profiles has the details. */
  | { type: 'profiles_changed'; profiles: { id: string; name: string }[] }
  /** Published with every waiting call; each events socket sends its person only those they asked or may decide, as PendingApprovalView. */
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
