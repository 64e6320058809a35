import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifySchema, FastifySchemaCompiler } from 'fastify';

type BuildValidator = ReturnType<typeof AjvCompiler>;
type RouteCompiler = FastifySchemaCompiler<FastifySchema>;
type RouteValidator = ReturnType<RouteCompiler>;

// Fastify makes a new Ajv for every instance and compiles each route's schema again: about a tenth of a
// second of CPU per app built, paid at each start (and at each of the tests' many apps). The routes' schemas
// are module constants, so one process compiles each once: validators are pure functions of their schema.
const pools = AjvCompiler();
const compiled = new WeakMap<RouteCompiler, Map<string, ReturnType<RouteCompiler>>>();

/** Fastify's own Ajv compiler (same options, same formats), keeping what it compiled for the next app in this process. */
export const buildSharedValidator: BuildValidator = (externalSchemas, options) => {
  // The Ajv itself is made at the first request that validates, not while the app is built (issue 38).
  let shared: { compile: RouteCompiler; cache: Map<string, RouteValidator> } | undefined;
  const sharedCompiler = () => {
    if (!shared) {
      const compile = pools(externalSchemas, options) as RouteCompiler;
      let cache = compiled.get(compile);
      if (!cache) compiled.set(compile, (cache = new Map()));
      shared = { compile, cache };
    }
    return shared;
  };
  return ((route) =>
    compiledOnFirstCall(() => {
      const { compile, cache } = sharedCompiler();
      const key = JSON.stringify(route.schema);
      let validator = cache.get(key);
      if (!validator) cache.set(key, (validator = compile(route)));
      return validator;
    })) as RouteCompiler as ReturnType<BuildValidator>;
};

/**
 * A route's validator compiled at the route's first request rather than while the app is built:
 * most routes of a start are never called before the next restart, and compiling them all took
 * about a tenth of a second of it (issue 38). Fastify reads `errors` off the function after a failed call.
 */
function compiledOnFirstCall(compileRoute: () => RouteValidator): RouteValidator {
  let compiled: RouteValidator | undefined;
  const validate = ((data: unknown) => (compiled ??= compileRoute())(data)) as RouteValidator;
  Object.defineProperty(validate, 'errors', { get: () => compiled?.errors });
  return validate;
}
