import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { JsonSchema } from './tool.ts';

const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true, coerceTypes: false });

export type ArgumentsValidator = (args: unknown) => { ok: true } | { ok: false; message: string };

/** Compiles a tool's parameter schema; throws when the schema itself is invalid. */
export function compileArgumentsValidator(schema: JsonSchema): ArgumentsValidator {
  const validate: ValidateFunction = ajv.compile(schema);
  return (args) => (validate(args) ? { ok: true } : { ok: false, message: describeErrors(validate.errors ?? []) });
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
