/** The session's title, its active profile and how full the model's context is. */
export class SessionHeader {
  constructor({ title, profile, meter, share, profileName }) {
    this.title = title;
    this.profile = profile;
    this.meter = meter;
    this.share = share;
    this.profileName = profileName;
  }

  show({ title, profileId, context }) {
    if (title !== undefined) {
      this.title.textContent = title || 'New conversation';
      document.title = title ? `${title} · Hearth` : 'Hearth';
    }
    if (profileId !== undefined) {
      this.profile.textContent = profileId ? this.profileName(profileId) : '';
      this.profile.dataset.profileId = profileId ?? '';
    }
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
