// Ollama's model endpoints (/api/show, /api/ps, /api/delete, /api/pull, an empty
// /api/generate) through the `ollama` client; its browser entry, as the chat backend uses.
import { Ollama } from 'ollama/browser';
import type { PullLine } from './pull-progress.ts';

/** What /api/show says of a model that the Models panel shows. */
export interface ModelDetails {
  family?: string;
  parameters?: string;
  quantization?: string;
  context_length?: number;
  /** Ollama's capabilities ("completion", "tools", "thinking", "vision"); undefined when this Ollama does not say. */
  capabilities?: string[];
}

export interface LoadedModel {
  name: string;
  size: number;
  size_vram: number;
  expires_at: string;
}

/** The HTTP status Ollama answered with, when it answered with an error. */
export function statusOf(error: unknown): number | undefined {
  const status = (error as { status_code?: unknown } | null)?.status_code;
  return typeof status === 'number' ? status : undefined;
}

export class OllamaModels {
  constructor(
    readonly host: string,
    private readonly baseFetch: typeof fetch = globalThis.fetch,
  ) {}

  private client(signal?: AbortSignal): Ollama {
    const fetchWith: typeof fetch = (input, init) =>
      this.baseFetch(input, { ...init, ...(signal && { signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal }) });
    return new Ollama({ host: this.host, fetch: fetchWith });
  }

  async details(name: string, signal: AbortSignal): Promise<ModelDetails> {
    const shown = await this.client(signal).show({ model: name });
    // The client types model_info as a Map; on the wire it is a plain object.
    const info = (shown.model_info ?? {}) as unknown as Record<string, unknown>;
    const architecture = info['general.architecture'];
    const contextLength = typeof architecture === 'string' ? info[`${architecture}.context_length`] : undefined;
    return {
      ...(shown.details?.family && { family: shown.details.family }),
      ...(shown.details?.parameter_size && { parameters: shown.details.parameter_size }),
      ...(shown.details?.quantization_level && { quantization: shown.details.quantization_level }),
      ...(typeof contextLength === 'number' && { context_length: contextLength }),
      ...(Array.isArray(shown.capabilities) && { capabilities: shown.capabilities }),
    };
  }

  async loaded(signal: AbortSignal): Promise<LoadedModel[]> {
    const { models } = await this.client(signal).ps();
    return models.map((model) => ({
      name: model.name,
      size: model.size,
      size_vram: model.size_vram ?? 0,
      expires_at: new Date(model.expires_at).toISOString(),
    }));
  }

  async remove(name: string, signal: AbortSignal): Promise<void> {
    await this.client(signal).delete({ model: name });
  }

  /** The pull's progress lines; ends after `success`, throws on Ollama's `{error}` line or a broken connection. */
  async *pull(name: string, signal: AbortSignal): AsyncGenerator<PullLine> {
    const progress = await this.client(signal).pull({ model: name, stream: true });
    for await (const line of progress) {
      yield {
        status: line.status,
        ...(line.digest && { digest: line.digest }),
        ...(typeof line.total === 'number' && { total: line.total }),
        ...(typeof line.completed === 'number' && { completed: line.completed }),
      };
    }
  }

  /** Loads the model into memory: an empty prompt makes /api/generate load it and answer nothing. */
  async load(name: string, signal: AbortSignal): Promise<void> {
    await this.client(signal).generate({ model: name, prompt: '', stream: false });
  }
}
