import type { BackendId } from '../../backend-ids.ts';
import type { BackendRegistry } from '../backend-registry.ts';

/** What of a profile decides its model. */
export interface ModelChooser {
  id: string;
  backend?: BackendId;
  model?: string;
}

/** The ids of the profiles whose calls go to `name` on the default backend, their own model or the default. */
export function modelUsers(profiles: readonly ModelChooser[], backends: Pick<BackendRegistry, 'choose' | 'defaultBackend'>, name: string): string[] {
  return profiles
    .filter((profile) => {
      const choice = backends.choose({ ...(profile.backend && { backend: profile.backend }), ...(profile.model && { model: profile.model }) });
      return choice.ok && choice.backend.id === backends.defaultBackend && choice.model === name;
    })
    .map((profile) => profile.id);
}
