import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

const fingerprintPattern = '^(none|SHA256:[A-Za-z0-9+/]{43}=?)$';

const SshHostEntry = Type.Object(
  {
    host: Type.String({ minLength: 1 }),
    port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
    username: Type.String({ minLength: 1 }),
    password: Type.Optional(Type.String()),
    key_path: Type.Optional(Type.String({ minLength: 1 })),
    host_key: Type.String({ pattern: fingerprintPattern }),
    comment: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const SshHostsFileSchema = Type.Record(Type.String({ minLength: 1 }), SshHostEntry);

export type SshHostEntry = Static<typeof SshHostEntry>;
export type SshHosts = Readonly<Record<string, SshHostEntry>>;

export type SshHostsFileResult =
  | { ok: true; hosts: SshHosts; exists: boolean }
  | { ok: false; message: string };

let validator: ValidateFunction<Static<typeof SshHostsFileSchema>> | undefined;
/** Compiled when a hosts file is first read, not at start. */
const hostsValidator = () => (validator ??= new Ajv({ allErrors: false }).compile<Static<typeof SshHostsFileSchema>>(SshHostsFileSchema));

/** Turns the first schema error into a sentence naming the entry and the field. */
function describeProblem(error: ErrorObject | undefined): string {
  if (!error) return 'it does not match the expected format';
  const [entryName, field] = error.instancePath.split('/').slice(1);
  const where = entryName === undefined ? 'the file' : `entry "${entryName}"`;
  const hostKeyForm = '"SHA256:" and 43 base64 characters (as ssh-keygen -l prints it), or "none"';
  if (field === 'host_key' && error.keyword === 'pattern') return `${where}: host_key must be ${hostKeyForm}`;
  if (error.keyword === 'required') {
    const missing = String(error.params.missingProperty);
    return `${where} is missing "${missing}"${missing === 'host_key' ? `: ${hostKeyForm}` : ''}`;
  }
  if (error.keyword === 'additionalProperties') return `${where} has an unknown field "${String(error.params.additionalProperty)}"`;
  if (entryName === undefined) return 'the file must hold one JSON object of named connections';
  return `${where}${field === undefined ? '' : `: ${field}`} ${error.message ?? 'is invalid'}`;
}

export function parseSshHosts(text: string, filePath: string): SshHostsFileResult {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `The SSH hosts file ${filePath} is not valid JSON: ${(error as Error).message}.` };
  }
  const validate = hostsValidator();
  if (!validate(data)) {
    return { ok: false, message: `The SSH hosts file ${filePath} is invalid: ${describeProblem(validate.errors?.[0])}.` };
  }
  return { ok: true, hosts: data, exists: true };
}

/**
 * Returns a loader that reads the file on every call (it is small), so edits apply at
 * once; a modification-time cache could miss two writes within one clock tick.
 * A missing file means no named connections.
 */
export function createSshHostsFileReader(configuredPath: string): { filePath: string; load(): Promise<SshHostsFileResult> } {
  const filePath = path.resolve(configuredPath);

  async function load(): Promise<SshHostsFileResult> {
    try {
      return parseSshHosts(await readFile(filePath, 'utf8'), filePath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { ok: true, hosts: {}, exists: false };
      return { ok: false, message: `Cannot read the SSH hosts file ${filePath}: ${(error as Error).message}.` };
    }
  }

  return { filePath, load };
}
