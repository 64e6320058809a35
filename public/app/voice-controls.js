import { api } from './api.js';
import { Speaker } from './speaker.js';
import { VoiceInput } from './voice-input.js';

/**
 * The composer's microphone and the answer read aloud, and whether this Hearth can do either
 * (`speech_to_text`, `text_to_speech` of GET /integrations and their integration_status events).
 */
export class VoiceControls {
  #speaker;
  #input;

  /**
   * @param {object} parts
   * @param {(recording: Blob) => Promise<{ text: string }>} parts.transcribe the recording's words, through the session a message would go to
   * @param {(words: string, sendAtOnce: boolean) => Promise<void>} parts.takeWords what the person said: sent, or put in the box
   * @param {(message: string) => void} parts.showError
   */
  constructor({ transcribe, takeWords, showError }) {
    const byId = (id) => document.getElementById(id);
    this.#speaker = new Speaker(byId('voice-speaker'), { onError: showError });
    this.#input = new VoiceInput(
      { micButton: byId('voice-mic'), handsFreeButton: byId('voice-hands-free'), sendAtOnce: byId('voice-send-at-once'), status: byId('voice-status') },
      {
        transcribe,
        onWords: (words, { sendAtOnce }) => takeWords(words, sendAtOnce),
        onError: showError,
        onStart: () => this.#speaker.silence(),
      },
    );
  }

  /** Stops reading aloud and drops what waits to be read. */
  silence() {
    this.#speaker.silence();
  }

  /** An event of the open session: its answer is read aloud as it streams. */
  onEvent(event) {
    this.#speaker.onEvent(event);
  }

  /** Reads both statuses, at start and after a new sign-in. */
  async loadStatus() {
    try {
      const { integrations } = await api.integrations();
      const named = (name) => integrations.find((integration) => integration.name === name);
      this.#input.showStatus(named('speech_to_text'));
      this.#speaker.showStatus(named('text_to_speech'));
    } catch {
      // The buttons stay as they were; pressing one reports what fails.
    }
  }

  /** An integration's `integration_status` event; only the two speech ones concern these buttons. */
  showStatus(integration) {
    if (integration.name === 'speech_to_text') this.#input.showStatus(integration);
    if (integration.name === 'text_to_speech') this.#speaker.showStatus(integration);
  }
}
