// Every frame of the events socket `/ws/events` (docs/protocol.md, "The events socket"): what concerns the whole
// Hearth rather than one session's run.

import type { DocumentSummary } from '../documents/document-types.ts';
import type { IntegrationStatus } from '../integrations/integration-registry.ts';
import type { BackendStatus } from '../llm/backend-status.ts';
import type { ModelLoading } from '../llm/models/model-warm-up.ts';
import type { PullState } from '../llm/models/pull-state.ts';
import type { Person } from '../people/person.ts';
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
  /** `pending_approvals`: the calls this socket's person asked or may decide; `model_pulls`: the pulls under way (the owner's page only). */
  | { type: 'hello'; unread_notifications: number; pending_approvals: PendingApprovalView[]; backend: BackendStatus; model_pulls: PullState[] }
  | { type: 'sessions_changed'; session_id: string; change: 'created' | 'updated' | 'deleted' }
  | { type: 'tools_changed'; tools: ToolSummary[] }
  /** A profile file was added, edited, renamed or removed; GET /agents/profiles has the details. */
  | { type: 'profiles_changed'; profiles: { id: string; name: string }[] }
  /** Published with every waiting call; each events socket sends its person only those they asked or may decide, as PendingApprovalView. */
  | { type: 'approvals_changed'; pending: PendingApprovalSummary[] }
  | { type: 'notification'; id: number; title: string; body: string; session_id?: string; created_at: string }
  | ({ type: 'integration_status' } & IntegrationStatus)
  /** The default backend's reachability or its model's availability changed (docs/protocol.md, "REST API", `GET /status`). */
  | { type: 'backend_status'; backend: BackendStatus }
  /** A pull's progress (at most ~10 a second per pull) and its end; for those who manage the household. */
  | ({ type: 'model_pull' } & PullState)
  /** A model being loaded ahead of its first answer. */
  | ({ type: 'model_loading' } & ModelLoading)
  /** A pull finished, a model was deleted or the default changed: GET /models has the list. */
  | { type: 'models_changed' }
  /** A document of a library the person sees was added, or its indexing moved on (progress), finished or failed. */
  | { type: 'document_status'; document: DocumentSummary }
  /** A document of a library the person sees was deleted, its passages with it. */
  | { type: 'document_deleted'; id: string };

/**
 * Who of the household an event is for (their notification, a session they can see, an approval
 * they may decide); an event published without one is for every page (tools, profiles, status).
 * May be asynchronous: each page still receives its events in the order they were published.
 */
export type Audience = (person: Person) => boolean | Promise<boolean>;

export type HearthEventListener = (event: HearthEvent, audience?: Audience) => void;

/** Fans events out to every open events socket. */
export class HearthEventHub {
  private readonly listeners = new Set<HearthEventListener>();

  /** Every event, each with its audience: for the app's own listeners (channels, session sockets). */
  subscribe(listener: HearthEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Only the events for `person`, in the order they were published. `audienceOf` gives one to an
   * event published without (sessions_changed from a run, looked up when it is delivered).
   */
  subscribeFor(person: Person, send: (event: HearthEvent) => void, audienceOf: (event: HearthEvent) => Audience | undefined = () => undefined): () => void {
    let delivered: Promise<void> = Promise.resolve();
    let waiting = 0;
    let open = true;
    const deliver = (event: HearthEvent, admitted: boolean) => {
      if (open && admitted) send(event);
    };
    const unsubscribe = this.subscribe((event, audience) => {
      const judge = audience ?? audienceOf(event);
      const admitted = judge === undefined ? true : judge(person);
      // Sent at once when nothing is waiting before it, as the plain subscribe does; else in turn.
      if (waiting === 0 && typeof admitted === 'boolean') return deliver(event, admitted);
      waiting += 1;
      delivered = delivered
        .then(async () => deliver(event, await admitted))
        // An audience that cannot answer (its lookup failed as the database closed) is sent nothing.
        .catch(() => undefined)
        .finally(() => {
          waiting -= 1;
        });
    });
    return () => {
      open = false;
      unsubscribe();
    };
  }

  publish(event: HearthEvent, audience?: Audience): void {
    for (const listener of this.listeners) listener(event, audience);
  }
}

/** The audience of what is one person's: their notifications. */
export function onlyFor(personId: string): Audience {
  return (person) => person.id === personId;
}
