import { ApiError, api } from './api.js';

function storeToken(token) {
  const secure = location.protocol === 'https:' ? '; Secure' : '';
  document.cookie = `token=${encodeURIComponent(token)}; path=/; SameSite=Strict; max-age=31536000${secure}`;
}

/**
 * Asks for AUTH_TOKEN and keeps it in the `token` cookie, which the server reads on every request
 * and on the WebSocket upgrade. Resolves once the server accepts it.
 */
export function signIn(form) {
  const input = form.querySelector('input[type=password]');
  const errorLine = form.querySelector('.login-error');
  errorLine.hidden = true;
  form.hidden = false;
  input.focus();
  return new Promise((resolve) => {
    const submit = async (event) => {
      event.preventDefault();
      storeToken(input.value.trim());
      try {
        await api.health();
      } catch (error) {
        errorLine.textContent = error instanceof ApiError && error.status === 401 ? 'That token was not accepted.' : error.message;
        errorLine.hidden = false;
        input.select();
        return;
      }
      form.removeEventListener('submit', submit);
      form.hidden = true;
      input.value = '';
      resolve();
    };
    form.addEventListener('submit', submit);
  });
}
