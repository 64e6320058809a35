/**
 * Figures the browser tests read (window.hearthMetrics): how often the stream was drawn against
 * how many animation frames passed while it streamed, how long opening a session took, and when an
 * answer read aloud began to sound.
 */
export const metrics = {
  /** Stream render passes. */
  renders: 0,
  /** Animation frames that passed while a run was streaming. */
  frames: 0,
  eventsReceived: 0,
  /** When the last event arrived, and when the page had finished drawing it into the DOM. */
  lastEventAt: 0,
  lastAppliedAt: 0,
  /** The longest time one event took to handle, and one frame's stream render. */
  longestApplyMs: 0,
  longestRenderMs: 0,
  lastRenderAt: 0,
  /** `{ sessionId, messages, startedAt, ms, allDrawnMs }` for the last session opened: when it began (page clock), first screen drawn, then all of it. */
  lastOpen: null,
  /** Reading answers aloud (speaker.js), page clock: when the latest answer's first sentence began to sound, and its stream_end arrived (0: not yet). */
  firstAudioAt: 0,
  streamEndAt: 0,
  /** A sentence is sounding now; how many wait after it. */
  speaking: false,
  speechQueue: 0,
};

window.hearthMetrics = metrics;
