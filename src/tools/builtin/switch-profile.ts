import { Type, type Static } from '@sinclair/typebox';
import type { ProfileRegistry } from '../../profiles/profile-registry.ts';
import type { Tool } from '../tool.ts';
import type { ToolSessions } from '../tool-sessions.ts';
import { toolFailure } from '../../failure.ts';

const parameters = Type.Object({ profile_id: Type.String({ description: 'Profile to switch to' }) }, { additionalProperties: false });

/** `sessions` is read when the tool runs: the app's session service is built after the tools. */
export function createSwitchProfileTool(options: { sessions: () => ToolSessions | undefined; profiles: ProfileRegistry }): Tool<Static<typeof parameters>> {
  const { profiles } = options;
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
      const sessions = options.sessions();
      if (!sessions) return toolFailure('Sessions are not available here, so the profile cannot be switched.');
      // Others write here: a switch on their word would give them the person's other profiles.
      if ((await sessions.find(context.sessionId))?.shared) {
        return toolFailure('This session is shared with the household: only its person switches its profile, by hand in the page.');
      }
      const switched = await sessions.switchProfile(context.sessionId, profile.id, 'agent');
      if (!switched.ok) return toolFailure(switched.code === 'session_not_found' ? 'This conversation no longer exists.' : switched.message);
      if (!switched.switched) return `Already using the ${profile.name} profile.`;
      return `Switched to the ${profile.name} profile. Its instructions and tools apply from your next step.`;
    },
  };
}
