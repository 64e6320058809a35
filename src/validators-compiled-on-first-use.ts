import { Ajv, type Options, type ValidateFunction } from 'ajv';

/** What scripts/build.mjs compiles ahead (ajv's standalone code): each schema's validator, exported under its name, with these options. */
export interface CompiledAhead<Name extends string> {
  options: Options;
  schemas: Record<Name, object>;
}

/**
 * The validators of `compiledAhead` as the sources (tsx, tests) run them: each compiles its
 * schema at its first call, with `errors` as ajv's own would have them. The build puts the
 * validators compiled ahead in the place of the module that calls this.
 */
export function validatorsCompiledOnFirstUse<Name extends string>(compiledAhead: CompiledAhead<Name>): Record<Name, ValidateFunction> {
  let ajv: Ajv | undefined;
  const validators = {} as Record<Name, ValidateFunction>;
  for (const name of Object.keys(compiledAhead.schemas) as Name[]) {
    let compiled: ValidateFunction | undefined;
    const validate = ((data: unknown) => {
      compiled ??= (ajv ??= new Ajv(compiledAhead.options)).compile(compiledAhead.schemas[name]);
      const valid = compiled(data);
      validate.errors = compiled.errors;
      return valid;
    }) as ValidateFunction;
    validators[name] = validate;
  }
  return validators;
}
