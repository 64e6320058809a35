// The validator of a profile's front matter. Profiles are read at every start, and compiling this
// schema was about 60 ms of a start's CPU, so `npm run build` puts in this module's place the same
// validator compiled ahead of time by ajv's standalone code (scripts/build.mjs, from
// `compiledAhead`); run from the sources (tsx, tests) it is compiled here, when first imported.
import { Ajv } from 'ajv';
import { ProfileFrontMatterSchema, type ProfileFrontMatter } from './profile.ts';

/** What scripts/build.mjs compiles ahead: each schema's validator, exported under its name with these options. */
export const compiledAhead = {
  options: { useDefaults: true, allErrors: true },
  schemas: { validateFrontMatter: ProfileFrontMatterSchema },
} as const;

export const validateFrontMatter = new Ajv(compiledAhead.options).compile<ProfileFrontMatter>(ProfileFrontMatterSchema);
