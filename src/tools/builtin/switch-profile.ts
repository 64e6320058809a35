import { Type, type Static } from '@sinclair/typebox';
import type { ProfileRegistry } from '../../profiles/profile-registry.ts';
import type { Db } from '../../store/database.ts';
import { appendProfileMarker } from '../../store/profile-markers.ts';
import { findSession, updateSession } from '../../store/sessions-repository.ts';
import type { Tool } from '../tool.ts';

const parameters = Type.Object({ profile_id: Type.String({ description: 'Profile to switch to' }) }, { additionalProperties: false });

export function createSwitchProfileTool(options: { db: Db; profiles: ProfileRegistry }): Tool<Static<typeof parameters>> {
  const { db, profiles } = options;
  const known = () => profiles.list().map((profile) => `${profile.id} (${profile.name})`).join(', ');
  return {
    name: 'switch_profile',
    description: "Switch this conversation to another profile (prompt and tools) from the next step.",
    parameters,
    subject: ({ profile_id: profileId }, context) => `${context?.sessionProfileId ?? 'unknown'} -> ${profileId}`,
    // The next turns would follow the new profile's approval rules: only the person may move the conversation under them.
    mustAsk({ profile_id: profileId }, context) {
      const profile = profiles.get(profileId);
      if (!profile || context?.isSubagent || profile.id === context?.sessionProfileId) return undefined;
      const from = context?.sessionProfileId === undefined ? undefined : profiles.get(context.sessionProfileId);
      return `the model asks to move this conversation${from ? ` from ${from.name}` : ''} to ${profile.name}, whose approval rules then apply`;
    },
    async execute({ profile_id: profileId }, context) {
      if (context.isSubagent) return { output: 'A sub-agent cannot switch profiles; finish the task with the tools you have.', success: false };
      const profile = profiles.get(profileId);
      if (!profile) return { output: `There is no profile "${profileId}". Profiles: ${known()}.`, success: false };
      const session = await findSession(db, context.sessionId);
      if (!session) return { output: 'This conversation no longer exists.', success: false };
      if (session.profileId === profile.id) return `Already using the ${profile.name} profile.`;
      await updateSession(db, context.sessionId, { profileId: profile.id });
      await appendProfileMarker(db, context.sessionId, { profile_id: profile.id, profile_name: profile.name, by: 'agent' });
      context.emit({ type: 'profile_switched', profile_id: profile.id, profile_name: profile.name });
      return `Switched to the ${profile.name} profile. Its instructions and tools apply from your next step.`;
    },
  };
}
