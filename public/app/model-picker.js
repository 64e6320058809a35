import { api } from './api.js';
import { element } from './dom.js';

const followProfile = '';

/**
 * The open session's model (docs/configuration.md, "Model backends"): the models the default backend lists
 * (GET /models), or the profile's own. Choosing one pins it for the session's next turns
 * (PATCH /sessions/:id {model}); the server remembers it. Sits beside the session's profile select.
 */
export class ModelPicker {
  #sessionId;
  #profileId = '';
  #models;
  #profiles = [];

  /** `onModel(model)` hears the session's picked model as it is shown ('' while it follows the profile's, or none is open). */
  constructor(profileSelect, { onModel = () => {} } = {}) {
    this.onModel = onModel;
    this.select = element('select', {
      className: 'profile-badge model-picker',
      'aria-label': 'Session model',
      title: 'The model this conversation uses; choose another for its next messages',
      hidden: true,
      dataset: { role: 'model-picker' },
    });
    profileSelect.after(this.select);
    this.select.addEventListener('change', () => this.#choose(this.select.value));
    // The profile's own model is what "Profile's model" stands for: it follows a switch of profile.
    profileSelect.addEventListener('change', () => {
      this.#profileId = profileSelect.value;
      this.#label();
    });
    // The backend may have gained models since (a model pulled meanwhile).
    this.select.addEventListener('focus', () => void this.#loadModels(true));
  }

  /** The profiles as GET /agents/profiles lists them, for the name of each one's model. */
  setProfiles(profiles) {
    this.#profiles = profiles;
    this.#label();
  }

  /** Shows the session's model; nothing while no session is open. */
  async open(sessionId) {
    this.#sessionId = sessionId;
    this.select.hidden = !sessionId;
    this.onModel(followProfile);
    if (!sessionId) return;
    const [session] = await Promise.all([api.session(sessionId).catch(() => undefined), this.#loadModels(false)]);
    if (this.#sessionId !== sessionId || !session) return;
    this.#profileId = session.profile_id;
    this.#fill(session.model ?? followProfile);
  }

  /** Reads the backend's models again (one was pulled or deleted). */
  refresh() {
    return this.#loadModels(true);
  }

  /** Between runs only, as the profile select. */
  setEditable(editable) {
    this.select.disabled = !editable;
  }

  async #loadModels(again) {
    if (this.#models && !again) return;
    try {
      const { models } = await api.models();
      this.#models = models.map((model) => model.name);
      this.select.removeAttribute('data-error');
    } catch (error) {
      this.#models ??= [];
      this.select.dataset.error = error.message;
    }
    if (again) this.#fill(this.select.value);
  }

  #fill(chosen) {
    const names = [...(this.#models ?? [])];
    // A pinned model the backend no longer lists is still shown as what the session has.
    if (chosen && !names.includes(chosen)) names.unshift(chosen);
    this.select.replaceChildren(new Option('', followProfile), ...names.map((name) => new Option(name, name)));
    this.select.value = chosen;
    this.#label();
    this.onModel(chosen);
  }

  #label() {
    const profile = this.#profiles.find((candidate) => candidate.id === this.#profileId);
    const first = this.select.options[0];
    if (first) first.textContent = profile?.model ? `Profile’s model (${profile.model})` : 'Profile’s model';
    const problem = this.select.dataset.error;
    this.select.title = problem ? `The backend’s models could not be listed: ${problem}` : 'The model this conversation uses; choose another for its next messages';
  }

  async #choose(model) {
    const sessionId = this.#sessionId;
    if (!sessionId) return;
    this.select.disabled = true;
    try {
      const updated = await api.updateSession(sessionId, { model: model === followProfile ? null : model });
      if (this.#sessionId === sessionId) this.#fill(updated.model ?? followProfile);
    } catch (error) {
      this.select.dataset.error = error.message;
      this.#label();
    } finally {
      this.select.disabled = false;
    }
  }
}
