import { BackendStatusView } from './backend-status.js';
import { displayTitle } from './dom.js';
import { SessionChoice } from './session-choice.js';

/**
 * The session's title, its active profile and model, and how full the model's context is. The
 * profile is the page's one profile choice: choosing another switches the open session to it
 * (between runs), or with none open is the profile the first message starts a session with.
 */
export class SessionHeader {
  #profileId = '';
  #profiles = [];
  /** The model the open session picked; empty while it follows its profile's. */
  #model = '';

  /**
   * `onProfileChange(profileId)` resolves true when the session (or the page, with none open) now has that profile;
   * `pullOffer()` gives the node offering to pull a missing model, for the backend banner; `onBackendShown` hears
   * the backend line's backend, model and state whenever they change.
   */
  constructor({ title, profile, meter, share, onProfileChange, pullOffer, onBackendShown }) {
    this.title = title;
    this.profile = profile;
    this.meter = meter;
    this.share = share;
    this.backend = new BackendStatusView(title.closest('header'), { offer: pullOffer, onShown: onBackendShown });
    // Under the title, after the profile and model: the header's controls keep one row at every width.
    const subtitle = title.parentElement.querySelector('.session-subtitle');
    profile.parentElement.after(this.backend.summary);
    this.choice = new SessionChoice({ subtitle, menu: profile.parentElement, status: this.backend.summary });
    profile.addEventListener('change', async () => {
      const wanted = profile.value;
      profile.disabled = true;
      const switched = await onProfileChange(wanted);
      profile.disabled = false;
      this.show({ profileId: switched ? wanted : this.#profileId });
    });
  }

  /** The backend's status from /ws/events (docs/protocol.md, "REST API", `GET /status`). */
  showBackend(status) {
    this.backend.show(status);
    this.#showModelInUse();
  }

  /** A `model_loading` event of /ws/events: the status line says *loading model* meanwhile. */
  showModelLoading(event) {
    this.backend.showLoading(event);
    this.#showModelInUse();
  }

  setProfiles(profiles) {
    this.#profiles = profiles;
    this.profile.replaceChildren(...profiles.map((profile) => new Option(profile.name, profile.id)));
    this.show({ profileId: this.#profileId });
  }

  /** `model`: the open session's picked model ('' when it follows its profile's, or none is open). */
  show({ title, profileId, context, editable, model }) {
    if (title !== undefined) {
      this.title.textContent = displayTitle(title);
      document.title = title ? `${title} · Hearth` : 'Hearth';
    }
    if (profileId !== undefined) {
      this.#profileId = profileId ?? '';
      // A profile that is not (or no longer) on the server is still shown as what the session has.
      if (this.#profileId && ![...this.profile.options].some((option) => option.value === this.#profileId)) {
        this.profile.append(new Option(this.#profileId, this.#profileId));
      }
      this.profile.value = this.#profileId;
      this.profile.hidden = this.#profileId === '';
    }
    if (editable !== undefined) this.profile.disabled = !editable;
    if (context !== undefined) this.#meter(context);
    if (model !== undefined) this.#model = model ?? '';
    if (profileId !== undefined || model !== undefined) this.#showModelInUse();
  }

  /** The model the next turn uses: the session's pick, else its profile's (on the profile's backend). */
  #showModelInUse() {
    const profile = this.#profiles.find((candidate) => candidate.id === this.#profileId);
    const inUse = this.#model ? { model: this.#model } : { backend: profile?.backend ?? '', model: profile?.model ?? '' };
    this.backend.showModelInUse(inUse);
    this.profile.title = profile?.description ?? '';
    this.choice.show({ profile: profile?.name ?? this.#profileId, model: this.backend.model });
  }

  #meter({ used, max }) {
    this.meter.max = Math.max(max, 1);
    this.meter.value = Math.min(used, this.meter.max);
    this.meter.low = this.meter.max * 0.6;
    this.meter.high = this.meter.max * 0.85;
    const share = max > 0 ? Math.round((100 * used) / max) : 0;
    this.meter.title = `Context used: ${used.toLocaleString()} of ${max.toLocaleString()} tokens (${share}%)`;
    this.meter.textContent = `${share}%`;
    this.share.textContent = `${share}%`;
    this.share.parentElement.title = this.meter.title;
  }
}
