import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import type { JsonSchema } from './tool.ts';

type Dialect = 'draft-07' | '2019-09' | '2020-12';

const options: Options = {
  allErrors: true,
  strict: false,
  useDefaults: true,
  coerceTypes: false,
  // A format no plugin knows (MCP servers invent some, "path"…) is ignored; Ajv would print a warning at every compile.
  logger: { log: () => {}, warn: () => {}, error: (...args: unknown[]) => console.error(...args) },
};

/** Ajv with the formats MCP schemas use (uri, email, date-time…) checked, for the dialect a schema names. */
function createAjv(dialect: Dialect): Ajv {
  const ajv = dialect === '2020-12' ? new Ajv2020(options) : dialect === '2019-09' ? new Ajv2019(options) : new Ajv(options);
  formats.default(ajv);
  return ajv;
}

const shared = new Map<Dialect, Ajv>();

/**
 * Draft-07 unless `$schema` names 2019-09 or 2020-12 (MCP's dialect, which servers built on zod 4
 * declare). A schema holding an `$id` gets an instance of its own: Ajv keeps every id it compiled
 * and refuses the same id twice, which a tool reloaded or an MCP server reconnected would send.
 */
function ajvFor(schema: JsonSchema): Ajv {
  const declared = typeof schema['$schema'] === 'string' ? schema['$schema'] : '';
  const dialect: Dialect = declared.includes('2020-12') ? '2020-12' : declared.includes('2019-09') ? '2019-09' : 'draft-07';
  if (JSON.stringify(schema).includes('"$id"')) return createAjv(dialect);
  let ajv = shared.get(dialect);
  if (!ajv) shared.set(dialect, (ajv = createAjv(dialect)));
  return ajv;
}

export type ArgumentsValidator = (args: unknown) => { ok: true } | { ok: false; message: string };

/**
 * Compiled validators by schema object, held only while the schema is: Ajv's own cache would
 * keep every schema an MCP server sent at each reconnect or list change for the life of the process.
 */
const compiled = new WeakMap<JsonSchema, ValidateFunction>();

/** Compiles a tool's parameter schema (once per schema object); throws when the schema itself is invalid. */
export function compileArgumentsValidator(schema: JsonSchema): ArgumentsValidator {
  let validate = compiled.get(schema);
  if (!validate) {
    const ajv = ajvFor(schema);
    try {
      validate = ajv.compile(schema);
    } finally {
      ajv.removeSchema(schema);
    }
    compiled.set(schema, validate);
  }
  const check = validate;
  return (args) => (check(args) ? { ok: true } : { ok: false, message: describeErrors(check.errors ?? []) });
}

/**
 * For Hearth's own tools, whose schemas are part of its code: compiled at the tool's first call
 * rather than when the registry is filled at start (~50 ms of CPU for the built-ins; issue 38).
 */
export function argumentsValidatorOnFirstUse(schema: JsonSchema): ArgumentsValidator {
  let validator: ArgumentsValidator | undefined;
  return (args) => (validator ??= compileArgumentsValidator(schema))(args);
}

/** Ajv's errors as one sentence that names each field, e.g. `"a" must be number; arguments is missing "b"`. */
export function describeErrors(errors: readonly Partial<ErrorObject>[], subject = 'arguments'): string {
  return errors
    .map((error) => {
      const where = error.instancePath ? `"${error.instancePath.slice(1).replaceAll('/', '.')}"` : subject;
      const params = error.params ?? {};
      if (error.keyword === 'additionalProperties') return `${where} has an unknown property "${params.additionalProperty}"`;
      if (error.keyword === 'required') return `${where} is missing "${params.missingProperty}"`;
      if (error.keyword === 'enum') return `${where} must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}`;
      return `${where} ${error.message}`;
    })
    .join('; ');
}
