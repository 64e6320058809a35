/** An error as OpenAI's API answers it, which its clients read (docs/openai-compatible.md, "Errors"). */
export interface OpenAiErrorBody {
  error: { message: string; type: string; code: string };
}

/** OpenAI's error type for an HTTP status. */
export function openAiErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** The code OpenAI's clients know for Hearth's own, where they mean the same. */
const openAiCodes: Record<string, string> = { unauthorized: 'invalid_api_key' };

export function openAiError(status: number, code: string, message: string): OpenAiErrorBody {
  return { error: { message, type: openAiErrorType(status), code: openAiCodes[code] ?? code } };
}

/**
 * A Hearth error body (`{error:{code,message}}`, as every other route answers) in OpenAI's shape;
 * undefined when the payload is not one.
 */
export function asOpenAiError(status: number, payload: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(payload);
  } catch {
    return undefined;
  }
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (typeof error?.code !== 'string' || typeof error.message !== 'string') return undefined;
  return JSON.stringify(openAiError(status, error.code, error.message));
}
