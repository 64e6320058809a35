/** The profile Hearth gives a session that names none; the page offers it first too. */
const defaultProfileId = 'secretary';

/** The id of the profile to offer first among `profiles`: the default one when it is listed, else the first. */
export function defaultProfileIn(profiles) {
  return profiles.some((profile) => profile.id === defaultProfileId) ? defaultProfileId : profiles[0]?.id;
}
