import { defaultProfileIn } from './default-profile.js';

const storageKey = 'hearth.profile';

/**
 * The sidebar's profile select: the profile of the next new session, remembered in this browser
 * (the default profile until one is chosen). Its tooltip is the chosen profile's description.
 */
export class NewSessionProfile {
  #profiles = [];

  constructor(select) {
    this.select = select;
    select.addEventListener('change', () => {
      localStorage.setItem(storageKey, select.value);
      this.#describe();
    });
  }

  get value() {
    return this.select.value;
  }

  setProfiles(profiles) {
    this.#profiles = profiles;
    const remembered = localStorage.getItem(storageKey);
    this.select.replaceChildren(...profiles.map((profile) => new Option(profile.name, profile.id)));
    this.select.value = profiles.some((profile) => profile.id === remembered) ? remembered : (defaultProfileIn(profiles) ?? '');
    this.#describe();
  }

  #describe() {
    this.select.title = this.#profiles.find((profile) => profile.id === this.select.value)?.description ?? '';
  }
}
