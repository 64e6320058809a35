import path from 'node:path';
import { loadProfiles, type ProfileError } from './load-profiles.ts';
import type { Profile } from './profile.ts';

export class ProfileRegistry {
  private profiles = new Map<string, Profile>();
  private loadErrors: ProfileError[] = [];
  private reloadQueue: Promise<void> = Promise.resolve();

  /** `directory` holds the shipped profiles; a same-named file in `overridesDirectory` (the person's) replaces one. */
  constructor(
    readonly directory: string,
    readonly overridesDirectory?: string,
  ) {}

  static async open(directory: string, overridesDirectory?: string): Promise<ProfileRegistry> {
    const registry = new ProfileRegistry(directory, overridesDirectory);
    await registry.reload();
    return registry;
  }

  get(id: string): Profile | undefined {
    return this.profiles.get(id);
  }

  has(id: string): boolean {
    return this.profiles.has(id);
  }

  list(): Profile[] {
    return [...this.profiles.values()];
  }

  errors(): ProfileError[] {
    return [...this.loadErrors];
  }

  /**
   * Re-reads the folders. A profile whose file no longer parses keeps its last good
   * version (and its error is reported); a profile whose file is gone is dropped.
   * If the shipped folder itself cannot be read, this rejects and nothing changes.
   */
  reload(): Promise<void> {
    // One save can fire several watcher events; running reloads one after another keeps
    // an older read from finishing last and overwriting a newer one.
    const run = this.reloadQueue.then(() => this.reloadNow());
    this.reloadQueue = run.catch(() => undefined);
    return run;
  }

  private async reloadNow(): Promise<void> {
    const { profiles, errors } = await loadProfiles(this.directory, this.overridesDirectory);
    // By file name: an override that does not parse keeps the version it was to replace.
    const previousByFile = new Map([...this.profiles.values()].map((profile) => [path.basename(profile.file), profile]));

    const next = [...profiles];
    const reportedErrors = errors.map((error) => {
      const previous = previousByFile.get(path.basename(error.file));
      if (!previous) return error;
      next.push(previous);
      return { file: error.file, message: `${error.message} (still using the last version that loaded)` };
    });

    next.sort((left, right) => (left.id < right.id ? -1 : left.id > right.id ? 1 : 0));
    this.profiles = new Map(next.map((profile) => [profile.id, profile]));
    this.loadErrors = reportedErrors;
  }
}
