import { ApiError, api } from './api.js';
import { setApprovalViewer } from './approval-card.js';
import { AsksForYou } from './asks-for-you.js';
import { Composer } from './composer.js';
import { ContextPanel } from './context-panel.js';
import { FilesPanel } from './files-panel.js';
import { debounce } from './debounce.js';
import { element } from './dom.js';
import { emptyState } from './empty-state.js';
import { SessionHeader } from './header.js';
import { HearthEvents } from './hearth-events.js';
import { fillIconPlaceholders } from './icons.js';
import { IntegrationsPanel } from './integrations-panel.js';
import { invitationCode, join } from './join.js';
import { JailStatusView } from './jail-status.js';
import { citationTarget, LibraryPanel } from './library-panel.js';
import { lastUsedProfile, rememberProfile } from './last-profile.js';
import { MissingModel } from './missing-model.js';
import { ModelPicker } from './model-picker.js';
import { ModelPulls } from './model-pulls.js';
import { ModelsPanel } from './models-panel.js';
import { signIn } from './login.js';
import { MemoryPanel } from './memory-panel.js';
import { NotificationBell } from './notification-bell.js';
import { outgoingMessage } from './outgoing-message.js';
import { PanelSwitcher } from './panel-switcher.js';
import { PeoplePanel } from './people-panel.js';
import { PersonMenu } from './person-menu.js';
import { PullOffer } from './pull-offer.js';
import { SchedulesPanel } from './schedules-panel.js';
import { showSharing as showSharingMark } from './session-sharing.js';
import { SessionView } from './session-view.js';
import { SignInWatch } from './sign-in-watch.js';
import { Sidebar } from './sidebar.js';
import { ToolsPanel } from './tools-panel.js';
import { Transcript } from './transcript.js';
import { VoiceControls } from './voice-controls.js';

const byId = (id) => document.getElementById(id);
fillIconPlaceholders();
const toolsRefreshDelayMs = 150;

const layout = byId('app');
const drawerBackdrop = document.querySelector('.drawer-backdrop');
const banner = byId('connection-banner');
let profiles = [];
let view;
let hearthEvents;
/** Who uses the page (GET /me), and whether anyone else lives here: a one-person Hearth looks as it always did. */
let me;
let householdOfMany = false;
let listedSessions = [];
let pendingApprovals = [];
/** The session *New session* is creating; a message sent meanwhile waits for it and goes there. */
let creating;

const profileName = (id) => profiles.find((profile) => profile.id === id)?.name ?? id;
/** Pulling, deleting and choosing models is the owner's once people exist (alone, the page's one person is the owner). */
const mayManageModels = () => !me || me.role === 'owner';
const modelPulls = new ModelPulls(byId('model-pulls'), { mayControl: mayManageModels });
const pullOffer = new PullOffer({ pulls: modelPulls, mayPull: mayManageModels });
const missingModel = new MissingModel(pullOffer);
const transcript = new Transcript(byId('transcript'), {
  decide: (callId, choice) => decide(callId, choice),
  regenerate: async () => view?.regenerate() ?? false,
  edit: async (edited) => (await view?.edit(edited)) ?? false,
});
const header = new SessionHeader({
  title: byId('session-title'),
  profile: byId('session-profile'),
  meter: byId('context-meter'),
  share: byId('context-share'),
  onProfileChange: (profileId) => switchProfile(profileId),
  pullOffer: () => pullOffer.place('banner'),
  onBackendShown: (line) => missingModel.shown(line),
});
const modelPicker = new ModelPicker(byId('session-profile'), { onModel: (model) => header.show({ model }) });
const jailStatus = new JailStatusView(document.querySelector('.session-header'));
const notificationBell = new NotificationBell({
  button: byId('notification-bell'),
  count: byId('notification-count'),
  popover: byId('notification-popover'),
  openSession: (sessionId) => showSession(sessionId),
});
const libraryPanel = new LibraryPanel(byId('library-panel'), { me: () => me, dialog: byId('document-delete-dialog') });
/** The side panels, in the order of their header buttons; a new panel is added here (and its button and aside in index.html). */
const panels = new PanelSwitcher({
  buttons: [...document.querySelectorAll('.panel-toggle'), byId('people-toggle'), byId('library-toggle')],
  panels: [
    new ContextPanel(byId('context-panel'), { sessionId: () => view?.sessionId }),
    new FilesPanel(byId('files-panel'), { sessionId: () => view?.sessionId }),
    new ToolsPanel(byId('tools-panel'), { profileId: () => header.profile.value }),
    new ModelsPanel(byId('models-panel'), { pulls: modelPulls, mayManage: mayManageModels }),
    new MemoryPanel(byId('memory-panel'), { role: () => me?.role }),
    new IntegrationsPanel(byId('integrations-panel')),
    new SchedulesPanel(byId('schedules-panel'), { openSession: (sessionId) => showSession(sessionId) }),
    new PeoplePanel(byId('people-panel'), { me: () => me, dialog: byId('remove-person-dialog'), onChanged: () => loadMe() }),
    libraryPanel,
  ],
});
const personMenu = new PersonMenu({ anchor: document.querySelector('.person-anchor'), button: byId('person-button'), drawerButton: byId('sidebar-person'), popover: byId('person-menu') });
const asksForYou = new AsksForYou(byId('asks-for-you'));

const sidebar = new Sidebar({
  list: byId('session-list'),
  empty: byId('session-list-empty'),
  filter: byId('session-filter'),
  dialog: byId('delete-dialog'),
  openButton: document.querySelector('.open-drawer'),
  profileName,
  sharingLabel: (session) => (!session.shared ? '' : session.owner && session.owner.id !== me?.id ? `${session.owner.name}’s, shared` : 'Shared'),
  isOwn: (session) => !me || !session.owner || session.owner.id === me.id,
  mayShare: () => householdOfMany,
  onDeleted: (id) => {
    if (view?.sessionId === id) location.hash = '';
  },
  onError: (message) => composer.showError(message),
  onRefreshed: (sessions) => {
    listedSessions = sessions;
    const current = sessions.find((session) => session.session_id === view?.sessionId);
    if (current) header.show({ title: current.title });
    showSharing();
  },
});
const composer = new Composer(byId('composer'), {
  onSend: (message) => send(message),
  onStop: () => {
    view?.stop();
    voice.silence();
  },
  dropZone: document.querySelector('main'),
});
const voice = new VoiceControls({
  transcribe: async (recording) => api.transcribe((await sessionForInput()).sessionId, recording),
  takeWords: (words, sendAtOnce) => takeSpokenWords(words, sendAtOnce),
  showError: (message) => composer.showError(message),
});

/** The session a message goes to: the open one, else the one being created, else a new one; once its socket is in sync. */
async function sessionForInput(profileId) {
  const target = creating ? await creating : (view ?? (await newSession(profileId)));
  await target.ready;
  return target;
}

/** What the person said: sent as their message, or put in the box to edit (also when an answer is still running). */
async function takeSpokenWords(words, sendAtOnce) {
  if (sendAtOnce && !view?.running) {
    const sent = await send({ content: words, attachments: [] });
    if (sent) return;
  }
  composer.insertText(words);
}

/** On a phone the session list is a drawer over the conversation. */
function setDrawer(open) {
  layout.classList.toggle('drawer-open', open);
  drawerBackdrop.hidden = !open;
}

/** The person's answer to a waiting tool call of the open session (its card is only ever in that session's transcript). */
function decide(callId, choice) {
  if (!view) return Promise.reject(new Error('No session is open.'));
  return api.decide(view.sessionId, callId, choice);
}

/** The tool set or a profile changed: the Tools panel and the profile lists follow (several changes at once cost one read). */
const toolsChanged = debounce(async () => {
  panels.notify({ type: 'tools_changed' });
  await loadProfiles();
  sidebar.render();
}, toolsRefreshDelayMs);

/** The open session was deleted elsewhere (another tab, the API). */
function showSessionGone(openedView) {
  openedView.close();
  onViewChange(openedView, { connection: 'gone' });
}

/** `/ws/events`: approvals waiting anywhere, the session list and the tool set stay live without polling. */
function listenToHearth() {
  hearthEvents ??= new HearthEvents({
    onApprovals: (pending) => {
      pendingApprovals = pending;
      sidebar.setPendingApprovals(pending);
      asksForYou.show(me ? pending : [], me);
    },
    onSessionsChanged: ({ session_id: sessionId, change }) => {
      if (change === 'deleted' && view?.sessionId === sessionId && !sidebar.isDeleting(sessionId)) showSessionGone(view);
      sidebar.refreshSoon();
    },
    onToolsChanged: () => toolsChanged(),
    onBackendStatus: (status) => header.showBackend(status),
    onIntegrationStatus: (integration) => {
      panels.notify({ type: 'integration_status', integration });
      voice.showStatus(integration);
    },
    onUnreadNotifications: (count) => notificationBell.setUnread(count),
    onNotification: (notification) => {
      notificationBell.receive(notification);
      panels.notify({ type: 'notification' });
    },
    onProfilesChanged: () => toolsChanged(),
    onModelPulls: (pulls) => modelPulls.reset(pulls),
    onModelPull: (pull) => modelPulls.receive(pull),
    onModelsChanged: () => {
      panels.notify({ type: 'models_changed' });
      void modelPicker.refresh();
      missingModel.modelsChanged();
    },
    onModelLoading: (event) => {
      header.showModelLoading(event);
      // The transcript's working line says so while the model it waits for loads.
      if (event.state === 'loading' && event.name === header.backend.model) byId('transcript').dataset.modelLoading = 'true';
      else if (event.state !== 'loading') delete byId('transcript').dataset.modelLoading;
    },
    onDocumentStatus: (document) => panels.notify({ type: 'document_status', document }),
    onDocumentDeleted: (id) => panels.notify({ type: 'document_deleted', id }),
    onReconnected: () => {
      sidebar.refreshSoon();
      toolsChanged();
      panels.notify({ type: 'reconnected' });
    },
    onStatus: (status) => {
      // With a session open its own socket reports the drop (and checks the token); without one, this socket does.
      if (status === 'disconnected' && !view) signInWatch.checkToken();
      else if (status === 'signed-out' && !view) signInWatch.recheck();
    },
  });
}

/** The open session's sharing under its title, from the session list; someone else's shared session keeps its profile and model. */
function showSharing() {
  const current = view && listedSessions.find((session) => session.session_id === view.sessionId);
  showSharingMark(byId('session-shared'), current, me);
  if (view) showEditable(view);
}

/** The profile and model can be switched between runs, by the session's own person. */
function showEditable(openedView) {
  const current = listedSessions.find((session) => session.session_id === openedView.sessionId);
  const own = !me || !current?.owner || current.owner.id === me.id;
  const editable = own && openedView.synced && !openedView.running;
  header.show({ editable });
  modelPicker.setEditable(editable);
}

/** Who uses the page; the owner also learns whether they are alone (the People entry and the account menu follow). */
async function loadMe() {
  try {
    me = await api.me();
  } catch {
    me = undefined;
    return;
  }
  setApprovalViewer(me);
  pullOffer.refresh();
  householdOfMany = me.role !== 'owner' || (await api.people().catch(() => [me])).length > 1;
  byId('people-toggle').hidden = me.role !== 'owner';
  personMenu.show(me, householdOfMany || me.via === 'sign_in' || me.via === 'api_token');
  asksForYou.show(pendingApprovals, me);
  sidebar.render();
  showSharing();
}

/** The open session's socket and the events socket, reopened now rather than at their next retry. */
function reconnectSockets() {
  view?.reconnectNow();
  hearthEvents?.retryNow();
}

/** Asked again after the server's AUTH_TOKEN changed or the sign-in ended under an open page, then back where the person was. */
const signInWatch = new SignInWatch({
  form: byId('login'),
  reconnect: reconnectSockets,
  leave: () => {
    view?.close();
    view = undefined;
    layout.hidden = true;
    banner.hidden = true;
  },
  resume: async () => {
    layout.hidden = false;
    await loadChrome();
    route();
    hearthEvents?.retryNow();
  },
});

/** Opens a session through the address, as the sidebar's links do. */
function showSession(sessionId) {
  location.hash = encodeURIComponent(sessionId);
}

function showConnection(status) {
  if (status === 'open') banner.hidden = true;
  else if (status === 'disconnected') {
    banner.replaceChildren('Disconnected from Hearth — reconnecting… ', element('button', { type: 'button', onclick: () => view?.reconnectNow() }, 'Retry now'));
    banner.hidden = false;
    signInWatch.checkToken();
  } else if (status === 'signed-out') signInWatch.recheck();
}

function onViewChange(openedView, change) {
  if (openedView !== view) return;
  if (change.connection) showConnection(change.connection);
  if (change.connection === 'gone') {
    transcript.clear('This session no longer exists.');
    composer.setState({ running: false, canSend: false });
    sidebar.refresh();
    return;
  }
  header.show(change);
  if (change.profileId !== undefined) panels.notify({ type: 'profile_changed' });
  if (change.running !== undefined || change.synced !== undefined || change.connection !== undefined) {
    composer.setState({ running: openedView.running, canSend: openedView.acceptsMessages });
    showEditable(openedView);
  }
  if (change.running !== undefined) sidebar.refreshSoon();
}

function onViewEvent(openedView, event) {
  if (event.type === 'tools_changed') toolsChanged();
  if (openedView !== view) return;
  voice.onEvent(event);
  if (event.type === 'profile_switched') sidebar.refreshSoon();
  if (event.type === 'context_compressed' || event.type === 'stream_stopped') showContextMeter(openedView.sessionId);
  if (event.type === 'stream_end' || event.type === 'context_compressed') panels.notify({ type: 'context_changed' });
}

/**
 * The header's profile select, the page's one profile choice: it switches the open session (the
 * server marks it in the transcript), or with none open chooses the profile the first message
 * starts a session with. Either way it becomes the last used profile, which *New session* starts with.
 */
async function switchProfile(profileId) {
  if (view) {
    try {
      await api.updateSession(view.sessionId, { profile_id: profileId });
    } catch (error) {
      composer.showError(`Could not switch the profile: ${error.message}`);
      return false;
    }
    sidebar.refresh();
  }
  rememberProfile(profileId);
  panels.notify({ type: 'profile_changed' });
  return true;
}

async function showContextMeter(sessionId) {
  try {
    const context = await api.context(sessionId);
    if (view?.sessionId === sessionId) header.show({ context: { used: context.context_tokens, max: context.max_context_tokens } });
  } catch {
    // The meter stays empty; the transcript shows what matters.
  }
}

function openSession(sessionId) {
  if (view?.sessionId === sessionId) return view;
  voice.silence();
  view?.close();
  view = undefined;
  setDrawer(false);
  sidebar.setCurrent(sessionId);
  void modelPicker.open(sessionId);
  if (!sessionId) {
    transcript.clear(profileCards());
    showSharing();
    header.show({ title: '', profileId: lastUsedProfile(profiles), context: { used: 0, max: 1 }, editable: true });
    banner.hidden = true;
    composer.setState({ running: false, canSend: true });
    return undefined;
  }
  const opened = new SessionView({
    sessionId,
    transcript,
    onChange: (change) => onViewChange(opened, change),
    onEvent: (event) => onViewEvent(opened, event),
    emptyPlaceholder: () => profileCards(),
  });
  view = opened;
  showSharing();
  opened.open();
  // A message sent before its socket is in sync waits for it (send() awaits `ready`).
  composer.setState({ running: false, canSend: opened.acceptsMessages });
  header.show({ editable: false });
  showContextMeter(sessionId);
  panels.notify({ type: 'session_opened' });
  return opened;
}

/** The empty state: a card a profile with its example prompts. */
function profileCards() {
  return emptyState(profiles, (profileId, prompt) => sendExample(profileId, prompt).catch((error) => composer.showError(error.message)), pullOffer.place('empty-state'));
}

/** An example prompt: sent in the open empty session, switched to the example's profile, or else in a new session of it. */
async function sendExample(profileId, prompt) {
  if (view && byId('session-profile').value !== profileId) {
    if (!(await switchProfile(profileId))) return;
    header.show({ profileId });
  }
  await send({ content: prompt, attachments: [] }, profileId);
}

function route() {
  openSession(decodeURIComponent(location.hash.slice(1)));
}

/** One session however often *New session* is clicked before it exists. */
function newSession(profileId = lastUsedProfile(profiles)) {
  creating ??= createSession(profileId).finally(() => (creating = undefined));
  return creating;
}

/** The open session is let go at once, so a message typed meanwhile goes to the new one, not the old. */
async function createSession(profileId) {
  voice.silence();
  view?.close();
  view = undefined;
  transcript.clear('Starting a new session…');
  composer.setState({ running: false, canSend: true });
  let created;
  try {
    created = await api.createSession(profileId);
  } catch (error) {
    route();
    throw error;
  }
  await sidebar.refresh();
  location.hash = encodeURIComponent(created.session_id);
  return openSession(created.session_id);
}

/** Sends in the open session; with none open it starts one, of `profileId` (or else the last used profile, which the header shows). */
async function send(message, profileId) {
  const target = await sessionForInput(profileId);
  if (target !== view) return false;
  const sent = target.send(await outgoingMessage(target.sessionId, message));
  if (!sent) composer.showError('Not connected to Hearth right now; your message is kept. Send it again once the connection is back.');
  else rememberProfile(header.profile.value);
  return sent;
}

async function loadProfiles() {
  try {
    ({ profiles } = await api.profiles());
  } catch (error) {
    composer.showError(`Could not load the profiles: ${error.message}`);
    return;
  }
  header.setProfiles(profiles);
  if (!view) header.show({ profileId: lastUsedProfile(profiles) });
  modelPicker.setProfiles(profiles);
}

/** Profiles and sessions, read side by side; the list is drawn again once it can name the profiles. */
async function loadChrome() {
  await Promise.all([loadProfiles(), sidebar.refresh(), showJail(), loadMe(), voice.loadStatus()]);
  sidebar.render();
}

/** The jail is probed once at start, so /health's word on it holds until Hearth restarts. */
async function showJail() {
  try {
    jailStatus.show((await api.health()).jail);
  } catch {
    // The page works without it; a dropped connection is shown by the connection banner.
  }
}

function wireChrome() {
  byId('new-session').addEventListener('click', () => newSession().catch((error) => composer.showError(error.message)));
  document.querySelector('.open-drawer').addEventListener('click', () => setDrawer(true));
  document.querySelector('.close-drawer').addEventListener('click', () => setDrawer(false));
  drawerBackdrop.addEventListener('click', () => setDrawer(false));
  byId('people-toggle').addEventListener('click', () => setDrawer(false));
  byId('library-toggle').addEventListener('click', () => setDrawer(false));
  // A citation in an answer opens its passage in the Library panel instead of leaving the page.
  byId('transcript').addEventListener('click', (event) => {
    const link = event.target.closest?.('a[href]');
    const target = link && citationTarget(link.getAttribute('href'));
    if (!target) return;
    event.preventDefault();
    libraryPanel.aimAt(target.id, target.passage);
    panels.show(libraryPanel);
  });
  byId('sidebar-person').addEventListener('click', () => setDrawer(false));
  byId('session-list').addEventListener('click', (event) => {
    if (event.target.closest('.session-link')) setDrawer(false);
  });
  window.addEventListener('hashchange', route);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') reconnectSockets();
  });
}

async function start() {
  // An invitation link opens the join form whoever the page would otherwise be (on this machine, the owner).
  const invitation = invitationCode();
  if (invitation) await join(byId('join'), invitation);
  try {
    await api.health();
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 401)) {
      const startupError = byId('startup-error');
      startupError.textContent = `Hearth is not answering (${error.message}). Reload the page once the server runs.`;
      startupError.hidden = false;
      return;
    }
    await signIn(byId('login'), error);
  }
  layout.hidden = false;
  wireChrome();
  listenToHearth();
  await loadChrome();
  route();
}

start();
