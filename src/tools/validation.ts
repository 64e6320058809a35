import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { JsonSchema } from './tool.ts';

const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true, coerceTypes: false });

export type ArgumentsValidator = (args: unknown) => { ok: true } | { ok: false; message: string };

/** Compiles a tool's parameter schema; throws when the schema itself is invalid. */
export function compileArgumentsValidator(schema: JsonSchema): ArgumentsValidator {
  const validate: ValidateFunction = ajv.compile(schema);
  return (args) => (validate(args) ? { ok: true } : { ok: false, message: describeErrors(validate.errors ?? []) });
}

function describeErrors(errors: ErrorObject[]): string {
  return errors
    .map((error) => {
      const where = error.instancePath ? `"${error.instancePath.slice(1).replaceAll('/', '.')}"` : 'arguments';
      if (error.keyword === 'additionalProperties') return `${where} has an unknown property "${error.params.additionalProperty}"`;
      if (error.keyword === 'required') return `${where} is missing "${error.params.missingProperty}"`;
      if (error.keyword === 'enum') return `${where} must be one of ${(error.params.allowedValues as unknown[]).map(String).join(', ')}`;
      return `${where} ${error.message}`;
    })
    .join('; ');
}
