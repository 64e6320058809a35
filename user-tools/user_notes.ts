// A user tool: personal notes that persist, kept in the tool's own key-value store (ctx.kv).
// See _template.ts for the shape every tool module has.

export const name = 'user_notes';

export const description = 'Personal notes that persist: add (with tags), list, search text and tags, delete by id.';

export const parameters = {
  type: 'object',
  properties: {
    action: { type: 'string', enum: ['add', 'list', 'search', 'delete'] },
    text: { type: 'string', description: 'add: the note' },
    tags: { type: 'array', items: { type: 'string' }, description: 'add: optional tags' },
    query: { type: 'string', description: 'search: words' },
    id: { type: 'integer', description: 'delete: the note id' },
  },
  required: ['action'],
  additionalProperties: false,
};

interface Params {
  action: 'add' | 'list' | 'search' | 'delete';
  text?: string;
  tags?: string[];
  query?: string;
  id?: number;
}

/** What the host passes as `ctx` (only what this tool uses). */
interface Context {
  kv: {
    get(key: string): Promise<unknown>;
    set(key: string, value: unknown): Promise<void>;
    delete(key: string): Promise<boolean>;
    list(prefix?: string): Promise<string[]>;
  };
}

interface Note {
  id: number;
  text: string;
  tags: string[];
  /** ISO 8601 */
  created: string;
}

type Kv = Context['kv'];

/** Notes shown at most by list and search. */
const shownAtMost = 50;

// Calls run concurrently in the host: one at a time here, so two adds never take the same id.
let queue: Promise<unknown> = Promise.resolve();

export function execute(params: Params, ctx: Context) {
  const run = queue.then(() => perform(params, ctx.kv));
  queue = run.catch(() => undefined);
  return run;
}

async function perform(params: Params, kv: Kv) {
  switch (params.action) {
    case 'add':
      return add(kv, params.text, params.tags);
    case 'list':
      return show(await allNotes(kv), 'You have no notes yet. Add one with {"action": "add", "text": "…"}.', 'notes');
    case 'search':
      return search(kv, params.query);
    case 'delete':
      return remove(kv, params.id);
    default:
      return failure(`Unknown action "${String(params.action)}": use add, list, search or delete.`);
  }
}

async function add(kv: Kv, text: string | undefined, tags: string[] | undefined) {
  const body = text?.trim() ?? '';
  if (body === '') return failure('add needs "text": the note to save.');
  const cleanTags = [...new Set((tags ?? []).map((tag) => tag.trim().toLowerCase()).filter((tag) => tag !== ''))];
  const id = ((await kv.get('next_id')) as number | undefined) ?? 1;
  const note: Note = { id, text: body, tags: cleanTags, created: new Date().toISOString() };
  await kv.set(keyOf(id), note);
  await kv.set('next_id', id + 1);
  return `Saved note #${id}${cleanTags.length > 0 ? ` (tags: ${cleanTags.join(', ')})` : ''} on ${dateOf(note)}.`;
}

async function search(kv: Kv, query: string | undefined) {
  const words = (query ?? '').toLowerCase().split(/\s+/).filter((word) => word !== '');
  if (words.length === 0) return failure('search needs "query": one or more words to look for in the notes and their tags.');
  const notes = await allNotes(kv);
  const haystack = (note: Note) => `${note.text}\n${note.tags.join(' ')}`.toLowerCase();
  const found = notes.filter((note) => words.every((word) => haystack(note).includes(word)));
  const none = `No note matches "${query}"${notes.length > 0 ? ` (${notes.length} notes in all; list shows them)` : ' (there are no notes yet)'}.`;
  return show(found, none, `notes match "${query}"`);
}

async function remove(kv: Kv, id: number | undefined) {
  if (id === undefined) return failure('delete needs "id": the number shown as #id by list or search.');
  const note = (await kv.get(keyOf(id))) as Note | undefined;
  if (!note) return failure(`There is no note #${id}. Use list or search to find the right id.`);
  await kv.delete(keyOf(id));
  return `Deleted note #${id}: ${note.text}`;
}

function show(notes: Note[], whenEmpty: string, what: string) {
  if (notes.length === 0) return whenEmpty;
  const shown = notes.slice(-shownAtMost);
  const header = notes.length > shown.length ? `${notes.length} ${what}; the ${shown.length} newest:` : `${notes.length} ${what}:`;
  return [header, ...shown.map(line)].join('\n');
}

function line(note: Note): string {
  return `#${note.id} [${dateOf(note)}] ${note.text}${note.tags.length > 0 ? ` (tags: ${note.tags.join(', ')})` : ''}`;
}

async function allNotes(kv: Kv): Promise<Note[]> {
  const keys = await kv.list('note:');
  const notes = await Promise.all(keys.map((key) => kv.get(key) as Promise<Note | undefined>));
  return notes.filter((note): note is Note => note !== undefined).sort((first, second) => first.id - second.id);
}

/** Zero-padded, so the keys sort in the order the notes were added. */
function keyOf(id: number): string {
  return `note:${String(id).padStart(8, '0')}`;
}

function dateOf(note: Note): string {
  return note.created.slice(0, 16).replace('T', ' ') + ' UTC';
}

function failure(output: string) {
  return { output, success: false };
}
