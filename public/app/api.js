/** The REST API of docs/protocol.md, "REST API". Failures are thrown as ApiError carrying the server's code and message. */
export class ApiError extends Error {
  /** `signIn`: on a 401, the ways this server accepts (`error.sign_in`: passphrase, passkey, api_token, auth_token). */
  constructor(status, code, message, signIn = []) {
    super(message);
    this.status = status;
    this.code = code;
    this.signIn = signIn;
  }
}

/** The server's refusal as an ApiError, from its `{error:{code,message}}` body when it has one. */
function refusal(response, data) {
  const error = data?.error;
  return new ApiError(response.status, error?.code ?? 'http_error', error?.message ?? `The server answered ${response.status}.`, Array.isArray(error?.sign_in) ? error.sign_in : []);
}

async function request(method, url, body, extraHeaders = {}) {
  let response;
  try {
    response = await fetch(url, {
      method,
      credentials: 'same-origin',
      headers: { ...(body !== undefined && !(body instanceof FormData) && { 'content-type': body instanceof Blob ? body.type : 'application/json' }), ...extraHeaders },
      body: body === undefined || body instanceof FormData || body instanceof Blob ? body : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'network_error', 'The Hearth server cannot be reached.');
  }
  if (response.status === 204) return undefined;
  const text = await response.text();
  let data;
  try {
    data = text === '' ? undefined : JSON.parse(text);
  } catch {
    data = undefined;
  }
  if (!response.ok) throw refusal(response, data);
  return data;
}

/** Tries of a sentence the server refused for the person's rate (429), each after the wait it named. */
const speechTries = 3;

const pause = (seconds, signal) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, seconds * 1000);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

/**
 * `POST /speech`: the spoken text's audio as bytes. A request refused for the rate is tried again after
 * its Retry-After: sentences just dropped by Stop may still hold the person's slots for a moment.
 */
async function speechAudio(text, format, signal) {
  let response;
  for (let tried = 1; ; tried += 1) {
    try {
      response = await fetch('/speech', { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text, format }), signal });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new ApiError(0, 'network_error', 'The Hearth server cannot be reached.');
    }
    if (response.status !== 429 || tried === speechTries) break;
    await pause(Math.min(Number(response.headers.get('retry-after')) || 1, 5), signal);
  }
  if (response.ok) return response.arrayBuffer();
  const body = await response.text();
  let data;
  try {
    data = JSON.parse(body);
  } catch {
    data = undefined;
  }
  throw refusal(response, data);
}

export const api = {
  health: () => request('GET', '/health'),
  profiles: () => request('GET', '/agents/profiles'),
  tools: () => request('GET', '/agents/tools'),
  models: () => request('GET', '/models'),
  // Models of the default backend (docs/page.md, "Models"): pulling, deleting and choosing them is the owner's once people exist.
  pullModel: (name) => request('POST', '/models/pull', { name }),
  cancelPull: (name) => request('DELETE', `/models/pulls/${encodeURIComponent(name)}`),
  deleteModel: (name) => request('DELETE', `/models/${encodeURIComponent(name)}`),
  setDefaultModel: (name) => request('PUT', '/models/default', { name }),
  setProfileModel: (profileId, model) => request('PATCH', `/agents/profiles/${encodeURIComponent(profileId)}`, { model }),
  setToolEnabled: (name, enabled) => request('PUT', `/agents/tools/${encodeURIComponent(name)}/enabled`, { enabled }),
  sessions: () => request('GET', '/sessions'),
  session: (id) => request('GET', `/sessions/${encodeURIComponent(id)}`),
  context: (id) => request('GET', `/sessions/${encodeURIComponent(id)}/context`),
  createSession: (profileId) => request('POST', '/sessions', profileId ? { profile_id: profileId } : {}),
  updateSession: (id, changes) => request('PATCH', `/sessions/${encodeURIComponent(id)}`, changes),
  deleteSession: (id) => request('DELETE', `/sessions/${encodeURIComponent(id)}`),
  stop: (id) => request('POST', `/sessions/${encodeURIComponent(id)}/stop`),
  decide: (id, callId, { decision, remember }) =>
    // The audit names the page as where it was decided, not a script's REST call.
    request('POST', `/sessions/${encodeURIComponent(id)}/approvals/${encodeURIComponent(callId)}`, { decision, ...(remember && { remember }) }, { 'x-hearth-client': 'page' }),
  // No `limit`: the server answers 400 to it in a query string today (its schema wants an integer and the query is not coerced), so the newest 100.
  approvals: ({ sessionId, status = 'all' } = {}) => request('GET', `/approvals?${new URLSearchParams({ status, ...(sessionId && { session_id: sessionId }) })}`),
  files: (id) => request('GET', `/sessions/${encodeURIComponent(id)}/files`),
  /** Where a file of the session's folder downloads from; `name` is its path inside the folder. */
  fileUrl: (id, name) => `/sessions/${encodeURIComponent(id)}/files/${name.split('/').map(encodeURIComponent).join('/')}`,
  deleteFile: (id, name) => request('DELETE', api.fileUrl(id, name)),
  upload(id, file) {
    const form = new FormData();
    form.append('file', file, file.name);
    return request('POST', `/sessions/${encodeURIComponent(id)}/files`, form);
  },
  integrations: () => request('GET', '/integrations'),
  // The libraries of documents (docs/documents.md): the person's own and the household's.
  documents: () => request('GET', '/documents'),
  document: (id) => request('GET', `/documents/${encodeURIComponent(id)}`),
  passages: (id, from, count) => request('GET', `/documents/${encodeURIComponent(id)}/passages?${new URLSearchParams({ from: String(from), count: String(count) })}`),
  documentFileUrl: (id) => `/documents/${encodeURIComponent(id)}/file`,
  deleteDocument: (id) => request('DELETE', `/documents/${encodeURIComponent(id)}`),
  addDocument(file, library) {
    const form = new FormData();
    form.append('library', library);
    form.append('file', file, file.name);
    return request('POST', '/documents', form);
  },
  setProfileDocuments: (profileId, documents) => request('PATCH', `/agents/profiles/${encodeURIComponent(profileId)}`, { documents }),
  // Voice (docs/page.md, "Voice"): a recording's words, without sending them; a sentence's audio.
  transcribe: (id, recording) => request('POST', `/sessions/${encodeURIComponent(id)}/audio?send=false`, recording),
  speech: (text, { format = 'mp3', signal } = {}) => speechAudio(text, format, signal),
  memory: () => request('GET', '/memory'),
  saveFact: (fact) => request('PUT', '/memory/facts', fact),
  deleteFact: (id) => request('DELETE', `/memory/facts/${encodeURIComponent(id)}`),
  notifications: ({ unreadOnly = false, limit = 50 } = {}) => request('GET', `/notifications?${new URLSearchParams({ unread: unreadOnly ? '1' : '0', limit: String(limit) })}`),
  markNotificationRead: (id) => request('POST', `/notifications/${encodeURIComponent(id)}/read`),
  markAllNotificationsRead: () => request('POST', '/notifications/read-all'),
  schedules: () => request('GET', '/schedules'),
  createSchedule: (schedule) => request('POST', '/schedules', schedule),
  previewSchedule: (timing) => request('POST', '/schedules/preview', timing),
  updateSchedule: (id, changes) => request('PATCH', `/schedules/${encodeURIComponent(id)}`, changes),
  deleteSchedule: (id) => request('DELETE', `/schedules/${encodeURIComponent(id)}`),
  runSchedule: (id) => request('POST', `/schedules/${encodeURIComponent(id)}/run`),
  // The household (docs/people.md): signing in and out, the caller's account, the owner's people.
  signIn: (name, passphrase) => request('POST', '/auth/sign-in', { name, passphrase }),
  signOut: ({ everywhere = false } = {}) => request('POST', '/auth/sign-out', { everywhere }),
  acceptInvitation: (code, name, passphrase) => request('POST', '/auth/invitations/accept', { code, name, passphrase }),
  me: () => request('GET', '/me'),
  updateMe: (changes) => request('PATCH', '/me', changes),
  tokens: () => request('GET', '/me/tokens'),
  createToken: (name) => request('POST', '/me/tokens', { name }),
  revokeToken: (id) => request('DELETE', `/me/tokens/${encodeURIComponent(id)}`),
  telegramLinkCode: () => request('POST', '/me/telegram/link-code'),
  passkeys: () => request('GET', '/me/passkeys'),
  passkeyOptions: () => request('POST', '/me/passkeys/options'),
  addPasskey: (name, credential) => request('POST', '/me/passkeys', { name, credential }),
  removePasskey: (id) => request('DELETE', `/me/passkeys/${encodeURIComponent(id)}`),
  passkeySignInOptions: () => request('POST', '/auth/passkey/options'),
  passkeySignIn: (credential) => request('POST', '/auth/passkey', { credential }),
  people: () => request('GET', '/people'),
  updatePerson: (id, changes) => request('PATCH', `/people/${encodeURIComponent(id)}`, changes),
  removePerson: (id, sessions) => request('DELETE', `/people/${encodeURIComponent(id)}?${new URLSearchParams({ sessions })}`),
  invite: (role) => request('POST', '/people/invitations', { role }),
};
