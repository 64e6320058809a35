import { metrics } from './metrics.js';

/** Rendering may take at most this share of the main thread while text streams. */
const renderShare = 0.25;

/**
 * Draws streamed text at most once per animation frame, however many deltas arrive in between.
 * When one render grows expensive (a very long paragraph is rendered whole each time), the next
 * waits for later frames, so that reading the socket always comes first and the page never falls
 * behind it. While a run streams it also counts the frames that pass, so `renders <= frames` can
 * be checked.
 */
export class FrameScheduler {
  #dirty = new Set();
  #requested = false;
  #counting = false;
  #notBefore = 0;

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
    if (performance.now() < this.#notBefore) {
      this.#requested = true;
      requestAnimationFrame(() => this.#renderFrame());
      return;
    }
    const items = [...this.#dirty];
    this.#dirty.clear();
    const started = performance.now();
    for (const item of items) item.render();
    metrics.renders += 1;
    metrics.lastRenderAt = performance.now();
    const took = metrics.lastRenderAt - started;
    metrics.longestRenderMs = Math.max(metrics.longestRenderMs, took);
    this.#notBefore = metrics.lastRenderAt + took * (1 / renderShare - 1);
    this.onAfterRender?.();
  }
}
