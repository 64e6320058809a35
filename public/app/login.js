import { ApiError, api } from './api.js';
import { passkeyFailure, passkeysPossible, signInWithPasskey } from './passkeys.js';

function storeToken(token) {
  const secure = location.protocol === 'https:' ? '; Secure' : '';
  document.cookie = `token=${encodeURIComponent(token)}; path=/; SameSite=Strict; max-age=31536000${secure}`;
}

/** Forgets the AUTH_TOKEN this page kept, so signing out of it asks again. */
export function forgetToken() {
  document.cookie = 'token=; path=/; SameSite=Strict; max-age=0';
}

/**
 * Which way the server asks for first, from its 401's `sign_in`: a household signs in with a name
 * and passphrase; a one-person Hearth with AUTH_TOKEN asks for the token, as it always did.
 */
function firstWay(refusal) {
  const ways = refusal?.signIn ?? [];
  return ways.includes('auth_token') && !ways.includes('passphrase') ? 'token' : 'passphrase';
}

/**
 * The sign-in screen: a name and passphrase (the cookie it sets is HttpOnly: the page never holds
 * it), or the AUTH_TOKEN, kept in the `token` cookie the server reads on every request and on the
 * WebSocket upgrade. `refusal` is the 401 that brought the screen up. Resolves once the server
 * accepts who the page says it is.
 */
export function signIn(form, refusal) {
  const ways = { passphrase: form.querySelector('.passphrase-way'), token: form.querySelector('.token-way') };
  const tokenInput = ways.token.querySelector('input');
  const nameInput = ways.passphrase.querySelector('input[name=name]');
  const passphraseInput = ways.passphrase.querySelector('input[name=passphrase]');
  const switchWay = form.querySelector('.switch-way');
  const usePasskey = form.querySelector('.use-passkey');
  const submitButton = form.querySelector('button[type=submit]');
  const errorLine = form.querySelector('.login-error');
  let way;
  const show = (wanted) => {
    way = wanted;
    for (const [name, fieldset] of Object.entries(ways)) {
      fieldset.hidden = name !== way;
      fieldset.disabled = name !== way;
    }
    switchWay.textContent = way === 'token' ? 'Use a name and passphrase instead' : 'Use the access token instead';
    errorLine.hidden = true;
    (way === 'token' ? tokenInput : nameInput.value ? passphraseInput : nameInput).focus();
  };
  form.hidden = false;
  show(firstWay(refusal));
  usePasskey.hidden = !passkeysPossible();
  return new Promise((resolve) => {
    const toggle = () => show(way === 'token' ? 'passphrase' : 'token');
    const fail = (message, input) => {
      errorLine.textContent = message;
      errorLine.hidden = false;
      input.select();
    };
    const submit = async (event) => {
      event.preventDefault();
      submitButton.disabled = true;
      try {
        if (way === 'token') {
          storeToken(tokenInput.value.trim());
          await api.health();
        } else {
          await api.signIn(nameInput.value.trim(), passphraseInput.value);
        }
      } catch (error) {
        if (way === 'token') fail(error instanceof ApiError && error.status === 401 ? 'That token was not accepted.' : error.message, tokenInput);
        else fail(error.message, passphraseInput);
        return;
      } finally {
        submitButton.disabled = false;
      }
      done();
    };
    const passkey = async () => {
      usePasskey.disabled = true;
      try {
        await signInWithPasskey();
      } catch (error) {
        errorLine.textContent = passkeyFailure(error);
        errorLine.hidden = false;
        return;
      } finally {
        usePasskey.disabled = false;
      }
      done();
    };
    const done = () => {
      form.removeEventListener('submit', submit);
      switchWay.removeEventListener('click', toggle);
      usePasskey.removeEventListener('click', passkey);
      form.hidden = true;
      tokenInput.value = '';
      passphraseInput.value = '';
      resolve();
    };
    form.addEventListener('submit', submit);
    switchWay.addEventListener('click', toggle);
    usePasskey.addEventListener('click', passkey);
  });
}
