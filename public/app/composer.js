import { element, formatBytes } from './dom.js';
import { icon } from './icons.js';

const longestTextareaPx = 240;

/**
 * The message box: Enter sends, Shift+Enter breaks the line, Escape stops. Send turns into Stop
 * while a run is active. Files come from the Attach button, paste, or drag and drop, and wait as
 * chips until the message is sent. What was typed is kept until the server has taken it.
 */
export class Composer {
  #attachments = [];
  #running = false;
  #canSend = false;
  #busy = false;

  /** `onSend({ content, attachments })` resolves true once the message is on its way; `onStop()` stops the run. */
  constructor(form, { onSend, onStop, dropZone }) {
    this.form = form;
    this.onSend = onSend;
    this.onStop = onStop;
    this.textarea = form.querySelector('textarea');
    this.button = form.querySelector('button.send');
    this.fileInput = form.querySelector('input[type=file]');
    this.chips = form.querySelector('.attachments');
    this.errorLine = form.querySelector('.composer-error');

    form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (this.#running) this.onStop();
      else this.#send();
    });
    this.textarea.addEventListener('keydown', (event) => this.#keydown(event));
    this.textarea.addEventListener('input', () => this.#fitHeight());
    form.querySelector('button.attach').addEventListener('click', () => this.fileInput.click());
    this.fileInput.addEventListener('change', () => {
      this.addFiles([...this.fileInput.files]);
      this.fileInput.value = '';
    });
    this.textarea.addEventListener('paste', (event) => {
      const files = [...(event.clipboardData?.files ?? [])];
      if (files.length === 0) return;
      event.preventDefault();
      this.addFiles(files);
    });
    this.#acceptDrops(dropZone ?? form);
    document.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && this.#running && !event.defaultPrevented && !document.querySelector('dialog[open]')) this.onStop();
    });
    this.#update();
  }

  /** `running`: a run is active (Stop shown, input locked); `canSend`: the session's socket is ready. */
  setState({ running = this.#running, canSend = this.#canSend }) {
    this.#running = running;
    this.#canSend = canSend;
    this.#update();
  }

  addFiles(files) {
    for (const file of files) this.#attachments.push(file);
    this.#renderChips();
  }

  /** Words to edit before sending (what the person said, with "Send at once" off), after what is already typed. */
  insertText(text) {
    const typed = this.textarea.value.trimEnd();
    this.textarea.value = typed ? `${typed} ${text}` : text;
    this.#fitHeight();
    if (!this.textarea.disabled) this.textarea.focus();
  }

  showError(message) {
    this.errorLine.textContent = message;
    this.errorLine.hidden = !message;
  }

  #keydown(event) {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      if (!this.#running) this.#send();
    } else if (event.key === 'Escape' && this.#running) {
      event.preventDefault();
      this.onStop();
    }
  }

  async #send() {
    const content = this.textarea.value.trim();
    if (this.#busy || !this.#canSend || this.#running || (content === '' && this.#attachments.length === 0)) return;
    this.#busy = true;
    this.showError('');
    this.#update();
    try {
      const sent = await this.onSend({ content, attachments: [...this.#attachments] });
      if (sent) {
        this.textarea.value = '';
        this.#attachments = [];
        this.#renderChips();
        this.#fitHeight();
      }
    } catch (error) {
      this.showError(error.message);
    } finally {
      this.#busy = false;
      this.#update();
    }
  }

  #update() {
    const stop = this.#running;
    this.button.setAttribute('aria-label', stop ? 'Stop' : 'Send');
    this.button.textContent = stop ? 'Stop' : this.#busy ? 'Sending…' : 'Send';
    this.button.classList.toggle('stop', stop);
    this.button.disabled = !stop && (this.#busy || !this.#canSend);
    this.textarea.disabled = this.#running;
    if (!this.#running && !this.#busy && document.activeElement === document.body) this.textarea.focus();
  }

  #renderChips() {
    this.chips.hidden = this.#attachments.length === 0;
    this.chips.replaceChildren(
      ...this.#attachments.map((file, index) =>
        element(
          'li',
          { dataset: { attachment: file.name }, className: file.type.startsWith('image/') ? 'chip image' : 'chip' },
          file.type.startsWith('image/') ? icon('image') : icon('file'),
          element('span', { className: 'chip-name' }, file.name),
          element('span', { className: 'chip-size' }, formatBytes(file.size)),
          element('button', { type: 'button', className: 'chip-remove', 'aria-label': `Remove ${file.name}`, onclick: () => this.#remove(index) }, icon('close')),
        ),
      ),
    );
  }

  #remove(index) {
    this.#attachments.splice(index, 1);
    this.#renderChips();
    this.textarea.focus();
  }

  #fitHeight() {
    this.textarea.style.height = 'auto';
    this.textarea.style.height = `${Math.min(this.textarea.scrollHeight, longestTextareaPx)}px`;
  }

  #acceptDrops(zone) {
    zone.addEventListener('dragover', (event) => {
      if (!event.dataTransfer?.types.includes('Files')) return;
      event.preventDefault();
      zone.classList.add('dropping');
    });
    zone.addEventListener('dragleave', (event) => {
      if (!zone.contains(event.relatedTarget)) zone.classList.remove('dropping');
    });
    zone.addEventListener('drop', (event) => {
      zone.classList.remove('dropping');
      const files = [...(event.dataTransfer?.files ?? [])];
      if (files.length === 0) return;
      event.preventDefault();
      this.addFiles(files);
    });
  }
}
