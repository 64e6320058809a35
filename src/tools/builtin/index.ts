import type { Config } from '../../config.ts';
import type { Jail } from '../../jail/jail.ts';
import type { Person } from '../../people/person.ts';
import type { HomeAssistant } from '../../integrations/home-assistant/home-assistant.ts';
import type { ProfileRegistry } from '../../profiles/profile-registry.ts';
import type { Db } from '../../store/database.ts';
import { ToolRegistry } from '../tool-registry.ts';
import type { ToolSessions } from '../tool-sessions.ts';
import type { ToolSwitches } from '../user-tools/tool-switches.ts';
import type { UserToolManager } from '../user-tools/user-tool-manager.ts';
import { createCodeExecTool } from './code-exec.ts';
import { createDocumentsSearchTool, type DocumentSearch } from './documents-search.ts';
import { createFilesystemTool } from './filesystem.ts';
import { createHomeAssistantTool } from './home-assistant.ts';
import { createHttpRequestTool } from './http-request.ts';
import { createNetworkGuard } from './http/network-guard.ts';
import { SelfAddress } from './http/self-address.ts';
import { createImageViewTool } from './image-view.ts';
import { createListToolsTool } from './list-tools.ts';
import { createMemoryForgetTool } from './memory-forget.ts';
import { memoryOwnerOf } from './memory-owner.ts';
import { createMemorySaveTool } from './memory-save.ts';
import { createMemorySearchTool } from './memory-search.ts';
import { createMqttTool, type MqttBroker } from './mqtt.ts';
import { createScheduleTool, type ScheduleBook } from './schedule.ts';
import { createScratchpadTool } from './scratchpad.ts';
import { createSpawnAgentTool, type SubagentRunner } from './spawn-agent.ts';
import { createSshExecTool } from './ssh-exec.ts';
import { createSwitchProfileTool } from './switch-profile.ts';
import { createTerminalTool } from './terminal.ts';
import { createTodoTool } from './todo.ts';
import { createWebSearchTool } from './web-search.ts';
import { createWebViewTool } from './web-view.ts';
import { createToolManualTool } from './tool-manual.ts';
import { createReloadToolsTool } from './reload-tools.ts';
import { createWriteToolTool } from './write-tool.ts';

export interface BuiltinToolDependencies {
  db: Db;
  config: Config;
  /** The jail terminal and code_exec run their processes in. */
  jail: Jail;
  profiles: ProfileRegistry;
  /** Runs spawn_agent's sub-agents; provided by the agent layer. */
  runSubagent: SubagentRunner;
  /**
   * The user-tool manager, for write_tool and reload_tools. It is built after the registry
   * (it fills the registry), so it is read when they run; without it they say user tools are off.
   */
  userTools?: () => UserToolManager | undefined;
  /** The user tools' on/off switches, read when write_tool runs: a tool it writes is switched on. */
  toolSwitches?: () => ToolSwitches | undefined;
  /** Called after memory_save or memory_forget changed a fact (the memory summary is then rewritten). */
  onMemoryChanged?: () => void;
  /** A person of the household by id, for whose memory the memory tools touch (the session's person; none for guests); without it they touch nobody's. */
  person?: (personId: string) => Promise<Person | undefined>;
  /** Where Hearth listens, so http_request, web_view and image_view refuse to call it. */
  selfAddress?: SelfAddress;
  /** The Home Assistant connection for the home_assistant tool; without it the tool says how to configure one. */
  homeAssistant?: HomeAssistant;
  /** The MQTT broker connection for the mqtt tool; without it the tool says how to configure one. */
  mqtt?: MqttBroker;
  /** The session service, for switch_profile, and for the profile of a call's session; built with the server, after the registry, so it is read when a tool runs. */
  sessions?: () => ToolSessions | undefined;
  /** The scheduler, for the schedule tool; it is built with the server, after the registry, so it is read when the tool runs. */
  schedules?: () => ScheduleBook | undefined;
  /** The documents libraries, for documents_search; without them it says there is no library. */
  documents?: () => DocumentSearch | undefined;
}

/** A registry holding every built-in tool. */
export function createToolRegistry(deps: BuiltinToolDependencies): ToolRegistry {
  const { db, config, profiles } = deps;
  const sessions = deps.sessions ?? (() => undefined);
  const selfAddress = deps.selfAddress ?? new SelfAddress({ host: config.HOST, port: config.PORT });
  const network = createNetworkGuard({ blockPrivate: config.HTTP_BLOCK_PRIVATE, selfAddress });
  const memoryOwner = memoryOwnerOf({ sessions, person: deps.person ?? (async () => undefined) });
  const registry = new ToolRegistry([
    createScratchpadTool(db, async (context) => {
      const session = await sessions()?.find(context.parentSessionId ?? context.sessionId);
      return (session && profiles.get(session.profileId)?.scratchpad_sections) ?? [];
    }),
    createTodoTool(db),
    createFilesystemTool({ config }),
    createTerminalTool({ config, jail: deps.jail }),
    createCodeExecTool({ config, jail: deps.jail }),
    createSshExecTool({ config }),
    createImageViewTool({ config, network }),
    createHttpRequestTool({ network }),
    createWebSearchTool({ config, network }),
    createWebViewTool({ network }),
    createSwitchProfileTool({ sessions, profiles }),
    createSpawnAgentTool(deps.runSubagent, { sessions, profiles, ...(deps.person && { person: deps.person }) }),
    createMemorySearchTool(db, memoryOwner),
    createMemorySaveTool(db, memoryOwner, deps.onMemoryChanged),
    createMemoryForgetTool(db, memoryOwner, deps.onMemoryChanged),
    createDocumentsSearchTool({ documents: deps.documents ?? (() => undefined), sessions, person: deps.person ?? (async () => undefined) }),
    createHomeAssistantTool(deps.homeAssistant),
    createMqttTool(deps.mqtt),
    createScheduleTool({ sessions, schedules: deps.schedules ?? (() => undefined), profiles, ...(deps.person && { person: deps.person }) }),
  ]);
  const userTools = deps.userTools ?? (() => undefined);
  registry.addBuiltins([
    createListToolsTool(registry),
    createToolManualTool({ registry, manualsDir: config.MANUALS_DIR }),
    createWriteToolTool({
      registry,
      toolsDir: config.TOOLS_DIR,
      userTools,
      toolSwitches: deps.toolSwitches ?? (() => undefined),
      reach: { sessions, ...(deps.person && { person: deps.person }) },
    }),
    createReloadToolsTool(userTools),
  ]);
  return registry;
}
