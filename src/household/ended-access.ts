import type { Caller, CallerVia } from '../people/person.ts';

/**
 * A way in that ended: one sign-in or token (`credentialId`), every one of a kind (`via`), or all
 * of a person's (removed, their role changed). What was opened with it, an open WebSocket above
 * all, must end too: it was judged once, when it opened.
 */
export interface EndedAccess {
  personId: string;
  via?: CallerVia;
  credentialId?: string;
}

/** Tells those listening (the sockets) when a way in ended; SignIns, ApiTokens and PeopleAdmin say so. */
export class AccessEnds {
  private readonly listeners = new Set<(ended: EndedAccess) => void>();

  /** Calls `onEnd` once the caller's way in ended; returns how to stop listening. */
  whenEnded(caller: Caller, onEnd: () => void): () => void {
    const listener = (ended: EndedAccess) => {
      if (endsCaller(ended, caller)) onEnd();
    };
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  ended(ended: EndedAccess): void {
    for (const listener of this.listeners) listener(ended);
  }
}

export function endsCaller(ended: EndedAccess, caller: Caller): boolean {
  if (ended.personId !== caller.person.id) return false;
  if (ended.via !== undefined && ended.via !== caller.via) return false;
  return ended.credentialId === undefined || ended.credentialId === caller.credentialId;
}
