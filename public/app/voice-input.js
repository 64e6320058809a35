const sendAtOnceKey = 'hearth.voice.sendAtOnce';
/** What the browser records, first it supports (Safari records only MP4). */
const recordingTypes = ['audio/webm;codecs=opus', 'audio/ogg;codecs=opus', 'audio/mp4'];
/** The longest recording taken: Hearth's VOICE_MAX_SECONDS by default. */
const longestSeconds = 120;
/** A press shorter than this was a tap, not talking. */
const shortestHoldMs = 400;
/** Hands-free: a level (RMS of the samples, 0..1) above `speechLevel` is speech, below `silenceLevel` silence. */
const speechLevel = 0.03;
const silenceLevel = 0.015;
/** Hands-free ends after this much silence following speech, or gives up after `waitForSpeechMs` without any. */
const silenceEndsMs = 1500;
const waitForSpeechMs = 8000;
const levelEveryMs = 50;

const nothingHeard = 'Nothing was heard. Check that the right microphone is on, then speak after pressing the button.';

/** Why the microphone could not be opened, in words the person can act on. */
function microphoneRefusal(error) {
  if (error?.name === 'NotAllowedError' || error?.name === 'SecurityError') return 'Hearth may not use the microphone. Allow it in the browser’s site settings (the icon beside the address), then try again.';
  if (error?.name === 'NotFoundError' || error?.name === 'OverconstrainedError') return 'No microphone was found. Connect one, then try again.';
  if (error?.name === 'NotReadableError') return 'The microphone could not be started: another app may be using it.';
  return `The microphone could not be opened: ${error?.message ?? error}`;
}

/** The level of the samples the analyser holds now, as their root mean square. */
function levelOf(analyser, samples) {
  analyser.getFloatTimeDomainData(samples);
  let sum = 0;
  for (const sample of samples) sum += sample * sample;
  return Math.sqrt(sum / samples.length);
}

const clock = (seconds) => `${Math.floor(seconds / 60)}:${String(Math.floor(seconds % 60)).padStart(2, '0')}`;

/**
 * The composer's microphone: hold the button to talk (pointer, or Space/Enter held on it), or press
 * Hands-free, which records until about 1.5 s of silence follows speech. The recording (MediaRecorder,
 * WebM/Opus where supported) goes to `transcribe`; its words go to `onWords` with whether the person
 * wants them sent at once (the "Send at once" setting, kept in localStorage) or put in the box.
 */
export class VoiceInput {
  /** `idle`, `opening` (asking for the microphone), `recording` or `transcribing`. */
  #state = 'idle';
  /** `hold` or `hands-free` while not idle. */
  #mode;
  #recording;
  /** The hold-to-talk press is still down. */
  #held = false;
  #unavailable = '';

  /**
   * `transcribe(blob)` resolves `{transcript}`; `onWords(text, {sendAtOnce})` takes the words;
   * `onError(message)` shows a failure ('' clears it); `onStart()` hears a recording begin.
   */
  constructor({ micButton, handsFreeButton, sendAtOnce, status }, { transcribe, onWords, onError, onStart }) {
    Object.assign(this, { micButton, handsFreeButton, sendAtOnceBox: sendAtOnce, status, transcribe, onWords, onError, onStart });
    sendAtOnce.checked = localStorage.getItem(sendAtOnceKey) !== 'false';
    sendAtOnce.addEventListener('change', () => localStorage.setItem(sendAtOnceKey, String(sendAtOnce.checked)));
    this.#wireHold();
    handsFreeButton.addEventListener('click', () => {
      if (this.#recording?.mode === 'hands-free') void this.#finish();
      else void this.#start('hands-free');
    });
    this.#render();
  }

  /** `speech_to_text` of `GET /integrations` (or its `integration_status` event). */
  showStatus(status) {
    this.#unavailable = status?.status === 'not_configured' ? (status.message ?? 'Talking to Hearth needs speech to text, which this Hearth does not have set up (STT_BACKEND).') : '';
    const failed = status?.status === 'failed' ? status.message : '';
    this.micButton.title = this.#unavailable || failed || 'Hold to talk (or hold Space on this button)';
    this.handsFreeButton.title = this.#unavailable || failed || 'Talk without holding: stops after a moment of silence';
    this.#render();
  }

  #wireHold() {
    const button = this.micButton;
    button.addEventListener('pointerdown', (event) => {
      if (event.button !== 0) return;
      event.preventDefault();
      button.setPointerCapture(event.pointerId);
      this.#press();
    });
    for (const type of ['pointerup', 'pointercancel']) button.addEventListener(type, () => this.#release());
    // A long press on a phone would otherwise open the context menu or select the label.
    button.addEventListener('contextmenu', (event) => event.preventDefault());
    button.addEventListener('keydown', (event) => {
      if (event.key !== ' ' && event.key !== 'Enter') return;
      event.preventDefault();
      if (!event.repeat) this.#press();
    });
    button.addEventListener('keyup', (event) => {
      if (event.key !== ' ' && event.key !== 'Enter') return;
      event.preventDefault();
      this.#release();
    });
    button.addEventListener('blur', () => this.#release());
  }

  #press() {
    if (this.#state !== 'idle') return;
    this.#held = true;
    void this.#start('hold');
  }

  #release() {
    if (!this.#held) return;
    this.#held = false;
    if (this.#recording?.mode === 'hold') void this.#finish();
  }

  async #start(mode) {
    if (this.#state !== 'idle') return;
    if (this.#unavailable) {
      this.onError(this.#unavailable);
      return;
    }
    this.onError('');
    if (!navigator.mediaDevices?.getUserMedia || typeof MediaRecorder === 'undefined') {
      this.onError(window.isSecureContext ? 'This browser cannot record audio.' : 'The microphone works only on a secure page: open Hearth over HTTPS (or on this machine as localhost).');
      return;
    }
    this.onStart?.();
    this.#setState('opening', mode);
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true } });
    } catch (error) {
      this.#setState('idle');
      this.onError(microphoneRefusal(error));
      return;
    }
    // Let go while the browser was still asking for the microphone: nothing to record.
    if (mode === 'hold' && !this.#held) {
      for (const track of stream.getTracks()) track.stop();
      this.#setState('idle');
      return;
    }
    this.#record(stream, mode);
  }

  #record(stream, mode) {
    const mimeType = recordingTypes.find((type) => MediaRecorder.isTypeSupported(type));
    const recorder = new MediaRecorder(stream, mimeType ? { mimeType } : {});
    const chunks = [];
    recorder.addEventListener('dataavailable', (event) => event.data.size > 0 && chunks.push(event.data));
    const stopped = new Promise((resolve) => recorder.addEventListener('stop', resolve, { once: true }));
    const audio = new AudioContext();
    // Some browsers (Safari) start it suspended outside the press itself, and a suspended analyser hears nothing.
    void audio.resume();
    const analyser = audio.createAnalyser();
    audio.createMediaStreamSource(stream).connect(analyser);
    const samples = new Float32Array(analyser.fftSize);
    const recording = { mode, stream, recorder, chunks, stopped, audio, startedAt: performance.now(), heard: false, quietSince: 0 };
    recording.timer = setInterval(() => this.#listen(recording, levelOf(analyser, samples)), levelEveryMs);
    this.#recording = recording;
    recorder.start();
    this.#setState('recording', mode);
  }

  /** Every few milliseconds while recording: the clock, the level, and hands-free's end at silence. */
  #listen(recording, level) {
    const now = performance.now();
    const elapsedMs = now - recording.startedAt;
    if (level > speechLevel) {
      recording.heard = true;
      recording.quietSince = 0;
    } else if (level < silenceLevel) recording.quietSince ||= now;
    this.status.style.setProperty('--voice-level', Math.min(1, level * 8).toFixed(2));
    this.#showElapsed(elapsedMs / 1000);
    const silentLongEnough = recording.heard && recording.quietSince && now - recording.quietSince >= silenceEndsMs;
    const waitedInVain = !recording.heard && elapsedMs >= waitForSpeechMs;
    if (elapsedMs >= longestSeconds * 1000 || (recording.mode === 'hands-free' && (silentLongEnough || waitedInVain))) void this.#finish();
  }

  async #finish() {
    const recording = this.#recording;
    if (this.#state !== 'recording' || !recording) return;
    this.#recording = undefined;
    this.#setState('transcribing', recording.mode);
    clearInterval(recording.timer);
    recording.recorder.stop();
    await recording.stopped;
    for (const track of recording.stream.getTracks()) track.stop();
    void recording.audio.close();
    try {
      if (recording.mode === 'hold' && performance.now() - recording.startedAt < shortestHoldMs) {
        this.onError('Keep the button pressed while you speak, and let go when you are done.');
        return;
      }
      if (recording.mode === 'hands-free' && !recording.heard) {
        this.onError(nothingHeard);
        return;
      }
      const blob = new Blob(recording.chunks, { type: recording.recorder.mimeType || 'audio/webm' });
      const { transcript } = await this.transcribe(blob);
      const words = (transcript ?? '').trim();
      if (words === '') this.onError(nothingHeard);
      else await this.onWords(words, { sendAtOnce: this.sendAtOnceBox.checked });
    } catch (error) {
      this.onError(error.code === 'no_speech' ? nothingHeard : `Transcription failed: ${error.message}`);
    } finally {
      this.#setState('idle');
    }
  }

  #setState(state, mode) {
    this.#state = state;
    this.#mode = state === 'idle' ? undefined : mode;
    this.#render();
  }

  #showElapsed(seconds) {
    const whole = Math.floor(seconds);
    if (this.status.dataset.seconds === String(whole)) return;
    this.status.dataset.seconds = String(whole);
    this.status.querySelector('.voice-elapsed').textContent = clock(whole);
  }

  #render() {
    const state = this.#state;
    const holding = this.#mode === 'hold' && state !== 'idle';
    const handsFree = this.#mode === 'hands-free' && state !== 'idle';
    this.micButton.dataset.state = holding ? state : 'idle';
    this.micButton.setAttribute('aria-pressed', String(holding && state === 'recording'));
    this.micButton.setAttribute('aria-disabled', String(this.#unavailable !== '' || handsFree));
    this.handsFreeButton.setAttribute('aria-pressed', String(handsFree));
    this.handsFreeButton.setAttribute('aria-disabled', String(this.#unavailable !== '' || holding));
    this.status.hidden = state === 'idle';
    this.status.dataset.state = state;
    const words = {
      opening: 'Opening the microphone…',
      recording: this.#mode === 'hold' ? 'Listening — let go to finish' : 'Listening — stops when you pause',
      transcribing: 'Writing down what you said…',
    };
    this.status.querySelector('.voice-state').textContent = words[state] ?? '';
    if (state === 'recording') this.#showElapsed(0);
    else delete this.status.dataset.seconds;
  }
}
