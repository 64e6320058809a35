import type { Profile } from '../profiles/profile.ts';
import type { Tool } from '../tools/tool.ts';
import type { ToolRegistry } from '../tools/tool-registry.ts';

/**
 * The tools a session of `profile` has: the ones the profile names, plus every user tool that
 * is switched on, unless the profile sets `user_tools: false`.
 */
export function profileTools(profile: Pick<Profile, 'tools' | 'user_tools'>, tools: ToolRegistry): Tool[] {
  return tools.forNames(profile.tools, { userTools: profile.user_tools });
}
