import { metrics } from './metrics.js';

/**
 * Draws streamed text at most once per animation frame, however many deltas arrive in between.
 * While a run streams it also counts the frames that pass, so `renders <= frames` can be checked.
 */
export class FrameScheduler {
  #dirty = new Set();
  #requested = false;
  #counting = false;

  /** `item.render()` runs in the next frame; scheduling it again before then costs nothing. */
  schedule(item) {
    this.#dirty.add(item);
    if (this.#requested) return;
    this.#requested = true;
    requestAnimationFrame(() => this.#renderFrame());
  }

  /** Draws what is pending now (before a run's final render, so nothing is drawn twice). */
  flush() {
    for (const item of this.#dirty) item.render();
    this.#dirty.clear();
  }

  countFrames(active) {
    if (active === this.#counting) return;
    this.#counting = active;
    if (active) requestAnimationFrame(() => this.#countFrame());
  }

  #countFrame() {
    if (!this.#counting) return;
    metrics.frames += 1;
    requestAnimationFrame(() => this.#countFrame());
  }

  #renderFrame() {
    this.#requested = false;
    if (this.#dirty.size === 0) return;
    const items = [...this.#dirty];
    this.#dirty.clear();
    const follow = this.onBeforeRender?.() ?? false;
    for (const item of items) item.render();
    metrics.renders += 1;
    metrics.lastRenderAt = performance.now();
    this.onAfterRender?.(follow);
  }
}
