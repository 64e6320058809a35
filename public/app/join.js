import { api } from './api.js';

const invitationPrefix = '#invitation=';

/** The invitation code in the page's address (`/#invitation=<code>`, the link the owner copied), if any. */
export function invitationCode() {
  if (!location.hash.startsWith(invitationPrefix)) return undefined;
  const code = decodeURIComponent(location.hash.slice(invitationPrefix.length));
  return code === '' ? undefined : code;
}

/**
 * The "join" form an invitation link opens: the newcomer chooses their name and passphrase, the
 * server accepts the code once and signs them in (its cookie). Resolves once joined; the code
 * leaves the address so a reload or a shared screen does not show it.
 */
export function join(form, code) {
  const nameInput = form.querySelector('input[name=name]');
  const passphraseInput = form.querySelector('input[name=passphrase]');
  const submitButton = form.querySelector('button[type=submit]');
  const errorLine = form.querySelector('.login-error');
  form.hidden = false;
  nameInput.focus();
  return new Promise((resolve) => {
    const submit = async (event) => {
      event.preventDefault();
      submitButton.disabled = true;
      errorLine.hidden = true;
      try {
        await api.acceptInvitation(code, nameInput.value.trim(), passphraseInput.value);
      } catch (error) {
        errorLine.textContent = error.message;
        errorLine.hidden = false;
        submitButton.disabled = false;
        return;
      }
      form.removeEventListener('submit', submit);
      form.hidden = true;
      passphraseInput.value = '';
      history.replaceState(null, '', `${location.pathname}${location.search}`);
      resolve();
    };
    form.addEventListener('submit', submit);
    // A code already used, or someone who already belongs here: the page starts again without it.
    form.querySelector('.skip-join').addEventListener('click', () => location.replace(location.pathname));
  });
}
