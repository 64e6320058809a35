import { api } from './api.js';

/**
 * Passkeys (WebAuthn; docs/people.md): browsers offer them only to a page over HTTPS or on
 * `localhost`, and the page needs the browser's JSON helpers for WebAuthn's options and answers.
 */
export function passkeysPossible() {
  const credential = window.PublicKeyCredential;
  return (
    typeof credential?.parseCreationOptionsFromJSON === 'function' &&
    typeof credential.parseRequestOptionsFromJSON === 'function' &&
    window.isSecureContext &&
    (location.protocol === 'https:' || location.hostname === 'localhost')
  );
}

/** Signs in with a passkey this browser or device holds; the server sets the sign-in cookie. */
export async function signInWithPasskey() {
  const options = await api.passkeySignInOptions();
  const credential = await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options) });
  return api.passkeySignIn(credential.toJSON());
}

/** Makes a passkey for the signed-in person on this browser or device, named `name` in their list. */
export async function addPasskey(name) {
  const options = await api.passkeyOptions();
  const credential = await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options) });
  return api.addPasskey(name, credential.toJSON());
}

/** The browser's refusal (the person cancelled, no passkey here) in words. */
export function passkeyFailure(error) {
  if (error?.name === 'NotAllowedError') return 'No passkey was used: it was cancelled, or none is kept here for this Hearth.';
  return error?.message ?? String(error);
}
