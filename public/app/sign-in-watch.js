import { ApiError, api } from './api.js';
import { signIn } from './login.js';

/**
 * A socket that drops looks the same whether the network went or what the page was opened with
 * ended (AUTH_TOKEN changed, the sign-in was ended): the server says which, and the person signs in
 * again where they were.
 */
export class SignInWatch {
  #parts;
  #signingIn;

  /**
   * @param {object} parts
   * @param {HTMLElement} parts.form the sign-in form's place
   * @param {() => void} parts.reconnect reopens the page's sockets
   * @param {() => void} parts.leave lets the open session go and hides the page while the person signs in
   * @param {() => Promise<void>} parts.resume shows the page again, where the person was
   */
  constructor(parts) {
    this.#parts = parts;
  }

  /** After a drop: asks again only if the server refuses the page's token. */
  checkToken() {
    api.health().catch((error) => this.#signInAgainIfRefused(error));
  }

  /**
   * The sockets were closed because what they were opened with ended: sign in again, or reopen them
   * when the page still is someone (its own new passphrase gave it a fresh cookie; a new role).
   */
  recheck() {
    api.health().then(
      () => this.#parts.reconnect(),
      (error) => this.#signInAgainIfRefused(error),
    );
  }

  #signInAgainIfRefused(error) {
    if (!(error instanceof ApiError && error.status === 401)) return;
    this.#signingIn ??= (async () => {
      this.#parts.leave();
      await signIn(this.#parts.form, error);
      await this.#parts.resume();
    })().finally(() => (this.#signingIn = undefined));
  }
}
