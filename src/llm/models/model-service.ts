import { EventEmitter } from 'node:events';
import { freemem, totalmem } from 'node:os';
import type { BackendId } from '../../backend-ids.ts';
import { refusal, type Refusal } from '../../failure.ts';
import type { BackendRegistry } from '../backend-registry.ts';
import type { BackendStatusMonitor } from '../backend-status.ts';
import { errorMessage, networkFailureReason } from '../errors.ts';
import type { LlmError } from '../types.ts';
import { readDefaultModels, writeDefaultModel } from './default-model-file.ts';
import { fitOf, type Fit, type MachineMemory } from './model-fit.ts';
import { ModelPulls, type PullStarted } from './model-pulls.ts';
import { ModelWarmUp, type ModelLoading } from './model-warm-up.ts';
import { OllamaModels, statusOf, type LoadedModel, type ModelDetails } from './ollama-models.ts';
import type { PullState } from './pull-state.ts';

/** Known capabilities are true or false; null is unknown (an OpenAI-compatible list, an Ollama that does not say). */
export interface Capabilities {
  tools: boolean | null;
  thinking: boolean | null;
  vision: boolean | null;
}

/** One model of GET /models (docs/protocol.md). */
export interface ModelEntry {
  name: string;
  size?: number;
  family?: string;
  parameters?: string;
  quantization?: string;
  context_length?: number;
  capabilities: Capabilities;
  loaded: LoadedModel | null;
  /** Profile ids whose model it is; "default" when it is the default model. */
  used_by: string[];
  fit: Fit;
}

export interface ModelsView {
  backend: BackendId;
  default_model: string;
  models: ModelEntry[];
  memory: MachineMemory;
  /** What loaded models take of the GPU's memory, where Ollama reports any. */
  gpu: { used: number } | null;
  pulls: PullState[];
}

export type ModelRefusal = Refusal<'not_supported' | 'model_not_found' | 'pull_running' | 'llm_unreachable' | 'llm_error'>;

export interface ModelServiceOptions {
  backends: BackendRegistry;
  backendStatus: Pick<BackendStatusMonitor, 'check' | 'followModel'>;
  /** OLLAMA_HOST; the model operations exist while Ollama is the default backend. */
  ollamaHost: string;
  dataDir: string;
  /** The profiles whose model `name` is (their ids). */
  profileUsers: (name: string) => string[];
  memory?: () => MachineMemory;
  fetch?: typeof fetch;
}

const unknownCapabilities: Capabilities = { tools: null, thinking: null, vision: null };
const detailsTimeoutMs = 10_000;

/**
 * The models of the default backend as the Models panel sees them, and what the owner does with
 * them: pull (with progress), cancel, delete, choose the default, load ahead of use. Says `pull`,
 * `loading` and `changed` for the events socket.
 */
export class ModelService extends EventEmitter<{ pull: [state: PullState]; loading: [loading: ModelLoading]; changed: [] }> {
  private readonly ollama: OllamaModels | undefined;
  private readonly pulls: ModelPulls | undefined;
  private readonly warmUp: ModelWarmUp | undefined;
  /** /api/show answers by model name, forgotten when the model is pulled again or deleted. */
  private readonly details = new Map<string, Promise<ModelDetails | undefined>>();
  private readonly memory: () => MachineMemory;

  constructor(private readonly options: ModelServiceOptions) {
    super();
    this.memory = options.memory ?? (() => ({ total: totalmem(), available: freemem() }));
    if (options.backends.defaultBackend !== 'ollama' || options.ollamaHost === '') return;
    this.ollama = new OllamaModels(options.ollamaHost, options.fetch);
    this.pulls = new ModelPulls(this.ollama);
    this.pulls.on('update', (state) => this.emit('pull', state));
    this.warmUp = new ModelWarmUp(this.ollama);
    this.warmUp.on('loading', (loading) => this.emit('loading', loading));
  }

  get backend(): BackendId {
    return this.options.backends.defaultBackend;
  }

  /** Puts the default model chosen from the page (DATA_DIR/models.json) over the configured one. */
  async restoreDefault(): Promise<void> {
    const chosen = (await readDefaultModels(this.options.dataDir))[this.backend];
    if (chosen) this.applyDefault(chosen);
  }

  defaultModel(): string {
    return this.options.backends.defaultModel();
  }

  currentPulls(): PullState[] {
    return this.pulls?.current() ?? [];
  }

  usedBy(name: string): string[] {
    return [...(name === this.defaultModel() ? ['default'] : []), ...this.options.profileUsers(name)];
  }

  async list(signal: AbortSignal): Promise<{ ok: true; view: ModelsView } | { ok: false; error: LlmError }> {
    const [listed, loaded] = await Promise.all([this.options.backends.defaultModels(signal), this.loadedOrNone(signal)]);
    if (!listed.ok) return listed;
    const memory = this.memory();
    const models = await Promise.all(
      listed.models.map(async (model): Promise<ModelEntry> => {
        const details = this.ollama ? await this.detailsOf(model.name) : undefined;
        const size = model.size;
        return {
          name: model.name,
          ...(size !== undefined && { size }),
          ...(details?.family && { family: details.family }),
          ...(details?.parameters && { parameters: details.parameters }),
          ...(details?.quantization && { quantization: details.quantization }),
          ...((details?.context_length ?? model.context_length) !== undefined && { context_length: details?.context_length ?? model.context_length }),
          capabilities: capabilitiesFrom(details),
          loaded: loaded.find((running) => running.name === model.name) ?? null,
          used_by: this.usedBy(model.name),
          fit: fitOf(size, memory),
        };
      }),
    );
    const vram = loaded.reduce((sum, model) => sum + model.size_vram, 0);
    return {
      ok: true,
      view: { backend: this.backend, default_model: this.defaultModel(), models, memory, gpu: vram > 0 ? { used: vram } : null, pulls: this.currentPulls() },
    };
  }

  /** What the model is known to do; all unknown when it cannot be asked. */
  async capabilities(name: string): Promise<Capabilities> {
    if (!this.ollama) return unknownCapabilities;
    return capabilitiesFrom(await this.detailsOf(name));
  }

  async loaded(signal: AbortSignal): Promise<{ ok: true; models: LoadedModel[] } | ({ ok: false } & ModelRefusal)> {
    if (!this.ollama) return this.notSupported('list the loaded models');
    try {
      return { ok: true, models: await this.ollama.loaded(signal) };
    } catch (error) {
      return this.ollamaRefusal(error);
    }
  }

  pull(name: string): PullStarted | ({ ok: false } & ModelRefusal) {
    if (!this.pulls) return this.notSupported('pull models');
    const started = this.pulls.start(name);
    if (started.ok) void started.finished.then((state) => this.pulled(state));
    return started;
  }

  /** Ends a running pull; false when none of that name runs. */
  cancelPull(name: string): boolean {
    return this.pulls?.cancel(name) ?? false;
  }

  async remove(name: string, signal: AbortSignal): Promise<{ ok: true } | ({ ok: false } & ModelRefusal)> {
    if (!this.ollama) return this.notSupported('delete models');
    try {
      await this.ollama.remove(name, signal);
    } catch (error) {
      if (statusOf(error) === 404) return refusal('model_not_found', `Ollama has no model named ${name}.`);
      return this.ollamaRefusal(error);
    }
    this.details.delete(name);
    this.emit('changed');
    if (name === this.defaultModel()) void this.options.backendStatus.check();
    return { ok: true };
  }

  /** Makes `name` the default model from now on, and after a restart. */
  async setDefault(name: string): Promise<void> {
    await writeDefaultModel(this.options.dataDir, this.backend, name);
    this.applyDefault(name);
    this.emit('changed');
    this.warm(name);
  }

  /** Loads the model in the background (Ollama only; elsewhere there is nothing to load ahead). */
  warm(name: string): boolean {
    if (!this.warmUp) return false;
    void this.warmUp.warm(name);
    return true;
  }

  async stop(): Promise<void> {
    await Promise.all([this.pulls?.stopAll(), this.warmUp?.stop()]);
  }

  private applyDefault(name: string): void {
    this.options.backends.setDefaultModel(name);
    this.options.backendStatus.followModel(name);
  }

  private pulled(state: PullState): void {
    if (state.state !== 'done') return;
    this.details.delete(state.name);
    this.emit('changed');
    if (state.name === this.defaultModel()) void this.options.backendStatus.check();
    if (this.usedBy(state.name).length > 0) this.warm(state.name);
  }

  private detailsOf(name: string): Promise<ModelDetails | undefined> {
    let known = this.details.get(name);
    if (!known) {
      known = this.ollama!.details(name, AbortSignal.timeout(detailsTimeoutMs)).catch(() => {
        // Not kept: the next listing asks again.
        this.details.delete(name);
        return undefined;
      });
      this.details.set(name, known);
    }
    return known;
  }

  private async loadedOrNone(signal: AbortSignal): Promise<LoadedModel[]> {
    if (!this.ollama) return [];
    return this.ollama.loaded(signal).catch(() => []);
  }

  private notSupported(what: string): { ok: false } & ModelRefusal {
    return refusal('not_supported', `Hearth can ${what} only with Ollama; the default backend is ${this.backend}.`);
  }

  private ollamaRefusal(error: unknown): { ok: false } & ModelRefusal {
    const reason = networkFailureReason(error);
    if (reason) return refusal('llm_unreachable', `Cannot reach Ollama at ${this.ollama!.host} (${reason}). Is \`ollama serve\` running?`);
    return refusal('llm_error', `Ollama reported an error: ${errorMessage(error)}`);
  }
}

function capabilitiesFrom(details: ModelDetails | undefined): Capabilities {
  const named = details?.capabilities;
  if (!named) return unknownCapabilities;
  return { tools: named.includes('tools'), thinking: named.includes('thinking'), vision: named.includes('vision') };
}
