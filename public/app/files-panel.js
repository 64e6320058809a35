import { api } from './api.js';
import { element, formatBytes, replaceContent } from './dom.js';
import { icon } from './icons.js';
import { failure, heading, load } from './panel-frame.js';

/** How long ago, in the largest whole unit: "just now", "5 min ago", "3 h ago", "2 days ago". */
function age(iso, now = Date.now()) {
  const minutes = Math.floor((now - Date.parse(iso)) / 60_000);
  if (!(minutes >= 1)) return 'just now';
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.floor(hours / 24)} days ago`;
}

function retention(hours) {
  const span = hours % 24 === 0 && hours >= 48 ? `${hours / 24} days` : hours === 1 ? '1 hour' : `${hours} hours`;
  return `Files are kept for ${span} after their last change, then removed.`;
}

/**
 * The open session's files (`/sessions/:id/files`): what the person uploaded and what its tools
 * wrote into its folder, each with its size, age, a download and a delete; an upload of its own.
 */
export class FilesPanel {
  name = 'Files';

  /** `sessionId()` names the open session (undefined while none is). */
  constructor(aside, { sessionId = () => undefined } = {}) {
    this.aside = aside;
    this.sessionId = sessionId;
  }

  refresh() {
    return this.#show(this.sessionId());
  }

  onEvent(event) {
    // A turn's end may have written files; a new session has others.
    if (event.type === 'session_opened' || event.type === 'context_changed') this.refresh();
  }

  async #show(sessionId) {
    if (!sessionId) {
      replaceContent(this.aside, heading(this.name), element('p', { className: 'muted' }, 'Open a session to see its files.'));
      return;
    }
    const listing = await load(this.aside, this.name, () => api.files(sessionId), () => this.#show(sessionId));
    if (!listing || sessionId !== this.sessionId()) return;
    const input = element('input', { type: 'file', id: 'files-panel-upload', className: 'files-upload-input', onchange: () => this.#upload(sessionId, input) });
    replaceContent(
      this.aside,
      heading(this.name, () => this.#show(sessionId)),
      element(
        'div',
        { className: 'files-upload' },
        input,
        element('label', { for: 'files-panel-upload', className: 'files-upload-button' }, icon('attach'), 'Upload a file'),
        element('span', { className: 'muted' }, `up to ${listing.max_upload_mb} MB`),
      ),
      listing.files.length === 0
        ? element('p', { className: 'muted' }, 'No files yet. What you upload and what the tools write in this session appear here.')
        : element('ul', { className: 'file-list' }, listing.files.map((file) => this.#file(sessionId, file))),
      element('p', { className: 'muted files-retention' }, retention(listing.retention_hours)),
    );
  }

  #file(sessionId, file) {
    return element(
      'li',
      { dataset: { fileName: file.name } },
      element(
        'div',
        { className: 'file-text' },
        element('a', { href: api.fileUrl(sessionId, file.name), download: file.name.split('/').at(-1), className: 'file-name' }, file.name),
        element('span', { className: 'muted file-facts' }, `${formatBytes(file.size)} · `, element('time', { datetime: file.modified_at, title: new Date(file.modified_at).toLocaleString() }, age(file.modified_at))),
      ),
      element(
        'div',
        { className: 'fact-actions' },
        element('a', { href: api.fileUrl(sessionId, file.name), download: file.name.split('/').at(-1), className: 'icon-button', 'aria-label': `Download ${file.name}`, title: 'Download' }, icon('download')),
        element('button', { type: 'button', className: 'icon-button', 'aria-label': `Delete ${file.name}`, title: 'Delete', onclick: () => this.#change(sessionId, () => api.deleteFile(sessionId, file.name)) }, icon('trash')),
      ),
    );
  }

  #upload(sessionId, input) {
    const [file] = input.files ?? [];
    if (file) return this.#change(sessionId, () => api.upload(sessionId, file));
  }

  async #change(sessionId, change) {
    try {
      await change();
    } catch (error) {
      this.aside.append(failure(error));
      return;
    }
    await this.#show(sessionId);
  }
}
