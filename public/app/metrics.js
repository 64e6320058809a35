/**
 * Figures the browser tests read (window.hearthMetrics): how often the stream was drawn against
 * how many animation frames passed while it streamed, and how long opening a session took.
 */
export const metrics = {
  /** Stream render passes. */
  renders: 0,
  /** Animation frames that passed while a run was streaming. */
  frames: 0,
  eventsReceived: 0,
  lastEventAt: 0,
  lastRenderAt: 0,
  /** `{ sessionId, messages, ms, allDrawnMs }` for the last session opened: first screen drawn, then all of it. */
  lastOpen: null,
};

window.hearthMetrics = metrics;
