// The validators of an mcp.json entry. They are needed as the server starts listening when MCP
// servers are configured, where compiling them held the event loop for about 20 ms (bench 20b),
// so `npm run build` puts in this module's place the same validators compiled ahead by ajv's
// standalone code (scripts/build.mjs, from `compiledAhead`). From the sources (tsx, tests) each
// is compiled at its first use.
import { Type } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import { validatorsCompiledOnFirstUse } from '../../validators-compiled-on-first-use.ts';

const TextMap = Type.Record(Type.String(), Type.String());

const JailEntrySchema = Type.Union([
  Type.Literal(false),
  Type.Object(
    {
      paths: Type.Optional(Type.Record(Type.String({ minLength: 1 }), Type.Unsafe<'ro' | 'rw'>({ type: 'string', enum: ['ro', 'rw'] }))),
      network: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
]);

const StdioEntrySchema = Type.Object(
  {
    type: Type.Optional(Type.Unsafe<'stdio'>({ type: 'string', enum: ['stdio'] })),
    command: Type.String({ minLength: 1 }),
    args: Type.Optional(Type.Array(Type.String())),
    env: Type.Optional(TextMap),
    cwd: Type.Optional(Type.String({ minLength: 1 })),
    jail: Type.Optional(JailEntrySchema),
    trusted: Type.Optional(Type.Boolean()),
    disabled: Type.Optional(Type.Boolean()),
  },
  // A misspelt key (say `arguments`) would otherwise be ignored without a word.
  { additionalProperties: false },
);

const HttpEntrySchema = Type.Object(
  {
    // Other clients spell the Streamable HTTP transport these three ways.
    type: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: ['http', 'streamable-http', 'streamableHttp'] })),
    url: Type.String(),
    headers: Type.Optional(TextMap),
    trusted: Type.Optional(Type.Boolean()),
    disabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

interface StdioEntry {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  jail?: false | { paths?: Record<string, 'ro' | 'rw'>; network?: boolean };
  trusted?: boolean;
  disabled?: boolean;
}

interface HttpEntry {
  url: string;
  headers?: Record<string, string>;
  trusted?: boolean;
  disabled?: boolean;
}

/** What scripts/build.mjs compiles ahead: each schema's validator, exported under its name with these options. */
export const compiledAhead = {
  options: { allErrors: true },
  schemas: { validateStdioEntry: StdioEntrySchema, validateHttpEntry: HttpEntrySchema },
};

const validators = validatorsCompiledOnFirstUse(compiledAhead);
export const validateStdioEntry = validators.validateStdioEntry as ValidateFunction<StdioEntry>;
export const validateHttpEntry = validators.validateHttpEntry as ValidateFunction<HttpEntry>;
