import { element, foldable } from './dom.js';

/** The answer's text as written (Markdown), by its node: what Copy puts on the clipboard. */
const answerTexts = new WeakMap();

/** Copy under an answer; `text()` is read when clicked, so a streamed answer copies all of itself. */
export function answerActions(node, text) {
  answerTexts.set(node, text);
  return element('div', { className: 'message-actions' }, element('button', { type: 'button', className: 'copy-answer', 'aria-label': 'Copy answer' }, 'Copy'));
}

/** Edit under the person's message. */
export function userActions() {
  return element('div', { className: 'message-actions' }, element('button', { type: 'button', className: 'edit-message', 'aria-label': 'Edit message' }, 'Edit'));
}

export function regenerateButton() {
  return element('button', { type: 'button', className: 'regenerate-answer', 'aria-label': 'Regenerate answer' }, 'Regenerate');
}

export async function copyAnswer(button) {
  const text = answerTexts.get(button.closest('.item.assistant'))?.() ?? '';
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = 'Copied';
  } catch {
    button.textContent = 'Copy failed';
  }
  setTimeout(() => (button.textContent = 'Copy'), 1500);
}

/**
 * Turns the person's message into a form: `onSubmit(text)` resolves true once the edit was sent
 * (the transcript is then drawn again from the server), false to keep the form open.
 */
export function openEditor(item, onSubmit) {
  if (item.querySelector('.edit-form')) return;
  const textNode = item.querySelector('.user-text');
  const field = element('textarea', { className: 'edit-text', 'aria-label': 'Edited message', rows: 3 });
  field.value = textNode.textContent;
  const close = () => {
    form.remove();
    item.classList.remove('editing');
  };
  const form = element(
    'form',
    { className: 'edit-form' },
    field,
    element(
      'div',
      { className: 'edit-buttons' },
      element('button', { type: 'button', className: 'cancel-edit', onclick: close }, 'Cancel'),
      element('button', { type: 'submit', className: 'primary send-edit' }, 'Save and resend'),
    ),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const text = field.value.trim();
    if (text === '') return;
    if (await onSubmit(text)) close();
  });
  item.classList.add('editing');
  textNode.after(form);
  field.focus();
}

/** Superseded entries (an edit or regenerate replaced them) are kept, folded, where they were. */
export function previousVersion(nodes) {
  const count = nodes.length;
  return foldable(`Previous version (${count} ${count === 1 ? 'item' : 'items'})`, element('div', { className: 'previous-version-items' }, nodes), {
    className: 'item previous-version',
  });
}

export function profileMarker(profileName) {
  return element('p', { className: 'item notice profile-marker', dataset: { role: 'profile-switch' } }, `Switched to the ${profileName} profile`);
}
