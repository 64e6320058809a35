import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { Type, type Static } from '@sinclair/typebox';
import { backendIds } from './backend-ids.ts';
import { packagePath } from './package-root.ts';

const Flag = (defaultValue: boolean) => Type.Boolean({ default: defaultValue });
const Text = (defaultValue: string) => Type.String({ default: defaultValue });
const Count = (defaultValue: number, minimum = 1) => Type.Integer({ default: defaultValue, minimum });
const Fraction = (defaultValue: number) => Type.Number({ default: defaultValue, minimum: 0, maximum: 1 });

const ConfigSchema = Type.Object({
  HOST: Text('127.0.0.1'),
  PORT: Type.Integer({ default: 8000, minimum: 0, maximum: 65535 }),
  AUTH_TOKEN: Text(''),
  TLS_CERT_FILE: Text(''),
  TLS_KEY_FILE: Text(''),
  DATA_DIR: Text(''),
  DB_PATH: Text(''),
  LLM_BACKEND: Type.Union(backendIds.map((id) => Type.Literal(id)), { default: 'ollama' }),
  OLLAMA_HOST: Type.String({ default: 'http://localhost:11434', format: 'uri' }),
  OLLAMA_DEFAULT_MODEL: Text('qwen3:8b'),
  OLLAMA_NUM_CTX: Count(32768, 512),
  OLLAMA_THINK: Flag(true),
  OPENAI_BASE_URL: Type.Union([Type.Literal(''), Type.String({ format: 'uri' })], { default: '' }),
  OPENAI_API_KEY: Text(''),
  OPENAI_MODEL: Text(''),
  EMBEDDING_MODEL: Text(''),
  PERSONA_FILE: Text(''),
  PROFILES_DIR: Text(packagePath('profiles')),
  TOOLS_DIR: Text(''),
  SHIPPED_TOOLS_DIR: Text(packagePath('user-tools')),
  MANUALS_DIR: Text(packagePath('manuals')),
  SESSION_FILES_DIR: Text(''),
  SESSION_FILES_MAX_SIZE_MB: Count(200),
  SESSION_FILES_TTL_HOURS: Count(24),
  DOCUMENTS_DIR: Text(''),
  DOCUMENTS_WATCH_DIR: Text(''),
  CONTEXT_COMPRESSION_ENABLED: Flag(true),
  CONTEXT_COMPRESSION_THRESHOLD: Fraction(0.8),
  CONTEXT_KEEP_RECENT: Count(10),
  CONTEXT_SUMMARY_TEMPERATURE: Type.Number({ default: 0.3, minimum: 0, maximum: 2 }),
  MEMORY_IDLE_MINUTES: Count(30),
  FS_ALLOWED_PATHS: Text('*'),
  FS_WRITABLE_PATHS: Text(''),
  TERMINAL_ALLOWED_COMMANDS: Text('*'),
  SSH_HOSTS_FILE: Text(''),
  USER_TOOL_TIMEOUT_MS: Count(30000, 100),
  WEB_SEARCH_URL: Text(''),
  APPROVAL_TIMEOUT_S: Count(600),
  LLM_STALL_TIMEOUT_S: Count(180),
  LLM_MAX_CONCURRENT: Count(2),
  MAX_ANSWER_CHARS: Count(200_000, 1_000),
  TOOL_ENV_PASSTHROUGH: Text(''),
  HTTP_BLOCK_PRIVATE: Flag(false),
  USER_TOOL_MAX_RSS_MB: Count(256, 32),
  SCHEDULER_TIMEZONE: Type.String({ default: '', format: 'time-zone' }),
  SCHEDULER_MAX_CONCURRENT: Count(2),
  HA_URL: Type.Union([Type.Literal(''), Type.String({ format: 'uri' })], { default: '' }),
  HA_TOKEN: Text(''),
  MQTT_URL: Type.Union([Type.Literal(''), Type.String({ format: 'mqtt-url' })], { default: '' }),
  MQTT_USERNAME: Text(''),
  MQTT_PASSWORD: Text(''),
  TELEGRAM_BOT_TOKEN: Text(''),
  TELEGRAM_ALLOWED_USERS: Text(''),
  TELEGRAM_API_ROOT: Type.String({ default: 'https://api.telegram.org', format: 'uri' }),
  STT_BACKEND: Type.Union(['none', 'openai', 'wyoming'].map((id) => Type.Literal(id)), { default: 'none' }),
  STT_URL: Type.String({ default: '', format: 'speech-url' }),
  STT_MODEL: Text('whisper-1'),
  STT_API_KEY: Text(''),
  STT_LANGUAGE: Text(''),
  TTS_BACKEND: Type.Union(['auto', 'none', 'openai', 'wyoming', 'espeak-ng'].map((id) => Type.Literal(id)), { default: 'auto' }),
  TTS_URL: Type.String({ default: '', format: 'speech-url' }),
  TTS_MODEL: Text('tts-1'),
  TTS_VOICE: Text(''),
  TTS_API_KEY: Text(''),
  VOICE_MAX_SECONDS: Count(120),
  MCP_CONFIG_FILE: Text(''),
  MCP_TOOL_TIMEOUT_MS: Count(60000, 100),
  JAIL: Type.Union([Type.Literal('on'), Type.Literal('off')], { default: 'on' }),
  JAIL_MAX_PROCESSES: Count(256, 16),
  JAIL_MAX_MEMORY_MB: Count(1024, 64),
  JAIL_TMP_MB: Count(256, 1),
  LOG_FORMAT: Type.Union([Type.Literal(''), Type.Literal('pretty'), Type.Literal('json')], { default: '' }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' },
  ),
});

export type Config = Readonly<Static<typeof ConfigSchema>>;
export type ConfigKey = keyof Config;
export const configKeys = Object.keys(ConfigSchema.properties) as ConfigKey[];

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The JSON Schema fields ConfigSchema's properties use. */
interface FieldSchema {
  type?: string;
  anyOf?: FieldSchema[];
  const?: unknown;
  format?: string;
  minimum?: number;
  maximum?: number;
  default?: unknown;
}

const formats: Record<string, (value: string) => boolean> = { uri: isHttpUrl, 'mqtt-url': isMqttUrl, 'speech-url': isSpeechUrl, 'time-zone': isTimeZoneOrNothing };

/**
 * The value a variable's text stands for under its schema, read as ajv's coerceTypes reads text
 * (numbers by Number(), booleans only from true and false); undefined when the text fits none.
 * Checked by hand rather than by an ajv validator: compiling one (its meta-schema, then this
 * schema) took 40-60 ms of every start, and these few field kinds fit in one short function.
 */
function valueOf(schema: FieldSchema, text: string): unknown {
  if (schema.anyOf) return schema.anyOf.map((option) => valueOf(option, text)).find((value) => value !== undefined);
  if ('const' in schema) return text === schema.const ? text : undefined;
  switch (schema.type) {
    case 'string':
      return schema.format === undefined || formats[schema.format]!(text) ? text : undefined;
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : undefined;
    case 'integer':
    case 'number': {
      const number = Number(text);
      const whole = schema.type === 'number' || Number.isInteger(number);
      const inRange = number >= (schema.minimum ?? -Infinity) && number <= (schema.maximum ?? Infinity);
      return Number.isFinite(number) && whole && inRange ? number : undefined;
    }
  }
  throw new Error(`config.ts has no check for the schema ${JSON.stringify(schema)}`);
}

function isHttpUrl(value: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

/** A speech server: an http(s) base URL (openai) or tcp://host:port (wyoming), or nothing. */
function isSpeechUrl(value: string): boolean {
  if (value === '') return true;
  try {
    const url = new URL(value);
    return ['http:', 'https:'].includes(url.protocol) || (url.protocol === 'tcp:' && url.hostname !== '' && url.port !== '');
  } catch {
    return false;
  }
}

function isTimeZoneOrNothing(value: string): boolean {
  if (value === '') return true;
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

function isMqttUrl(value: string): boolean {
  try {
    return ['mqtt:', 'mqtts:', 'ws:', 'wss:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

function expectation(schema: Record<string, unknown>): string {
  if (Array.isArray(schema.anyOf)) {
    const literals = schema.anyOf.map((option: { const?: unknown }) => option.const).filter((value) => value !== undefined && value !== '');
    if (schema.anyOf.some((option: { format?: string }) => option.format === 'mqtt-url')) return 'an mqtt://, mqtts://, ws:// or wss:// URL or nothing';
    const allowsUrl = schema.anyOf.some((option: { format?: string }) => option.format === 'uri');
    return allowsUrl ? 'an http(s) URL or nothing' : `one of ${literals.join(', ')}`;
  }
  if (schema.format === 'uri') return 'an http(s) URL';
  if (schema.format === 'speech-url') return 'an http(s) base URL (openai, e.g. http://host:8000/v1), tcp://host:port (wyoming, e.g. tcp://host:10300) or nothing';
  if (schema.format === 'time-zone') return 'an IANA time zone such as Europe/Berlin, or nothing for the server\'s';
  const range = [schema.minimum, schema.maximum].some((bound) => bound !== undefined)
    ? ` from ${schema.minimum ?? '-∞'} to ${schema.maximum ?? '∞'}`
    : '';
  if (schema.type === 'integer') return `a whole number${range}`;
  if (schema.type === 'number') return `a number${range}`;
  if (schema.type === 'boolean') return 'true or false';
  return 'text';
}

/**
 * Builds the configuration from environment-style variables. Unknown keys are
 * ignored; empty strings count as unset. Throws ConfigError naming the first bad key.
 */
export function parseConfig(environment: Record<string, string | undefined>): Config {
  const candidate: Record<string, unknown> = {};
  for (const key of configKeys) {
    const schema = ConfigSchema.properties[key] as FieldSchema;
    const text = environment[key]?.trim();
    const value = text === undefined || text === '' ? schema.default : valueOf(schema, text);
    if (value === undefined) {
      throw new ConfigError(`Invalid ${key}=${JSON.stringify(environment[key])}: expected ${expectation(schema as Record<string, unknown>)}.`);
    }
    candidate[key] = value;
  }
  const config = candidate as Static<typeof ConfigSchema>;
  placeStateInDataDir(config, environment);
  if (config.EMBEDDING_MODEL === '') config.EMBEDDING_MODEL = defaultEmbeddingModel(config.LLM_BACKEND);
  if ((config.TLS_CERT_FILE === '') !== (config.TLS_KEY_FILE === '')) {
    const [set, missing] = config.TLS_CERT_FILE === '' ? ['TLS_KEY_FILE', 'TLS_CERT_FILE'] : ['TLS_CERT_FILE', 'TLS_KEY_FILE'];
    throw new ConfigError(`${set} is set without ${missing}: HTTPS needs both the certificate and its private key. Set both, or neither for plain HTTP.`);
  }
  if (!isLoopback(config.HOST) && config.AUTH_TOKEN === '') {
    throw new ConfigError(
      `Refusing to listen on HOST=${config.HOST} without AUTH_TOKEN: anyone on the network could use this assistant. Set AUTH_TOKEN, or HOST=127.0.0.1.`,
    );
  }
  return Object.freeze(config);
}

/** Where Hearth keeps what the person and the agent change when DATA_DIR is unset: `$XDG_DATA_HOME/hearth`, else `~/.local/share/hearth`. */
export function defaultDataDir(environment: Record<string, string | undefined>): string {
  const dataHome = environment.XDG_DATA_HOME?.trim() || path.join(homeOf(environment), '.local', 'share');
  return path.join(dataHome, 'hearth');
}

/** The `.env` read when the working folder has none: `$XDG_CONFIG_HOME/hearth/env`, else `~/.config/hearth/env`. */
export function userEnvFile(environment: Record<string, string | undefined>): string {
  const configHome = environment.XDG_CONFIG_HOME?.trim() || path.join(homeOf(environment), '.config');
  return path.join(configHome, 'hearth', 'env');
}

function homeOf(environment: Record<string, string | undefined>): string {
  return environment.HOME?.trim() || os.homedir();
}

/** The embedding model the default backend most likely has: Ollama's usual one, or OpenAI's smallest. */
function defaultEmbeddingModel(backend: Config['LLM_BACKEND']): string {
  return backend === 'openai' ? 'text-embedding-3-small' : 'nomic-embed-text';
}

/** The keys that point at state and were left unset get their place under DATA_DIR. */
function placeStateInDataDir(config: Static<typeof ConfigSchema>, environment: Record<string, string | undefined>): void {
  if (config.DATA_DIR === '') config.DATA_DIR = defaultDataDir(environment);
  const inDataDir = (name: string) => path.join(config.DATA_DIR, name);
  if (config.DB_PATH === '') config.DB_PATH = inDataDir('hearth.db');
  if (config.TOOLS_DIR === '') config.TOOLS_DIR = inDataDir('user-tools');
  if (config.SESSION_FILES_DIR === '') config.SESSION_FILES_DIR = inDataDir('session-files');
  if (config.DOCUMENTS_DIR === '') config.DOCUMENTS_DIR = inDataDir('documents');
  if (config.MCP_CONFIG_FILE === '') config.MCP_CONFIG_FILE = inDataDir('mcp.json');
  if (config.SSH_HOSTS_FILE === '') config.SSH_HOSTS_FILE = inDataDir('ssh_hosts.json');
  // The built-in persona serves until the person writes one there.
  if (config.PERSONA_FILE === '' && existsSync(inDataDir('persona.md'))) config.PERSONA_FILE = inDataDir('persona.md');
}

/** The folder profile overrides live in: a file here replaces the same-named one in PROFILES_DIR. */
export function profileOverridesDir(config: Pick<Config, 'DATA_DIR'>): string {
  return path.join(config.DATA_DIR, 'profiles');
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** The `.env` Hearth reads: the working folder's when there is one, else the one in the person's config folder. */
export function envFileFor(environment: Record<string, string | undefined>, workingFolder = process.cwd()): string {
  const local = path.join(workingFolder, '.env');
  return existsSync(local) ? local : userEnvFile(environment);
}

/** Reads the `.env` (when present) beneath the real environment, whose non-empty values win. */
export function loadConfig(environment: NodeJS.ProcessEnv = process.env, envFile = envFileFor(environment)): Config {
  let fileValues: Record<string, string | undefined> = {};
  try {
    fileValues = parseEnv(readFileSync(envFile, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new ConfigError(`Cannot read ${envFile}: ${(error as Error).message}`);
  }
  const setInEnvironment = Object.entries(environment).filter(([, value]) => value !== undefined && value.trim() !== '');
  return parseConfig({ ...fileValues, ...Object.fromEntries(setInEnvironment) });
}
