// The validators of the frames a client sends over a session's socket (client-frames.ts). The
// first frame of a server's life compiled them, about 20 ms of a 2-core machine in which nothing
// else was served, so `npm run build` puts in this module's place the same validators compiled
// ahead by ajv's standalone code (scripts/build.mjs, from `compiledAhead`). From the sources
// (tsx, tests) each is compiled at its first frame.
import { validatorsCompiledOnFirstUse } from '../validators-compiled-on-first-use.ts';
import { ApproveCommand, EditCommand, MessageCommand, RegenerateCommand, StopCommand } from './client-commands.ts';

/** What scripts/build.mjs compiles ahead: each schema's validator, exported under its name with these options. */
export const compiledAhead = {
  options: { allErrors: false },
  schemas: {
    validateMessageFrame: MessageCommand,
    validateStopFrame: StopCommand,
    validateApproveFrame: ApproveCommand,
    validateRegenerateFrame: RegenerateCommand,
    validateEditFrame: EditCommand,
  },
};

export const { validateMessageFrame, validateStopFrame, validateApproveFrame, validateRegenerateFrame, validateEditFrame } = validatorsCompiledOnFirstUse(compiledAhead);
