import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ErrorBody } from '../errors.ts';
import { describeErrors } from '../tools/validation.ts';

/** Turns every failure into `{error:{code,message}}` with the right status (docs/protocol.md, "REST API"). */
export function handleError(error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof ApiError) return reply.code(error.status).send(errorBody(error.code, error.message));
  if (error.validation) {
    const subject = error.validationContext ?? 'request';
    return reply.code(400).send(errorBody('invalid_request', `Invalid ${subject}: ${describeErrors(error.validation, subject)}.`));
  }
  if (error.statusCode === 413) return reply.code(413).send(errorBody('payload_too_large', error.message));
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return reply.code(error.statusCode).send(errorBody('invalid_request', error.message));
  }
  request.log.error({ err: error }, 'request failed');
  return reply.code(500).send(errorBody('internal_error', 'Internal server error; the log has the details.'));
}

export function handleNotFound(request: FastifyRequest, reply: FastifyReply) {
  return reply.code(404).send(errorBody('not_found', `No route for ${request.method} ${request.url.split('?')[0]}.`));
}

function errorBody(code: ErrorBody['error']['code'], message: string): ErrorBody {
  return { error: { code, message } };
}
