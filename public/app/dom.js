/**
 * Builds an element: `element('button', { 'aria-label': 'Send', onclick }, 'Send')`.
 * Attributes starting with "on" become listeners; `dataset` and `className` are set as properties;
 * `false`, `null` and `undefined` attributes are left out. Children may be strings, nodes or arrays.
 */
export function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith('on') && typeof value === 'function') node.addEventListener(name.slice(2), value);
    else if (name === 'dataset') Object.assign(node.dataset, value);
    else if (name === 'className') node.className = value;
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  append(node, children);
  return node;
}

/** Replaces a node's children, taking children the way `element` does. */
export function replaceContent(node, ...children) {
  node.replaceChildren();
  append(node, children);
}

function append(node, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else node.append(child);
  }
}

/** Text whose `backticked` parts become <code> elements; everything stays text, nothing is parsed as HTML. */
export function withInlineCode(text) {
  return String(text)
    .split(/`([^`\n]+)`/)
    .map((part, index) => (index % 2 === 1 ? element('code', {}, part) : part))
    .filter((part) => part !== '');
}

/** A <details> block with a summary line; `open` decides whether it starts unfolded. */
export function foldable(summary, content, { open = false, className } = {}) {
  return element('details', { className, open }, element('summary', {}, summary), content);
}

/** A session's title as the page shows it: the sidebar and the header must agree on an untitled one. */
export function displayTitle(title) {
  return title || 'New conversation';
}

export function formatTime(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const today = new Date();
  return date.toDateString() === today.toDateString()
    ? date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })
    : date.toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
}

export function formatBytes(size) {
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KB`;
  return `${(size / 1024 / 1024).toFixed(1)} MB`;
}
