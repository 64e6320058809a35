import { defaultProfileIn } from './default-profile.js';

/** The key the sidebar's old "Profile for new sessions" select stored under, so its choice carries over. */
const storageKey = 'hearth.profile';

/**
 * The profile last used in this browser (chosen in the header, or a message sent with it): *New
 * session* and a first message start with it. Until one is used, the default profile.
 */
export function lastUsedProfile(profiles) {
  const remembered = localStorage.getItem(storageKey);
  return profiles.some((profile) => profile.id === remembered) ? remembered : (defaultProfileIn(profiles) ?? '');
}

export function rememberProfile(profileId) {
  if (profileId) localStorage.setItem(storageKey, profileId);
}
