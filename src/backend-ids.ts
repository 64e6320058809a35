// The names of the model backends. They live here, below config.ts, so the configuration's
// LLM_BACKEND, a profile's `backend` and llm/'s table of backends (src/llm/backends.ts, which
// the compiler holds to exactly these ids) all read the one list.

export const backendIds = ['ollama', 'openai'] as const;

export type BackendId = (typeof backendIds)[number];
