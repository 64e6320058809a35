import { ApiError, api } from './api.js';
import { signIn } from './login.js';

/**
 * A socket that drops looks the same whether the network went or what the page was opened with
 * ended (AUTH_TOKEN changed, the sign-in was ended): the server says which, and the person signs in
 * again where they were.
 */
export class SignInWatch {
  #signingIn;

  /**
   * @param {object} parts
   * @param {HTMLElement} parts.form the sign-in form's place
   * @param {() => void} parts.reconnect reopens the page's sockets
   * @param {() => void} parts.leave lets the open session go and hides the page while the person signs in
   * @param {() => Promise<void>} parts.resume shows the page again, where the person was
   */
  constructor({ form, reconnect, leave, resume }) {
    this.form = form;
    this.reconnect = reconnect;
    this.leave = leave;
    this.resume = resume;
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
      () => this.reconnect(),
      (error) => this.#signInAgainIfRefused(error),
    );
  }

  #signInAgainIfRefused(error) {
    if (!(error instanceof ApiError && error.status === 401)) return;
    this.#signingIn ??= (async () => {
      this.leave();
      await signIn(this.form, error);
      await this.resume();
    })().finally(() => (this.#signingIn = undefined));
  }
}
