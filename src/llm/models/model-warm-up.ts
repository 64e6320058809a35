import { EventEmitter } from 'node:events';
import { errorMessage } from '../errors.ts';
import type { OllamaModels } from './ollama-models.ts';

/** A model being loaded into memory ahead of its first answer (`model_loading` on the events socket). */
export interface ModelLoading {
  name: string;
  state: 'loading' | 'loaded' | 'failed';
  error?: string;
}

/**
 * Loads models in the background so the first answer after a pull or a switch does not pay the
 * load, one load per name at a time. No keep_alive is sent: Ollama keeps the model for as long as
 * its own setting says (OLLAMA_KEEP_ALIVE, five minutes by default), as it does for Hearth's chats.
 */
export class ModelWarmUp extends EventEmitter<{ loading: [loading: ModelLoading] }> {
  private readonly loading = new Map<string, Promise<ModelLoading>>();
  private readonly stopping = new AbortController();

  constructor(private readonly ollama: OllamaModels) {
    super();
  }

  warm(name: string): Promise<ModelLoading> {
    const running = this.loading.get(name);
    if (running) return running;
    const load = this.load(name).finally(() => this.loading.delete(name));
    this.loading.set(name, load);
    return load;
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.all(this.loading.values());
  }

  private async load(name: string): Promise<ModelLoading> {
    this.emit('loading', { name, state: 'loading' });
    let outcome: ModelLoading;
    try {
      await this.ollama.load(name, this.stopping.signal);
      outcome = { name, state: 'loaded' };
    } catch (error) {
      outcome = { name, state: 'failed', error: `Ollama could not load ${name}: ${errorMessage(error)}` };
    }
    this.emit('loading', outcome);
    return outcome;
  }
}
