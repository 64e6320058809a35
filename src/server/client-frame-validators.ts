// The validators of the frames a client sends over a session's socket (client-frames.ts). The
// first frame of a server's life compiled them, about 20 ms of a 2-core machine in which nothing
// else was served, so `npm run build` puts in this module's place the same validators compiled
// ahead by ajv's standalone code (scripts/build.mjs, from `compiledAhead`). From the sources
// (tsx, tests) each is compiled at its first frame.
import { Ajv, type ValidateFunction } from 'ajv';
import { ApproveCommand, EditCommand, MessageCommand, RegenerateCommand, StopCommand } from './client-commands.ts';

const options = { allErrors: false } as const;

/** What scripts/build.mjs compiles ahead: each schema's validator, exported under its name with these options. */
export const compiledAhead = {
  options,
  schemas: {
    validateMessageFrame: MessageCommand,
    validateStopFrame: StopCommand,
    validateApproveFrame: ApproveCommand,
    validateRegenerateFrame: RegenerateCommand,
    validateEditFrame: EditCommand,
  },
};

let ajv: Ajv | undefined;

/** A validator that compiles its schema at its first call, with `errors` as ajv's own would have them. */
function compiledOnFirstUse(schema: object): ValidateFunction {
  let compiled: ValidateFunction | undefined;
  const validate = ((data: unknown) => {
    compiled ??= (ajv ??= new Ajv(options)).compile(schema);
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  }) as ValidateFunction;
  return validate;
}

export const validateMessageFrame = compiledOnFirstUse(MessageCommand);
export const validateStopFrame = compiledOnFirstUse(StopCommand);
export const validateApproveFrame = compiledOnFirstUse(ApproveCommand);
export const validateRegenerateFrame = compiledOnFirstUse(RegenerateCommand);
export const validateEditFrame = compiledOnFirstUse(EditCommand);
