/**
 * What the built-in tools may know of and do to sessions, and no more: the app hands over its
 * session service, which owns the rows, the transcript marker and the event of a profile switch.
 */
export interface ToolSessions {
  /** The session (its profile, and whose it is), or undefined when there is none of that id (it was deleted). */
  find(sessionId: string): Promise<{ profileId: string; personId: string; shared: boolean } | undefined>;
  /**
   * Moves the session to another profile as the model asked (`agent`); `switched` is false when it
   * had that one already; refused (`forbidden`) when the session's person may not use that profile.
   */
  switchProfile(sessionId: string, profileId: string, by: 'agent'): Promise<{ ok: true; switched: boolean } | { ok: false; code: string; message: string }>;
}
