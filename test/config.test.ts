import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { builtStartCommand } from './support/hearth-build.ts';
import { unusedPort } from './support/llm-helpers.ts';
import { ConfigError, envFileFor, loadConfig, parseConfig } from '../src/config.ts';
import { packageRoot } from '../src/package-root.ts';
import { testHomeFolders } from './support/test-home-folders.ts';

/** Calls `parse` and returns the ConfigError it throws. */
function configErrorOf(parse: () => unknown): ConfigError {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError, but the configuration was accepted');
}

describe('parseConfig defaults', () => {
  it('gives every key of docs/configuration.md its default', () => {
    const config = parseConfig({ HOME: '/home/someone' });
    const state = '/home/someone/.local/share/hearth';
    expect(config).toEqual({
      HOST: '127.0.0.1',
      PORT: 8000,
      AUTH_TOKEN: '',
      TLS_CERT_FILE: '',
      TLS_KEY_FILE: '',
      DATA_DIR: state,
      DB_PATH: `${state}/hearth.db`,
      LLM_BACKEND: 'ollama',
      OLLAMA_HOST: 'http://localhost:11434',
      OLLAMA_DEFAULT_MODEL: 'qwen3:8b',
      OLLAMA_NUM_CTX: 32768,
      OLLAMA_THINK: true,
      OPENAI_BASE_URL: '',
      OPENAI_API_KEY: '',
      OPENAI_MODEL: '',
      EMBEDDING_MODEL: 'nomic-embed-text',
      PERSONA_FILE: '',
      // Shipped with Hearth: found from the installation, whatever the working folder.
      PROFILES_DIR: path.join(packageRoot, 'profiles'),
      TOOLS_DIR: `${state}/user-tools`,
      SHIPPED_TOOLS_DIR: path.join(packageRoot, 'user-tools'),
      MANUALS_DIR: path.join(packageRoot, 'manuals'),
      SESSION_FILES_DIR: `${state}/session-files`,
      SESSION_FILES_MAX_SIZE_MB: 200,
      SESSION_FILES_TTL_HOURS: 24,
      DOCUMENTS_DIR: `${state}/documents`,
      DOCUMENTS_WATCH_DIR: '',
      CONTEXT_COMPRESSION_ENABLED: true,
      CONTEXT_COMPRESSION_THRESHOLD: 0.8,
      CONTEXT_KEEP_RECENT: 10,
      CONTEXT_SUMMARY_TEMPERATURE: 0.3,
      MEMORY_IDLE_MINUTES: 30,
      FS_ALLOWED_PATHS: '*',
      FS_WRITABLE_PATHS: '',
      TERMINAL_ALLOWED_COMMANDS: '*',
      SSH_HOSTS_FILE: `${state}/ssh_hosts.json`,
      USER_TOOL_TIMEOUT_MS: 30000,
      // Empty means the built-in DuckDuckGo HTML endpoint.
      WEB_SEARCH_URL: '',
      APPROVAL_TIMEOUT_S: 600,
      LLM_STALL_TIMEOUT_S: 180,
      LLM_MAX_CONCURRENT: 2,
      MAX_ANSWER_CHARS: 200000,
      TOOL_ENV_PASSTHROUGH: '',
      HTTP_BLOCK_PRIVATE: false,
      USER_TOOL_MAX_RSS_MB: 256,
      SCHEDULER_TIMEZONE: '',
      SCHEDULER_MAX_CONCURRENT: 2,
      HA_URL: '',
      HA_TOKEN: '',
      MQTT_URL: '',
      MQTT_USERNAME: '',
      MQTT_PASSWORD: '',
      TELEGRAM_BOT_TOKEN: '',
      TELEGRAM_ALLOWED_USERS: '',
      TELEGRAM_API_ROOT: 'https://api.telegram.org',
      STT_BACKEND: 'none',
      STT_URL: '',
      STT_MODEL: 'whisper-1',
      STT_API_KEY: '',
      STT_LANGUAGE: '',
      TTS_BACKEND: 'auto',
      TTS_URL: '',
      TTS_MODEL: 'tts-1',
      TTS_VOICE: '',
      TTS_API_KEY: '',
      VOICE_MAX_SECONDS: 120,
      MCP_CONFIG_FILE: `${state}/mcp.json`,
      MCP_TOOL_TIMEOUT_MS: 60000,
      JAIL: 'on',
      JAIL_MAX_PROCESSES: 256,
      JAIL_MAX_MEMORY_MB: 1024,
      JAIL_TMP_MB: 256,
      LOG_FORMAT: '',
      LOG_LEVEL: 'info',
    });
  });

  it('takes a speech server as an http(s) base URL or tcp://host:port, and names both when refusing', () => {
    expect(parseConfig({ STT_URL: 'tcp://10.0.0.5:10300', TTS_URL: 'http://host:8880/v1' })).toMatchObject({ STT_URL: 'tcp://10.0.0.5:10300', TTS_URL: 'http://host:8880/v1' });
    expect(() => parseConfig({ STT_URL: 'tcp://10.0.0.5' })).toThrow(
      'Invalid STT_URL="tcp://10.0.0.5": expected an http(s) base URL (openai, e.g. http://host:8000/v1), tcp://host:port (wyoming, e.g. tcp://host:10300) or nothing.',
    );
    expect(() => parseConfig({ TTS_BACKEND: 'piper' })).toThrow('Invalid TTS_BACKEND="piper": expected one of auto, none, openai, wyoming, espeak-ng.');
  });

  it('puts DATA_DIR under XDG_DATA_HOME when that is set', () => {
    expect(parseConfig({ HOME: '/home/someone', XDG_DATA_HOME: '/srv/xdg' }).DATA_DIR).toBe('/srv/xdg/hearth');
  });

  it('places every unset key that points at state under DATA_DIR, and keeps the ones set', () => {
    expect(parseConfig({ DATA_DIR: '/var/lib/hearth' })).toMatchObject({
      DB_PATH: '/var/lib/hearth/hearth.db',
      TOOLS_DIR: '/var/lib/hearth/user-tools',
      SESSION_FILES_DIR: '/var/lib/hearth/session-files',
      MCP_CONFIG_FILE: '/var/lib/hearth/mcp.json',
      SSH_HOSTS_FILE: '/var/lib/hearth/ssh_hosts.json',
      PERSONA_FILE: '',
    });
    const set = { TOOLS_DIR: '/srv/tools', SESSION_FILES_DIR: '/srv/files', MCP_CONFIG_FILE: '/etc/hearth/mcp.json', SSH_HOSTS_FILE: '/etc/hearth/ssh.json', PERSONA_FILE: '/etc/hearth/persona.md' };
    expect(parseConfig({ DATA_DIR: '/var/lib/hearth', ...set })).toMatchObject(set);
  });

  it('reads DATA_DIR/persona.md as PERSONA_FILE once the person has written one', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-persona-'));
    try {
      expect(parseConfig({ DATA_DIR: dataDir }).PERSONA_FILE).toBe('');
      await writeFile(path.join(dataDir, 'persona.md'), 'You are terse.');
      expect(parseConfig({ DATA_DIR: dataDir }).PERSONA_FILE).toBe(path.join(dataDir, 'persona.md'));
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('derives DB_PATH from DATA_DIR', () => {
    expect(parseConfig({ DATA_DIR: '/var/lib/hearth' }).DB_PATH).toBe('/var/lib/hearth/hearth.db');
  });

  it('keeps an explicit DB_PATH', () => {
    expect(parseConfig({ DATA_DIR: '/var/lib/hearth', DB_PATH: '/srv/other.db' }).DB_PATH).toBe('/srv/other.db');
  });

  it('treats empty values as unset', () => {
    expect(parseConfig({ PORT: '', LOG_LEVEL: '  ' })).toMatchObject({ PORT: 8000, LOG_LEVEL: 'info' });
  });

  it('converts numbers, fractions and flags to their types', () => {
    expect(
      parseConfig({ PORT: '9000', CONTEXT_COMPRESSION_THRESHOLD: '0.5', OLLAMA_THINK: 'false', CONTEXT_COMPRESSION_ENABLED: 'true' }),
    ).toMatchObject({ PORT: 9000, CONTEXT_COMPRESSION_THRESHOLD: 0.5, OLLAMA_THINK: false, CONTEXT_COMPRESSION_ENABLED: true });
  });

  it('returns a frozen object', () => {
    const config = parseConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(() => {
      (config as { PORT: number }).PORT = 1;
    }).toThrow(TypeError);
  });
});

describe('parseConfig refuses malformed values', () => {
  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['CONTEXT_COMPRESSION_THRESHOLD', '1.5'],
    ['LLM_BACKEND', 'claude'],
    ['OLLAMA_THINK', 'maybe'],
    ['OLLAMA_HOST', 'not-a-url'],
    ['OLLAMA_NUM_CTX', '0'],
    ['LOG_LEVEL', 'loud'],
    ['LLM_MAX_CONCURRENT', '0'],
    ['LLM_MAX_CONCURRENT', '1.5'],
    ['SCHEDULER_MAX_CONCURRENT', '-1'],
    ['SCHEDULER_MAX_CONCURRENT', 'many'],
    ['TELEGRAM_API_ROOT', 'api.telegram.org'],
  ])('%s=%s with one line naming the variable', (key, value) => {
    const error = configErrorOf(() => parseConfig({ [key]: value }));
    expect(error.message).not.toContain('\n');
    expect(error.message).toContain(key);
    expect(error.message).toContain(value);
    expect(error.message).toMatch(/expected .+/);
  });
});

describe('parseConfig and the listen address', () => {
  it('refuses a non-loopback HOST without AUTH_TOKEN, saying why', () => {
    const error = configErrorOf(() => parseConfig({ HOST: '0.0.0.0' }));
    expect(error.message).not.toContain('\n');
    expect(error.message).toContain('HOST=0.0.0.0');
    expect(error.message).toContain('AUTH_TOKEN');
  });

  it('accepts a non-loopback HOST with AUTH_TOKEN', () => {
    expect(parseConfig({ HOST: '0.0.0.0', AUTH_TOKEN: 'secret' })).toMatchObject({ HOST: '0.0.0.0', AUTH_TOKEN: 'secret' });
  });

  it.each(['127.0.0.1', '127.0.0.2', 'localhost', '::1'])('counts %s as loopback', (host) => {
    expect(parseConfig({ HOST: host }).HOST).toBe(host);
  });
});

describe('loadConfig', () => {
  let directory: string;
  beforeEach(async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'hearth-config-'));
  });
  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  async function envFile(text: string): Promise<string> {
    const file = path.join(directory, '.env');
    await writeFile(file, text);
    return file;
  }

  it('reads values from the .env file', async () => {
    const file = await envFile('# local settings\nOLLAMA_DEFAULT_MODEL=llama3.2:3b\nPORT=9001\nAUTH_TOKEN="quoted secret"\n');
    expect(loadConfig({}, file)).toMatchObject({ OLLAMA_DEFAULT_MODEL: 'llama3.2:3b', PORT: 9001, AUTH_TOKEN: 'quoted secret' });
  });

  it('lets the real environment win over the .env file', async () => {
    const file = await envFile('PORT=9001\nLOG_LEVEL=debug\n');
    expect(loadConfig({ PORT: '9002' }, file)).toMatchObject({ PORT: 9002, LOG_LEVEL: 'debug' });
  });

  it('uses the defaults when there is no .env file', () => {
    expect(loadConfig({}, path.join(directory, 'missing.env'))).toEqual(parseConfig({}));
  });

  it('reads the working folder\'s .env, else $XDG_CONFIG_HOME/hearth/env, else ~/.config/hearth/env', async () => {
    const workingFolder = path.join(directory, 'work');
    await mkdir(workingFolder);
    const environment = { HOME: '/home/someone', XDG_CONFIG_HOME: path.join(directory, 'config') };
    expect(envFileFor(environment, workingFolder)).toBe(path.join(directory, 'config', 'hearth', 'env'));
    expect(envFileFor({ HOME: '/home/someone' }, workingFolder)).toBe('/home/someone/.config/hearth/env');
    await writeFile(path.join(workingFolder, '.env'), 'PORT=9003\n');
    expect(envFileFor(environment, workingFolder)).toBe(path.join(workingFolder, '.env'));

    await mkdir(path.join(directory, 'config', 'hearth'), { recursive: true });
    await writeFile(path.join(directory, 'config', 'hearth', 'env'), 'PORT=9004\n');
    expect(loadConfig(environment, envFileFor(environment, directory)).PORT).toBe(9004);
    expect(loadConfig(environment, envFileFor(environment, workingFolder)).PORT).toBe(9003);
  });

  it('names a malformed variable that came from the .env file', async () => {
    const file = await envFile('OLLAMA_NUM_CTX=lots\n');
    expect(configErrorOf(() => loadConfig({}, file)).message).toContain('OLLAMA_NUM_CTX');
  });
});

describe('src/main.ts as a process', () => {
  let child: ChildProcessWithoutNullStreams | undefined;
  let dataDir: string | undefined;
  const homes: string[] = [];
  afterEach(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = exitOf(child);
      child.kill('SIGKILL');
      await exited;
    }
    child = undefined;
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    dataDir = undefined;
    for (const home of homes.splice(0)) await rm(home, { recursive: true, force: true });
  });

  function startMain(environment: Record<string, string>): ChildProcessWithoutNullStreams {
    // Built from these sources once per run and started as `npm start` starts dist/main.js.
    const start = builtStartCommand();
    // Its working folder and config folder are its own: neither the checkout's .env nor the person's is read.
    const home = mkdtempSync(path.join(tmpdir(), 'hearth-main-home-'));
    homes.push(home);
    child = spawn(start.executable, start.args, { cwd: home, env: { ...process.env, ...testHomeFolders(home), ...environment } });
    return child;
  }

  function exitOf(main: ChildProcessWithoutNullStreams): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (main.exitCode !== null || main.signalCode !== null) {
      return Promise.resolve({ code: main.exitCode, signal: main.signalCode });
    }
    return new Promise((resolve) => main.once('exit', (code, signal) => resolve({ code, signal })));
  }

  function collect(stream: NodeJS.ReadableStream): { text: () => string; waitFor: (pattern: RegExp) => Promise<string> } {
    let text = '';
    const waiters: (() => void)[] = [];
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      text += chunk;
      for (const waiter of waiters.splice(0)) waiter();
    });
    return {
      text: () => text,
      waitFor: async (pattern) => {
        for (;;) {
          const match = pattern.exec(text);
          if (match) return match[0];
          await new Promise<void>((resolve) => waiters.push(resolve));
        }
      },
    };
  }


  it('exits non-zero with one stderr line naming a malformed PORT', async () => {
    const main = startMain({ PORT: 'abc' });
    const stderr = collect(main.stderr);
    const { code } = await exitOf(main);
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    const lines = stderr.text().split('\n').filter((line) => line.trim() !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('PORT');
    expect(stderr.text()).not.toMatch(/^\s+at /m);
  });

  it('starts, answers /health, and exits 0 on SIGTERM', async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'hearth-main-'));
    const port = await unusedPort();
    const main = startMain({
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dataDir,
      TOOLS_DIR: path.join(dataDir, 'user-tools'),
      SESSION_FILES_DIR: path.join(dataDir, 'session-files'),
      AUTH_TOKEN: '',
      LOG_LEVEL: 'info',
    });
    const stdout = collect(main.stdout);
    const exited = exitOf(main);
    await Promise.race([
      stdout.waitFor(new RegExp(`listening[^\\n]*127\\.0\\.0\\.1:${port}`, 'i')),
      exited.then(({ code }) => Promise.reject(new Error(`main exited early with ${code}`))),
    ]);

    const response = await fetch(`http://127.0.0.1:${port}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: 'ok' });

    main.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
  });
});
