import { BackendStatusView } from './backend-status.js';
import { displayTitle } from './dom.js';

/**
 * The session's title, its active profile and how full the model's context is. The profile is a
 * select: choosing another one switches the open session to it (between runs).
 */
export class SessionHeader {
  #profileId = '';

  /** `onProfileChange(profileId)` resolves true when the session now has that profile. */
  constructor({ title, profile, meter, share, onProfileChange }) {
    this.title = title;
    this.profile = profile;
    this.meter = meter;
    this.share = share;
    this.backend = new BackendStatusView(title.closest('header'));
    // Under the title, beside the profile: the header's controls keep one row at every width.
    profile.parentElement.append(this.backend.summary);
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
  }

  setProfiles(profiles) {
    this.profile.replaceChildren(...profiles.map((profile) => new Option(profile.name, profile.id)));
    this.show({ profileId: this.#profileId });
  }

  show({ title, profileId, context, editable }) {
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
