import type { AppDependencies } from './app-dependencies.ts';
import type { JailStatus } from './jail/jail-spec.ts';
import type { BackendStatus } from './llm/backend-status.ts';

/** Logs once what this Hearth runs with (and where its state is), after the first backend check and user-tool load have answered. */
export async function logStartUpSummary(url: string, deps: AppDependencies, dataDir: string): Promise<void> {
  const [status, userTools] = await Promise.all([
    deps.backendStatus.firstCheck(),
    deps.userTools.whenLoaded().catch(() => ({ loaded: [], errors: deps.userTools.errors() })),
    deps.speech.firstCheck(),
  ]);
  const profiles = deps.profiles.list().map((profile) => profile.id);
  const toolCount = deps.tools.list().length;
  const failedFiles = userTools.errors.map((failure) => failure.file);
  // MCP servers connect in the background: the summary names them, not how far they got.
  const mcpServers = deps.mcp.servers().map((server) => server.name);
  const parts = [
    `Hearth is listening on ${url}`,
    `state in ${dataDir}`,
    `${status.backend} ${status.url}`,
    `model ${status.model || '(none)'}`,
    reachability(status),
    `${profiles.length} profiles (${profiles.join(', ')})`,
    `${toolCount} tools`,
    jailSummary(deps.jail.status),
    deps.speech.summary(),
    ...(mcpServers.length > 0 ? [`MCP servers ${mcpServers.join(', ')} (connecting in the background)`] : []),
    ...(failedFiles.length > 0 ? [`user tools with errors: ${failedFiles.join(', ')}`] : []),
  ];
  deps.logger.info(
    {
      startup: {
        url,
        data_dir: dataDir,
        backend: status.backend,
        model: status.model,
        reachable: status.reachable,
        model_available: status.model_available,
        profiles,
        tools: toolCount,
        user_tool_errors: failedFiles,
        mcp_servers: mcpServers,
        jail: deps.jail.status.state,
        speech_to_text: deps.speech.stt.id,
        text_to_speech: deps.speech.tts.id,
      },
    },
    parts.join(' · '),
  );
  if (status.message) deps.logger.warn(`${status.message}${status.fix ? ` ${status.fix}.` : ''}`);
}

/** The jail in a few words; when it is unavailable, what is off and the command that fixes it. */
function jailSummary(status: JailStatus): string {
  if (status.state === 'off') return 'jail off (JAIL=off: the agent\'s processes run unjailed)';
  if (status.state === 'unavailable') return `jail UNAVAILABLE, off: ${status.off.join(', ')} (fix: ${status.fix})`;
  const filter = status.terminalFilter === 'on' ? '' : ', no terminal-input filter';
  return `jail on (limits by ${status.limits.mechanism}${filter})`;
}

function reachability(status: BackendStatus): string {
  if (status.reachable === null) return 'not checked';
  if (!status.reachable) return 'unreachable';
  return status.model_available ? 'reachable' : 'reachable, model missing';
}
