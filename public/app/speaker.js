import { api } from './api.js';
import { metrics } from './metrics.js';
import { SpokenSentences } from './spoken-sentences.js';

const storageKey = 'hearth.voice.readAloud';
/** WAV: Hearth's espeak-ng writes it without a conversion, and every browser decodes it. */
const audioFormat = 'wav';
/** Sentences whose audio is asked for while one plays (the server runs a few of a person's at once). */
const fetchAhead = 1;

/**
 * The speaker toggle: while on, answers are read aloud as they stream. The streamed text is cut
 * into sentences (SpokenSentences); each is sent to `POST /speech` as soon as it is complete, the
 * next one while one plays, and they play in order through one AudioContext (which the
 * toggle's click unlocks, as browsers let audio start only after the person did something).
 * Stop, Esc, turning it off, a new answer and another session silence it and drop the queue.
 */
export class Speaker {
  #sentences = new SpokenSentences();
  /** `{ text, audio }` in speaking order; `audio` is the fetch of its clip once asked for. */
  #queue = [];
  #context;
  #source;
  #abort = new AbortController();
  /** Bumped by silence(): whatever was awaited for an older generation is dropped. */
  #generation = 0;
  #draining = false;
  #enabled = localStorage.getItem(storageKey) === 'true';
  /** Why reading aloud cannot work here (no text-to-speech backend), or ''. */
  #unavailable = '';
  /** Reading this answer failed (and said why): the rest of it is not tried sentence after sentence. */
  #failedThisAnswer = false;

  /** `onError(message)` shows a failure to the person ('' clears it). */
  constructor(button, { onError }) {
    this.button = button;
    this.onError = onError;
    button.addEventListener('click', () => this.#toggle());
    document.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && this.speaking && !document.querySelector('dialog[open]')) this.silence();
    });
    // A page reloaded with reading on gets its audio unlocked by the person's first touch or key.
    for (const type of ['pointerdown', 'keydown']) document.addEventListener(type, () => this.#enabled && this.#unlock(), { capture: true });
    this.#render();
  }

  /** Whether something is playing or waiting to. */
  get speaking() {
    return this.#source !== undefined || this.#queue.length > 0;
  }

  /** `text_to_speech` of `GET /integrations` (or its `integration_status` event). */
  showStatus(status) {
    this.#unavailable = status?.status === 'not_configured' ? (status.message ?? 'Reading aloud needs text to speech, which this Hearth does not have set up (TTS_BACKEND).') : '';
    this.button.title = this.#unavailable || (status?.status === 'failed' && status.message) || 'Read answers aloud as they arrive';
    if (this.#unavailable) this.silence();
    this.#render();
  }

  /** Every event of the open session's socket. */
  onEvent(event) {
    if (event.type === 'stream_start') {
      this.silence();
      this.#sentences.reset();
      this.#failedThisAnswer = false;
      metrics.firstAudioAt = 0;
      metrics.streamEndAt = 0;
    } else if (event.type === 'stream_delta') {
      this.#speak(this.#sentences.push(event.delta));
    } else if (event.type === 'tool_started') {
      this.#speak(this.#sentences.flush());
    } else if (event.type === 'stream_end') {
      metrics.streamEndAt = performance.now();
      this.#speak(this.#sentences.flush());
    } else if (event.type === 'stream_stopped' || event.type === 'error') {
      this.silence();
      this.#sentences.reset();
    }
  }

  /** Stops what plays and drops what waits. */
  silence() {
    this.#generation += 1;
    this.#abort.abort();
    this.#abort = new AbortController();
    this.#queue = [];
    this.#draining = false;
    const source = this.#source;
    this.#source = undefined;
    source?.stop();
    this.#showProgress();
  }

  #toggle() {
    if (this.#unavailable) {
      this.onError(this.#unavailable);
      return;
    }
    this.#enabled = !this.#enabled;
    localStorage.setItem(storageKey, String(this.#enabled));
    if (this.#enabled) this.#unlock();
    else this.silence();
    this.#render();
  }

  #unlock() {
    this.#context ??= new AudioContext();
    if (this.#context.state === 'suspended') this.#context.resume().catch(() => undefined);
  }

  #speak(sentences) {
    if (!this.#enabled || this.#unavailable || this.#failedThisAnswer || sentences.length === 0) return;
    this.#queue.push(...sentences.map((text) => ({ text, audio: undefined })));
    this.#fetchAhead();
    if (!this.#draining) void this.#drain();
  }

  #fetchAhead() {
    const signal = this.#abort.signal;
    for (const item of this.#queue.slice(0, fetchAhead)) {
      if (item.audio) continue;
      item.audio = api.speech(item.text, { format: audioFormat, signal });
      // Awaited when its turn comes; one dropped before then must not be reported as unhandled.
      item.audio.catch(() => undefined);
    }
    this.#showProgress();
  }

  async #drain() {
    const generation = this.#generation;
    this.#draining = true;
    while (this.#queue.length > 0 && generation === this.#generation) {
      const item = this.#queue[0];
      let clip;
      try {
        this.#unlock();
        clip = await this.#context.decodeAudioData(await item.audio);
      } catch (error) {
        if (generation !== this.#generation) return;
        this.silence();
        this.#failedThisAnswer = true;
        this.onError(`Reading aloud failed: ${error.message}`);
        return;
      }
      if (generation !== this.#generation) return;
      this.#queue.shift();
      this.#fetchAhead();
      await this.#play(clip);
    }
    if (generation === this.#generation) this.#draining = false;
  }

  #play(clip) {
    const source = this.#context.createBufferSource();
    source.buffer = clip;
    source.connect(this.#context.destination);
    this.#source = source;
    const ended = new Promise((resolve) => source.addEventListener('ended', resolve, { once: true }));
    source.start();
    metrics.firstAudioAt ||= performance.now();
    this.#showProgress();
    return ended.then(() => {
      if (this.#source === source) this.#source = undefined;
      this.#showProgress();
    });
  }

  #showProgress() {
    metrics.speaking = this.#source !== undefined;
    metrics.speechQueue = this.#queue.length;
    this.button.dataset.speaking = String(this.speaking);
  }

  #render() {
    const on = this.#enabled && !this.#unavailable;
    this.button.setAttribute('aria-pressed', String(on));
    this.button.setAttribute('aria-disabled', String(this.#unavailable !== ''));
  }
}
