import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { createEmbedder, embeddingBatchSize } from '../../src/documents/embedder.ts';
import { BackendRegistry, modelLimitsFrom } from '../../src/llm/backend-registry.ts';
import { createOllamaBackend } from '../../src/llm/ollama.ts';
import { createOpenAIBackend } from '../../src/llm/openai.ts';
import { inCallLane } from '../../src/llm/call-lane.ts';
import type { LlmBackend, LlmStreamEvent } from '../../src/llm/types.ts';
import { ScriptedBackend } from '../support/scripted-backend.ts';
import { hashedEmbedding } from '../support/hashed-embedding.ts';
import { unusedPort } from '../support/llm-helpers.ts';
import type { ScriptedLlm } from '../support/scripted-llm.ts';
import { startScriptedOllama } from '../support/scripted-ollama.ts';
import { startScriptedOpenAI } from '../support/scripted-openai.ts';

const flavours = {
  ollama: {
    start: () => startScriptedOllama(),
    create: (url: string) => createOllamaBackend({ host: url, defaultModel: 'fake:latest', stallTimeoutMs: 60_000 }),
    path: '/api/embed',
  },
  openai: {
    start: () => startScriptedOpenAI(),
    create: (url: string) => createOpenAIBackend({ baseUrl: url, apiKey: '', defaultModel: 'fake', stallTimeoutMs: 60_000 }),
    path: '/v1/embeddings',
  },
} satisfies Record<string, { start: () => Promise<ScriptedLlm>; create: (url: string) => LlmBackend; path: string }>;

const cosine = (first: number[], second: number[]) => first.reduce((sum, value, index) => sum + value * second[index]!, 0);

describe('the hashed bag-of-words vectors of the stand-ins', () => {
  it('are the same for the same text, unit length, and nearer for texts that share words', () => {
    const hood = hashedEmbedding('The cooker hood takes a carbon filter, type KF-2.');
    expect(hashedEmbedding('The cooker hood takes a carbon filter, type KF-2.')).toEqual(hood);
    expect(Math.hypot(...hood)).toBeCloseTo(1, 6);
    const question = hashedEmbedding('Which filters does the hood take?');
    const unrelated = hashedEmbedding('Parents evening is on Thursday at the school hall.');
    expect(cosine(question, hood)).toBeGreaterThan(0.3);
    expect(cosine(question, hood)).toBeGreaterThan(cosine(question, unrelated) + 0.2);
    expect(hashedEmbedding('the of and')).toEqual(new Array(256).fill(0));
    expect(hashedEmbedding('filter', 768)).toHaveLength(768);
  });
});

for (const [name, flavour] of Object.entries(flavours)) {
  describe(`embed through the ${name} backend`, () => {
    let server: ScriptedLlm;
    let backend: LlmBackend;

    beforeAll(async () => {
      server = await flavour.start();
      backend = flavour.create(server.url);
    });

    afterAll(() => server.close());

    it("returns the stand-in's vectors, one per text in order, from the backend's embedding endpoint", async () => {
      const input = ['Warranty: two years from the date of purchase.', 'The hood takes a KF-2 carbon filter.'];
      const result = await backend.embed({ model: 'nomic-embed-text', input });
      expect(result.success).toBe(true);
      if (!result.success) return;
      expect(result.embeddings).toHaveLength(2);
      result.embeddings.forEach((vector, index) => {
        const expected = hashedEmbedding(input[index]!);
        expect(vector).toHaveLength(expected.length);
        vector.forEach((value, position) => expect(value).toBeCloseTo(expected[position]!, 6));
      });
      const request = server.embedRequests.at(-1)!;
      expect(request.path).toBe(flavour.path);
      expect(request.body).toMatchObject({ model: 'nomic-embed-text', input });
      expect(server.requests).toHaveLength(0);
    });

    it('asks nothing for no texts', async () => {
      const before = server.embedRequests.length;
      expect(await backend.embed({ model: 'nomic-embed-text', input: [] })).toEqual({ success: true, embeddings: [] });
      expect(server.embedRequests).toHaveLength(before);
    });

    it('words a missing model as a failure that names EMBEDDING_MODEL', async () => {
      server.embedWith(() => ({ status: 404, message: 'model "nomic-embed-text" not found, try pulling it first' }));
      try {
        const result = await backend.embed({ model: 'nomic-embed-text', input: ['x'] });
        expect(result).toEqual({ success: false, code: 'llm_error', error: expect.stringContaining('EMBEDDING_MODEL') });
      } finally {
        server.embedWith((input) => input.map((text) => hashedEmbedding(text)));
      }
    });

    it('fails a reply with fewer vectors than texts, or vectors of different lengths', async () => {
      try {
        server.embedWith(() => [hashedEmbedding('only one')]);
        const short = await backend.embed({ model: 'nomic-embed-text', input: ['one', 'two'] });
        expect(short).toEqual({ success: false, code: 'llm_error', error: expect.stringContaining('returned 1 embeddings for 2 texts') });
        server.embedWith(() => [hashedEmbedding('one'), hashedEmbedding('two', 8)]);
        const ragged = await backend.embed({ model: 'nomic-embed-text', input: ['one', 'two'] });
        expect(ragged).toEqual({ success: false, code: 'llm_error', error: expect.stringContaining('not vectors of numbers of one length') });
      } finally {
        server.embedWith((input) => input.map((text) => hashedEmbedding(text)));
      }
    });

    it('ends with aborted when the signal is aborted while the server holds the reply', async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let arrived!: () => void;
      const reached = new Promise<void>((resolve) => (arrived = resolve));
      server.embedWith(async (input) => {
        arrived();
        await held;
        return input.map((text) => hashedEmbedding(text));
      });
      try {
        const controller = new AbortController();
        const pending = backend.embed({ model: 'nomic-embed-text', input: ['x'], signal: controller.signal });
        await reached;
        controller.abort();
        expect(await pending).toEqual({ success: false, code: 'aborted', error: 'The request was cancelled.' });
      } finally {
        release();
        server.embedWith((input) => input.map((text) => hashedEmbedding(text)));
      }
    });

    it('is a failure result, not a throw, when the server cannot be reached', async () => {
      const unreachable = flavour.create(name === 'openai' ? `http://127.0.0.1:${await unusedPort()}/v1` : `http://127.0.0.1:${await unusedPort()}`);
      const result = await unreachable.embed({ model: 'nomic-embed-text', input: ['x'] });
      expect(result).toEqual({ success: false, code: 'llm_unreachable', error: expect.stringMatching(/Cannot reach .*ECONNREFUSED/) });
    });
  });
}

describe('embeddings through the registry', () => {
  it("wait for a place at the backend like any call (LLM_MAX_CONCURRENT), and leave the line when aborted", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const streaming = new Promise<void>((resolve) => (started = resolve));
    const backend = new ScriptedBackend([
      async function* (): AsyncGenerator<LlmStreamEvent> {
        started();
        await held;
        yield { type: 'done' };
      },
    ]);
    const registry = new BackendRegistry({ ollama: backend }, 'ollama', 1, modelLimitsFrom(parseConfig({})));
    const choice = registry.choose();
    if (!choice.ok) throw new Error(choice.error.message);
    const turn = inCallLane({ lane: 'interactive' }, async () => {
      for await (const event of choice.backend.stream({ model: 'scripted', messages: [], signal: new AbortController().signal })) void event;
    });
    await streaming;
    let settled = false;
    const waiting = choice.backend.embed({ model: 'nomic-embed-text', input: ['grease filter'] }).finally(() => (settled = true));
    const leaving = new AbortController();
    const abandoned = choice.backend.embed({ model: 'nomic-embed-text', input: ['x'], signal: leaving.signal });
    leaving.abort();
    expect(await abandoned).toEqual({ success: false, code: 'aborted', error: 'The request was cancelled.' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    release();
    await turn;
    expect(await waiting).toEqual({ success: true, embeddings: [hashedEmbedding('grease filter')] });
  });
});

describe('the OpenAI stand-in', () => {
  it("answers the client's default base64 encoding with the same vectors as float32 bytes", async () => {
    const server = await startScriptedOpenAI({ embeddingDimensions: 32 });
    try {
      const { default: OpenAI } = await import('openai');
      const client = new OpenAI({ baseURL: server.url, apiKey: 'not-needed', maxRetries: 0 });
      const response = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['grease filter', 'parents evening'] });
      expect(server.embedRequests[0]!.body.encoding_format).toBe('base64');
      expect(response.data.map((item) => item.embedding)).toEqual(
        ['grease filter', 'parents evening'].map((text) => Array.from(Float32Array.from(hashedEmbedding(text, 32)))),
      );
    } finally {
      await server.close();
    }
  });
});

describe('the embedder', () => {
  let server: ScriptedLlm;
  beforeAll(async () => {
    server = await startScriptedOllama({ embeddingDimensions: 64 });
  });
  afterAll(() => server.close());

  it('sends the texts in batches to the default backend with EMBEDDING_MODEL and gives unit Float32Arrays in order', async () => {
    const config = parseConfig({ OLLAMA_HOST: server.url });
    expect(config.EMBEDDING_MODEL).toBe('nomic-embed-text');
    const backends = await BackendRegistry.fromConfig(config);
    server.embedWith((input) => input.map((text) => hashedEmbedding(text, 64).map((value) => value * 3)));
    const embedder = createEmbedder({ backends, config });
    const texts = Array.from({ length: embeddingBatchSize * 2 + 6 }, (_, index) => `passage number ${index} about filter ${index % 7}`);
    const before = server.embedRequests.length;
    const result = await embedder.embed(texts);
    expect(result.success).toBe(true);
    if (!result.success) return;
    const requests = server.embedRequests.slice(before);
    expect(requests.map((request) => request.body.input.length)).toEqual([embeddingBatchSize, embeddingBatchSize, 6]);
    expect(requests.every((request) => request.body.model === 'nomic-embed-text')).toBe(true);
    expect(result.vectors).toHaveLength(texts.length);
    result.vectors.forEach((vector, index) => {
      expect(vector).toBeInstanceOf(Float32Array);
      const expected = hashedEmbedding(texts[index]!, 64);
      vector.forEach((value, position) => expect(value).toBeCloseTo(expected[position]!, 5));
    });
  });

  it('names the OpenAI default model, and says why when the default backend is not configured', async () => {
    const config = parseConfig({ LLM_BACKEND: 'openai' });
    expect(config.EMBEDDING_MODEL).toBe('text-embedding-3-small');
    expect(parseConfig({ LLM_BACKEND: 'openai', EMBEDDING_MODEL: 'bge-m3' }).EMBEDDING_MODEL).toBe('bge-m3');
    const backends = new BackendRegistry({}, 'openai', 1, modelLimitsFrom(config));
    const result = await createEmbedder({ backends, config }).embed(['x']);
    expect(result).toEqual({ success: false, code: 'llm_error', error: expect.stringContaining('OPENAI_BASE_URL') });
  });
});
