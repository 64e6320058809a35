import { processMarkerVariable } from './process-markers.ts';

/**
 * The environment a tool's child process sees (terminal, code_exec, the user-tool host).
 * The server's own environment holds AUTH_TOKEN, API keys and integration tokens; none of
 * it passes unless the person names a variable in TOOL_ENV_PASSTHROUGH. HEARTH_PROCESS never
 * passes (a server started by another Hearth's tool carries that one's marker); the runner
 * sets each call's own.
 */
const alwaysPassed = ['PATH', 'HOME', 'LANG', 'LANGUAGE', 'TZ', 'TERM', 'USER', 'LOGNAME', 'SHELL', 'TMPDIR'];

export function toolEnvironment(
  passthrough: string,
  source: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const extra = passthrough.split(',').map((name) => name.trim()).filter((name) => name !== '');
  const environment: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined || name === processMarkerVariable) continue;
    if (alwaysPassed.includes(name) || name.startsWith('LC_') || extra.includes(name)) environment[name] = value;
  }
  return environment;
}
