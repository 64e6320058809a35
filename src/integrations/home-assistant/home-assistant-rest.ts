import type { HassEntity } from 'home-assistant-js-websocket';

/** A REST answer, or why there is none; failures are data the tool words for the model. */
export type RestResult<Body> =
  | { ok: true; body: Body }
  | { ok: false; reason: 'unreachable' | 'token_rejected' | 'stopped' | 'refused'; status?: number; message: string };

const requestTimeoutMs = 15_000;

/** Calls Home Assistant's REST API with the long-lived token; the token never appears in what it returns. */
export class HomeAssistantRest {
  constructor(
    private readonly url: string,
    private readonly token: string,
  ) {}

  /** `POST /api/services/<domain>/<service>`: the states that changed while the service ran. */
  callService(domain: string, service: string, data: Record<string, unknown>, signal: AbortSignal): Promise<RestResult<HassEntity[]>> {
    return this.request(`/api/services/${encodeURIComponent(domain)}/${encodeURIComponent(service)}`, signal, { method: 'POST', body: data });
  }

  /** `GET /api/history/period/<start>`: one list of states per entity, oldest first. */
  history(entityIds: readonly string[], start: Date, signal: AbortSignal): Promise<RestResult<HassEntity[][]>> {
    const query = new URLSearchParams({ filter_entity_id: entityIds.join(','), end_time: new Date().toISOString() });
    return this.request(`/api/history/period/${encodeURIComponent(start.toISOString())}?${query}`, signal);
  }

  /** `GET /api/services`: every domain with its services. */
  services(signal: AbortSignal): Promise<RestResult<{ domain: string; services: Record<string, unknown> }[]>> {
    return this.request('/api/services', signal);
  }

  private async request<Body>(path: string, signal: AbortSignal, options: { method?: string; body?: unknown } = {}): Promise<RestResult<Body>> {
    const target = this.url.replace(/\/+$/, '') + path;
    let response: Response;
    try {
      response = await fetch(target, {
        method: options.method ?? 'GET',
        headers: { authorization: `Bearer ${this.token}`, ...(options.body !== undefined && { 'content-type': 'application/json' }) },
        ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
        signal: AbortSignal.any([signal, AbortSignal.timeout(requestTimeoutMs)]),
      });
    } catch (error) {
      if (signal.aborted) return { ok: false, reason: 'stopped', message: 'Stopped before Home Assistant answered.' };
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      return { ok: false, reason: 'unreachable', message: `Home Assistant at ${this.url} is unreachable (${cause}).` };
    }
    const text = await response.text().catch(() => '');
    if (response.status === 401 || response.status === 403) {
      return { ok: false, reason: 'token_rejected', status: response.status, message: `Home Assistant rejected the token (HTTP ${response.status}).` };
    }
    if (!response.ok) {
      return { ok: false, reason: 'refused', status: response.status, message: `Home Assistant answered HTTP ${response.status}${text ? `: ${text.slice(0, 300)}` : ''}` };
    }
    try {
      return { ok: true, body: (text === '' ? [] : JSON.parse(text)) as Body };
    } catch {
      return { ok: false, reason: 'refused', status: response.status, message: 'Home Assistant answered something that is not JSON.' };
    }
  }
}
