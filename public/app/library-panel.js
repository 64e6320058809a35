import { api } from './api.js';
import { element, formatBytes, formatTime, replaceContent } from './dom.js';
import { icon } from './icons.js';
import { failure, heading, load } from './panel-frame.js';

const statusWords = { queued: 'Waiting to be read', indexing: 'Indexing', ready: 'Ready', failed: 'Could not be read' };
/** Passages shown before and after the one a citation opens. */
const neighbours = 2;
const documentsTool = 'documents_search';

/** A citation's link as answers carry it (`/documents/<id>?passage=<n>`): the document and passage, or undefined. */
export function citationTarget(href) {
  const match = /^\/documents\/([A-Za-z0-9-]{1,100})\?passage=(\d{1,7})$/.exec(href ?? '');
  return match && { id: match[1], passage: Number(match[2]) };
}

/**
 * The Library panel (docs/documents.md): the person's documents and the household's, each with its pages, size, when
 * it was added and its indexing state (a bar while it is indexed); adding by the file button or by dropping files on
 * the panel, into *Mine* or *Household*; a download; a delete that asks first; a document opened at a passage with its
 * neighbours, the passage highlighted (where citations in answers lead). The owner turns the documents search on or
 * off per profile.
 */
export class LibraryPanel {
  name = 'Library';
  #reads = 0;
  /** The passage view shown instead of the list, while one is open: `{id, passage}`. */
  #opened;

  /** `me()` is GET /me's answer (undefined on a one-person Hearth without sign-in, who is the owner). */
  constructor(aside, { me = () => undefined, dialog }) {
    this.aside = aside;
    this.me = me;
    this.dialog = dialog;
    aside.addEventListener('dragover', (event) => {
      if (!this.#mayAdd() || !event.dataTransfer?.types.includes('Files')) return;
      event.preventDefault();
      aside.classList.add('library-drop');
    });
    aside.addEventListener('dragleave', (event) => {
      if (!aside.contains(event.relatedTarget)) aside.classList.remove('library-drop');
    });
    aside.addEventListener('drop', (event) => {
      aside.classList.remove('library-drop');
      if (!this.#mayAdd() || !event.dataTransfer?.files.length) return;
      event.preventDefault();
      void this.#add([...event.dataTransfer.files]);
    });
  }

  /** The passage the panel shows when it is next read (a citation clicked in an answer). */
  aimAt(id, passage) {
    this.#opened = { id, passage };
  }

  refresh() {
    return this.#opened ? this.openAt(this.#opened.id, this.#opened.passage) : this.#showList();
  }

  onEvent(event) {
    if (event.type === 'document_status') this.#showStatus(event.document);
    else if (event.type === 'document_deleted') {
      if (this.#opened?.id === event.id) this.#showList();
      else this.aside.querySelector(`li[data-document-id="${CSS.escape(event.id)}"]`)?.remove();
    } else if (event.type === 'reconnected' || event.type === 'tools_changed') this.refresh();
  }

  /** Shows the document at `passage` with its neighbours, the passage highlighted and brought into view. */
  async openAt(id, passage) {
    this.#opened = { id, passage };
    const read = ++this.#reads;
    const from = Math.max(0, passage - neighbours);
    const answer = await load(this.aside, this.name, () => Promise.all([api.document(id), api.passages(id, from, neighbours * 2 + 1)]), () => this.openAt(id, passage));
    if (!answer || read !== this.#reads) return;
    const [document, { passages }] = answer;
    const back = element('button', { type: 'button', className: 'link-button', onclick: () => this.#showList() }, '← All documents');
    const target = passages.find((each) => each.ordinal === passage);
    replaceContent(
      this.aside,
      heading(this.name),
      back,
      element('h3', { className: 'library-document-name' }, document.name),
      element(
        'ol',
        { className: 'passage-list', 'aria-label': `Passages of ${document.name}` },
        passages.map((each) =>
          element(
            'li',
            {
              id: `passage-${each.ordinal}`,
              className: each.ordinal === passage ? 'passage passage-highlight' : 'passage',
              dataset: { passage: String(each.ordinal) },
              ...(each.ordinal === passage && { 'aria-current': 'true', tabindex: '-1' }),
            },
            (each.page !== null || each.heading) && element('p', { className: 'passage-where muted' }, [each.page !== null && `Page ${each.page}`, each.heading].filter(Boolean).join(' · ')),
            element('p', { className: 'passage-text' }, each.text),
          ),
        ),
      ),
      !target && element('p', { className: 'muted' }, `This document has no passage ${passage + 1} (it may have been indexed again since).`),
    );
    const highlighted = this.aside.querySelector('.passage-highlight');
    highlighted?.scrollIntoView({ block: 'center' });
    highlighted?.focus({ preventScroll: true });
  }

  async #showList() {
    this.#opened = undefined;
    const read = ++this.#reads;
    const owner = this.#isOwner();
    const answer = await load(this.aside, this.name, () => Promise.all([api.documents(), owner ? api.profiles() : undefined]), () => this.#showList());
    if (!answer || read !== this.#reads) return;
    const [{ documents }, profileList] = answer;
    replaceContent(
      this.aside,
      heading(this.name, () => this.#showList()),
      this.#mayAdd() ? this.#addForm() : element('p', { className: 'muted' }, 'Guests have no library.'),
      element('p', { className: 'library-problem panel-error', role: 'alert', hidden: true }),
      documents.length === 0
        ? element('p', { className: 'muted library-empty' }, 'No documents yet. Manuals, contracts, recipes and letters you add here can be searched and cited in answers.')
        : element('ul', { className: 'document-list', 'aria-label': 'Documents' }, documents.map((document) => this.#document(document))),
      owner && profileList && this.#profileSwitches(profileList.profiles),
    );
  }

  #addForm() {
    const input = element('input', { type: 'file', multiple: true, id: 'library-upload', className: 'files-upload-input', onchange: () => this.#add([...(input.files ?? [])]) });
    const child = this.me()?.role === 'child';
    return element(
      'div',
      { className: 'library-add' },
      element(
        'div',
        { className: 'files-upload' },
        input,
        element('label', { for: 'library-upload', className: 'files-upload-button' }, icon('attach'), 'Add a document'),
        element(
          'select',
          { className: 'library-choice', 'aria-label': 'Add to which library' },
          element('option', { value: 'mine' }, 'Mine'),
          !child && element('option', { value: 'household' }, 'Household'),
        ),
      ),
      element('p', { className: 'muted library-hint' }, 'or drop files here: PDF, Word (.docx), Markdown, text, HTML, e-mail (.eml)'),
    );
  }

  async #add(files) {
    const library = this.aside.querySelector('.library-choice')?.value ?? 'mine';
    for (const file of files) {
      try {
        this.#showStatus(await api.addDocument(file, library));
      } catch (error) {
        this.#problem(`${file.name}: ${error.message}`);
      }
    }
  }

  #document(document) {
    const facts = [document.pages !== null && `${document.pages} ${document.pages === 1 ? 'page' : 'pages'}`, formatBytes(document.size), document.library === 'household' && 'household'].filter(Boolean);
    const indexing = document.status === 'indexing' || document.status === 'queued';
    return element(
      'li',
      { dataset: { documentId: document.id, status: document.status } },
      element(
        'div',
        { className: 'file-text' },
        element('button', { type: 'button', className: 'link-button document-name', disabled: document.status !== 'ready', onclick: () => this.openAt(document.id, 0) }, document.name),
        element('span', { className: 'muted file-facts' }, `${facts.join(' · ')} · added `, element('time', { datetime: document.added_at, title: new Date(document.added_at).toLocaleString() }, formatTime(document.added_at))),
        element('span', { className: 'document-status', role: 'status' }, statusWords[document.status] ?? document.status, document.status === 'indexing' && document.progress !== null && ` ${Math.round(document.progress * 100)}%`),
        indexing && element('progress', { max: '1', 'aria-label': `Indexing ${document.name}`, ...(document.progress !== null && { value: String(document.progress) }) }),
        document.error && element('p', { className: 'panel-error document-error' }, document.error),
      ),
      element(
        'div',
        { className: 'fact-actions' },
        element('a', { href: api.documentFileUrl(document.id), download: document.name, className: 'icon-button', 'aria-label': `Download ${document.name}`, title: 'Download' }, icon('download')),
        this.#mayDelete(document) && element('button', { type: 'button', className: 'icon-button', 'aria-label': `Delete ${document.name}`, title: 'Delete', onclick: () => this.#confirmDelete(document) }, icon('trash')),
      ),
    );
  }

  /** A document's new state replaces its line (or joins the list), without reading the whole list again. */
  #showStatus(document) {
    if (this.#opened) return;
    const list = this.aside.querySelector('.document-list');
    const line = this.#document(document);
    const existing = list?.querySelector(`li[data-document-id="${CSS.escape(document.id)}"]`);
    if (existing) existing.replaceWith(line);
    else if (list) list.prepend(line);
    else void this.#showList();
  }

  async #confirmDelete(document) {
    this.dialog.querySelector('p').textContent = `Delete ${document.name}${document.library === 'household' ? ' from the household library' : ''}? Its passages go with it, and answers no longer find it.`;
    this.dialog.returnValue = '';
    this.dialog.showModal();
    this.dialog.querySelector('button[value="cancel"]').focus();
    await new Promise((resolve) => this.dialog.addEventListener('close', resolve, { once: true }));
    if (this.dialog.returnValue !== 'delete') return;
    try {
      await api.deleteDocument(document.id);
    } catch (error) {
      this.#problem(error.message);
      return;
    }
    this.aside.querySelector(`li[data-document-id="${CSS.escape(document.id)}"]`)?.remove();
  }

  /** The owner's switch of the documents search, per profile (PATCH /agents/profiles/:id {documents}). */
  #profileSwitches(profiles) {
    return element(
      'section',
      { className: 'library-profiles', 'aria-label': 'Profiles that search the documents' },
      element('h3', {}, 'Searched in conversations by'),
      element(
        'ul',
        {},
        profiles.map((profile) => {
          const box = element('input', { type: 'checkbox', checked: (profile.enabled_tools ?? []).includes(documentsTool) });
          box.addEventListener('change', async () => {
            box.disabled = true;
            try {
              await api.setProfileDocuments(profile.id, box.checked);
            } catch (error) {
              box.checked = !box.checked;
              this.#problem(error.message);
            }
            box.disabled = false;
          });
          return element('li', {}, element('label', { className: 'library-profile' }, box, profile.name));
        }),
      ),
    );
  }

  #problem(message) {
    const line = this.aside.querySelector('.library-problem');
    if (!line) return void this.aside.append(failure(new Error(message)));
    line.textContent = message;
    line.hidden = false;
  }

  #isOwner() {
    const me = this.me();
    return !me || me.role === 'owner';
  }

  #mayAdd() {
    return this.me()?.role !== 'guest';
  }

  #mayDelete(document) {
    const me = this.me();
    return document.library === 'mine' || !me || me.role === 'owner' || document.added_by === me.id;
  }
}
