import { api } from './api.js';
import { element, formatTime, replaceContent } from './dom.js';
import { addPasskey, passkeyFailure, passkeysPossible } from './passkeys.js';

/** A read-only field with a Copy button, for a secret or link shown once. */
export function copyField(label, value) {
  const input = element('input', { type: 'text', readonly: true, value, 'aria-label': label, className: 'copy-value' });
  const status = element('span', { className: 'muted copy-status', role: 'status' });
  const copy = async () => {
    input.select();
    try {
      await navigator.clipboard.writeText(value);
      status.textContent = 'Copied';
    } catch {
      status.textContent = 'Select it and copy it yourself';
    }
  };
  return element('div', { className: 'copy-field' }, input, element('button', { type: 'button', 'aria-label': `Copy ${label.toLowerCase()}`, onclick: copy }, 'Copy'), status);
}

/**
 * The caller's own keys to this Hearth (docs/people.md): personal API tokens for scripts (made,
 * shown once, listed, revoked), passkeys where the browser offers them, and a one-time code that
 * links their Telegram account.
 */
export class AccountSection {
  #passphrase;
  #tokens;
  #passkeys;
  #telegram;

  /** `me` is GET /me's answer. */
  constructor(me) {
    this.me = me;
    this.#passphrase = element('section', { className: 'account-passphrase', 'aria-label': 'Your passphrase' });
    this.#tokens = element('section', { className: 'account-tokens', 'aria-label': 'Personal API tokens' });
    this.#passkeys = passkeysPossible() ? element('section', { className: 'account-passkeys', 'aria-label': 'Passkeys' }) : undefined;
    this.#telegram = element('section', { className: 'account-telegram', 'aria-label': 'Telegram' });
    // A one-person owner chooses a first passphrase where inviting asks for it (the People panel).
    this.node = element('div', { className: 'account-section' }, me.has_passphrase && this.#passphrase, me.role !== 'guest' && this.#tokens, this.#passkeys, me.role !== 'guest' && this.#telegram);
    this.#drawPassphrase();
    this.#drawTelegram();
  }

  /** Reads the tokens (and passkeys) again (the section is shown). */
  async refresh() {
    if (this.#passkeys) void this.#refreshPasskeys();
    let tokens;
    try {
      tokens = await api.tokens();
    } catch (error) {
      this.#drawTokens([], undefined, error.message);
      return;
    }
    this.#drawTokens(tokens);
  }

  #drawTokens(tokens, created, problem) {
    const name = element('input', { type: 'text', 'aria-label': 'Token name', placeholder: 'What it is for', maxlength: 100, required: true });
    const create = async (event) => {
      event.preventDefault();
      try {
        const made = await api.createToken(name.value.trim());
        this.#drawTokens(await api.tokens(), made);
      } catch (error) {
        this.#drawTokens(tokens, undefined, error.message);
      }
    };
    replaceContent(
      this.#tokens,
      element('h3', {}, 'Personal API tokens'),
      element('p', { className: 'muted' }, 'For scripts and the REST API: send one as “Authorization: Bearer <token>”. It acts as you.'),
      created &&
        element(
          'div',
          { className: 'token-made', dataset: { role: 'new-token' } },
          element('p', {}, `“${created.name}” is made. It is shown this once: copy it now.`),
          copyField('New token', created.token),
        ),
      tokens.length > 0 &&
        element(
          'ul',
          { className: 'token-list' },
          tokens.map((token) =>
            element(
              'li',
              { dataset: { tokenId: token.id } },
              element('span', {}, element('strong', {}, token.name), element('span', { className: 'muted' }, ` · made ${formatTime(token.created_at)}${token.last_used_at ? ` · used ${formatTime(token.last_used_at)}` : ''}`)),
              element('button', { type: 'button', 'aria-label': `Revoke ${token.name}`, onclick: () => this.#revoke(token) }, 'Revoke'),
            ),
          ),
        ),
      problem && element('p', { className: 'panel-error', role: 'alert' }, problem),
      element('form', { className: 'token-form', onsubmit: create }, name, element('button', { type: 'submit' }, 'Create token')),
    );
  }

  async #revoke(token) {
    try {
      await api.revokeToken(token.id);
    } catch (error) {
      this.#drawTokens(await api.tokens().catch(() => []), undefined, error.message);
      return;
    }
    await this.refresh();
  }

  async #refreshPasskeys(problem) {
    let passkeys = [];
    try {
      passkeys = await api.passkeys();
    } catch (error) {
      problem ??= error.message;
    }
    const name = element('input', { type: 'text', 'aria-label': 'Passkey name', placeholder: 'This laptop, my phone…', maxlength: 100, required: true });
    const add = async (event) => {
      event.preventDefault();
      try {
        await addPasskey(name.value.trim());
      } catch (error) {
        await this.#refreshPasskeys(passkeyFailure(error));
        return;
      }
      await this.#refreshPasskeys();
    };
    const remove = async (passkey) => {
      try {
        await api.removePasskey(passkey.id);
      } catch (error) {
        await this.#refreshPasskeys(error.message);
        return;
      }
      await this.#refreshPasskeys();
    };
    replaceContent(
      this.#passkeys,
      element('h3', {}, 'Passkeys'),
      element('p', { className: 'muted' }, 'Sign in on this device without your passphrase.'),
      passkeys.length > 0 &&
        element(
          'ul',
          { className: 'token-list' },
          passkeys.map((passkey) =>
            element(
              'li',
              { dataset: { passkeyId: passkey.id } },
              element('span', {}, element('strong', {}, passkey.name), element('span', { className: 'muted' }, ` · made ${formatTime(passkey.created_at)}`)),
              element('button', { type: 'button', 'aria-label': `Remove passkey ${passkey.name}`, onclick: () => remove(passkey) }, 'Remove'),
            ),
          ),
        ),
      problem && element('p', { className: 'panel-error', role: 'alert' }, problem),
      element('form', { className: 'token-form', onsubmit: add }, name, element('button', { type: 'submit' }, 'Add a passkey')),
    );
  }

  #drawPassphrase(said) {
    const current = element('input', { type: 'password', 'aria-label': 'Current passphrase', autocomplete: 'current-password', required: true });
    const chosen = element('input', { type: 'password', 'aria-label': 'New passphrase', autocomplete: 'new-password', minlength: 8, maxlength: 1024, required: true });
    const change = async (event) => {
      event.preventDefault();
      try {
        await api.updateMe({ passphrase: chosen.value, current_passphrase: current.value });
      } catch (error) {
        this.#drawPassphrase({ problem: error.message });
        return;
      }
      this.#drawPassphrase({ done: 'Changed. Your other sign-ins ended; this page stays signed in.' });
    };
    replaceContent(
      this.#passphrase,
      element('h3', {}, 'Passphrase'),
      said?.done && element('p', { role: 'status' }, said.done),
      said?.problem && element('p', { className: 'panel-error', role: 'alert' }, said.problem),
      element('form', { className: 'passphrase-form', onsubmit: change }, current, chosen, element('button', { type: 'submit' }, 'Change passphrase')),
    );
  }

  #drawTelegram(code, problem) {
    const ask = async () => {
      try {
        this.#drawTelegram(await api.telegramLinkCode());
      } catch (error) {
        this.#drawTelegram(undefined, error.message);
      }
    };
    replaceContent(
      this.#telegram,
      element('h3', {}, 'Telegram'),
      code
        ? [
            element('p', {}, `Send this to Hearth’s bot on Telegram before ${new Date(code.expires_at).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })}; it works once.`),
            copyField('Telegram link command', `/start ${code.code}`),
          ]
        : element('p', { className: 'muted' }, 'Link your Telegram account to reach your sessions from the bot.'),
      problem && element('p', { className: 'panel-error', role: 'alert' }, problem),
      element('button', { type: 'button', onclick: ask }, code ? 'Get another code' : 'Get a link code'),
    );
  }
}
