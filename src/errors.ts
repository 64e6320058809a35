/** Every error code the REST API answers with, and its HTTP status. */
export const errorStatus = {
  invalid_request: 400,
  unknown_profile: 400,
  not_supported: 400,
  model_cannot_call_tools: 400,
  no_file: 400,
  one_file_per_request: 400,
  unauthorized: 401,
  sign_in_failed: 401,
  passkey_failed: 401,
  forbidden: 403,
  forbidden_host: 403,
  forbidden_origin: 403,
  session_not_found: 404,
  not_found: 404,
  person_not_found: 404,
  token_not_found: 404,
  passkey_not_found: 404,
  invitation_not_valid: 410,
  name_taken: 409,
  passphrase_needed: 409,
  approval_not_found: 404,
  schedule_not_found: 404,
  message_not_found: 404,
  file_not_found: 404,
  document_not_found: 404,
  model_not_found: 404,
  notification_not_found: 404,
  session_busy: 409,
  pull_running: 409,
  tools_file_malformed: 409,
  message_not_editable: 409,
  nothing_to_regenerate: 409,
  payload_too_large: 413,
  file_too_large: 413,
  unsupported_type: 415,
  audio_too_large: 413,
  audio_too_long: 413,
  audio_unreadable: 400,
  no_speech: 400,
  rate_limited: 429,
  stt_not_configured: 503,
  tts_not_configured: 503,
  speech_unreachable: 503,
  speech_failed: 502,
  llm_unreachable: 502,
  llm_error: 502,
  llm_timeout: 504,
  internal_error: 500,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export interface ErrorBody {
  error: { code: ErrorCode; message: string };
}

/** An expected failure that a route turns into `{error:{code,message}}` with the code's status. */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }

  get status(): number {
    return errorStatus[this.code];
  }
}
