// One look at a backend: is it there, and does it have the model? Never throws:
// every failure is described with what the person can do about it.
import { get as httpGet } from 'node:http';
import { get as httpsGet } from 'node:https';
import { errorMessage, isRecord, networkFailureReason } from './errors.ts';
import type { BackendId } from '../backend-ids.ts';

export interface BackendTarget {
  backend: BackendId;
  model: string;
  /** OLLAMA_HOST, or OPENAI_BASE_URL (empty when it is not set). */
  url: string;
  apiKey?: string;
}

export interface ProbeResult {
  reachable: boolean;
  model_available: boolean;
  /** What is wrong, when something is. */
  message?: string;
  /** The action that puts it right. */
  fix?: string;
}

const listedModelsShown = 5;

/** One backend's check; `unreachableFix` is its entry's hint (backends.ts) for when it cannot be reached. */
export type BackendProbe = (target: BackendTarget, signal: AbortSignal, unreachableFix: string) => Promise<ProbeResult>;

export async function probeOllama(target: BackendTarget, signal: AbortSignal, unreachableFix: string): Promise<ProbeResult> {
  const answer = await getJson(new URL('api/tags', withTrailingSlash(target.url)), {}, signal);
  if (!answer.ok) {
    return { reachable: false, model_available: false, message: `Cannot reach Ollama at ${target.url} (${answer.reason}).`, fix: unreachableFix };
  }
  const models = isRecord(answer.body) && Array.isArray(answer.body['models']) ? answer.body['models'] : undefined;
  if (!models) {
    return { reachable: false, model_available: false, message: `${target.url} answered, but not as Ollama does.`, fix: unreachableFix };
  }
  const names = models.flatMap((model: unknown) => (isRecord(model) ? [model['name'], model['model']] : [])).filter((name) => typeof name === 'string');
  if (names.some((name) => sameOllamaModel(name, target.model))) return { reachable: true, model_available: true };
  return {
    reachable: true,
    model_available: false,
    message: `Ollama has no model ${target.model}.`,
    fix: `Run \`ollama pull ${target.model}\``,
  };
}

/** `qwen3` names the same model as `qwen3:latest`. */
export function sameOllamaModel(listed: string, wanted: string): boolean {
  const withTag = (name: string) => (name.includes(':') ? name : `${name}:latest`);
  return withTag(listed) === withTag(wanted);
}

export async function probeOpenAI(target: BackendTarget, signal: AbortSignal, unreachableFix: string): Promise<ProbeResult> {
  if (target.url === '') {
    return { reachable: false, model_available: false, message: 'No OpenAI-compatible endpoint is configured.', fix: 'Set OPENAI_BASE_URL (and OPENAI_MODEL)' };
  }
  const headers: Record<string, string> = target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {};
  const answer = await getJson(new URL('models', withTrailingSlash(target.url)), headers, signal);
  // Not every compatible server lists its models: one that answers 404 is there, and its model cannot be checked.
  if (!answer.ok && answer.status === 404) return { reachable: true, model_available: true };
  if (!answer.ok) {
    return { reachable: false, model_available: false, message: `Cannot reach the endpoint at ${target.url} (${answer.reason}).`, fix: unreachableFix };
  }
  if (target.model === '') {
    return { reachable: true, model_available: false, message: 'No model is set for the OpenAI-compatible endpoint.', fix: 'Set OPENAI_MODEL' };
  }
  const models = isRecord(answer.body) && Array.isArray(answer.body['data']) ? answer.body['data'] : [];
  const ids = models.flatMap((model: unknown) => (isRecord(model) && typeof model['id'] === 'string' ? [model['id']] : []));
  // Some servers (a single-model llama.cpp, proxies) list nothing useful; only a list without the model is a finding.
  if (ids.length === 0 || ids.includes(target.model)) return { reachable: true, model_available: true };
  const shown = ids.slice(0, listedModelsShown).join(', ') + (ids.length > listedModelsShown ? ', …' : '');
  return {
    reachable: true,
    model_available: false,
    message: `The endpoint at ${target.url} does not offer the model ${target.model}.`,
    fix: `Set OPENAI_MODEL to one it offers: ${shown}`,
  };
}

type JsonAnswer = { ok: true; body: unknown } | { ok: false; reason: string; status?: number };

/**
 * Through node:http rather than fetch: fetch loads Node's bundled undici, about 12 MB of a
 * process's memory, and this check runs at every start, long before any LLM call needs it
 * (docs/architecture.md, "Idle memory").
 */
function getJson(url: URL, headers: Record<string, string>, signal: AbortSignal): Promise<JsonAnswer> {
  const get = url.protocol === 'https:' ? httpsGet : httpGet;
  return new Promise((resolve) => {
    const fail = (error: unknown) =>
      resolve({ ok: false, reason: signal.aborted ? 'no answer in time' : (networkFailureReason(error) ?? errorMessage(error)) });
    const request = get(url, { headers: { accept: 'application/json', ...headers }, signal }, (response) => {
      const status = response.statusCode ?? 0;
      if (status < 200 || status > 299) {
        response.resume();
        const refused = status === 401 || status === 403;
        resolve({ ok: false, status, reason: refused ? `HTTP ${status}: the key was refused` : `HTTP ${status}` });
        return;
      }
      response.setEncoding('utf8');
      let text = '';
      response.on('data', (chunk: string) => (text += chunk));
      response.on('error', fail);
      response.on('end', () => {
        try {
          resolve({ ok: true, body: JSON.parse(text) });
        } catch (error) {
          fail(error);
        }
      });
    });
    request.on('error', fail);
  });
}

function withTrailingSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}
