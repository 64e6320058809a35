// Scenarios 17 and 18: Home Assistant. 17 times the entity search of the real connection over a
// 2,000-entity house, in this process. 18 runs a server process of its own connected to the HA
// stand-in (a child process, bench/home-assistant-process.ts) and times GET /health from a third
// process (bench/health-prober.ts) while the stand-in sends 1,000 state_changed events a second.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import pino from 'pino';
import { HomeAssistant } from '../../src/integrations/home-assistant/home-assistant.ts';
import { IntegrationRegistry } from '../../src/integrations/integration-registry.ts';
import { startHomeAssistantStandIn } from '../../test/support/home-assistant-stand-in.ts';
import { track } from '../child-processes.ts';
import { sleep } from '../epoch-time.ts';
import { HealthProber } from '../health-prober.ts';
import type { HomeAssistantCommand, HomeAssistantReport } from '../home-assistant-process.ts';
import { projectRoot } from '../project-root.ts';
import type { ScenarioResult } from '../report.ts';
import { ServerProcess } from '../server-process.ts';
import { maximum, median, milliseconds, percentile } from '../statistics.ts';
import { makeTemporaryDirectory, removeTemporaryDirectory } from '../temporary-directories.ts';
import type { BenchContext } from './bench-context.ts';

const extraEntities = 2_000;
const queries = ['kitchen light', 'bedroom temperature', 'garage', 'front door', 'office plug power', 'living room lamp', 'hallway motion', 'thermostat'];
const warmUpRounds = 20;
const rounds = 200;
const searchBudgetMs = 2;

const stormEventsPerSecond = 1_000;
const stormMs = 5_000;
const healthBudgetMs = 20;

export async function homeAssistantSearchTimes(): Promise<ScenarioResult> {
  const standIn = await startHomeAssistantStandIn({ extraEntities });
  const integrations = new IntegrationRegistry();
  const connected = new Promise<void>((resolve) => integrations.on('changed', (status) => status.status === 'connected' && resolve()));
  const homeAssistant = new HomeAssistant({ url: standIn.url, token: standIn.token, integrations, logger: pino({ level: 'silent' }) });
  try {
    homeAssistant.start();
    await connected;
    const times: number[] = [];
    for (let round = 0; round < warmUpRounds + rounds; round++) {
      for (const query of queries) {
        const started = performance.now();
        homeAssistant.index.search(query);
        if (round >= warmUpRounds) times.push(performance.now() - started);
      }
    }
    const medianMs = median(times);
    return {
      rows: [
        {
          scenario: `17. Home Assistant \`search\` over ${homeAssistant.index.size.toLocaleString('en')} entities`,
          measured: `median ${medianMs.toFixed(3)} ms (p95 ${percentile(times, 0.95).toFixed(3)} ms, max ${maximum(times).toFixed(2)} ms); ${times.length.toLocaleString('en')} searches`,
          target: `median < ${searchBudgetMs} ms`,
          passed: medianMs < searchBudgetMs,
        },
      ],
      details: [
        `17. HA search: the real HomeAssistant connection (src/integrations/home-assistant/) loaded from the test stand-in's house plus ${extraEntities.toLocaleString('en')} generated entities, ` +
          `then EntityIndex.search() timed for ${queries.length} everyday queries (${queries.map((query) => `"${query}"`).join(', ')}), ${rounds} rounds after ${warmUpRounds} warm-up rounds.`,
      ],
    };
  } finally {
    await homeAssistant.close();
    await standIn.close();
  }
}

export async function stateChangedStorm({ llm }: BenchContext): Promise<ScenarioResult> {
  const directory = await makeTemporaryDirectory('hearth-bench-home-assistant-');
  const standIn = track(
    fork(path.join(projectRoot, 'bench', 'home-assistant-process.ts'), [], { cwd: projectRoot, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
  );
  const reports = (type: HomeAssistantReport['type']) =>
    new Promise<HomeAssistantReport>((resolve) => {
      const listen = (report: HomeAssistantReport) => {
        if (report.type !== type) return;
        standIn.off('message', listen);
        resolve(report);
      };
      standIn.on('message', listen);
    });
  let server: ServerProcess | undefined;
  const prober = await HealthProber.start();
  try {
    const ready = await reports('ready');
    if (ready.type !== 'ready') throw new Error('the stand-in did not start');
    ({ server } = await ServerProcess.start({
      dataDir: directory,
      databaseFile: path.join(directory, 'hearth.db'),
      llmUrl: llm.url,
      environment: { HA_URL: ready.url, HA_TOKEN: ready.token },
    }));
    await waitForConnected(server);
    const before = await prober.timesFor(server, 2_000);
    const finished = reports('storm_finished');
    standIn.send({ type: 'storm', eventsPerSecond: stormEventsPerSecond, durationMs: stormMs } satisfies HomeAssistantCommand);
    const during = await prober.timesUntil(server, finished);
    const sent = (await finished) as Extract<HomeAssistantReport, { type: 'storm_finished' }>;
    return {
      rows: [
        {
          scenario: `18. \`/health\` during a state_changed storm of ${stormEventsPerSecond.toLocaleString('en')} events/s`,
          measured:
            `max ${milliseconds(maximum(during))} (median ${milliseconds(median(during), 2)}, p99 ${milliseconds(percentile(during, 0.99))}, ${during.length.toLocaleString('en')} requests); ` +
            `${sent.sent.toLocaleString('en')} events in ${stormMs / 1000} s; before the storm max ${milliseconds(maximum(before))}`,
          target: `max < ${healthBudgetMs} ms`,
          passed: maximum(during) < healthBudgetMs,
        },
      ],
      details: [
        `18. HA storm: a server process of its own with HA_URL/HA_TOKEN pointing at the stand-in, which runs in a child process (bench/home-assistant-process.ts) and, once the server reports ` +
          `home_assistant connected, sends state_changed for its numeric sensors at ${stormEventsPerSecond.toLocaleString('en')} a second for ${stormMs / 1000} s; GET /health timed back to back from a process of its own (bench/health-prober-process.ts), for 2 s before and throughout.`,
      ],
    };
  } finally {
    await prober.close();
    await server?.stop().catch(() => undefined);
    standIn.disconnect();
    await once(standIn, 'exit').catch(() => undefined);
    await removeTemporaryDirectory(directory);
  }
}

async function waitForConnected(server: ServerProcess): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const body = (await (await fetch(`${server.baseUrl}/integrations`, { headers: server.headers })).json()) as { integrations: { name: string; status: string }[] };
    if (body.integrations.some((integration) => integration.name === 'home_assistant' && integration.status === 'connected')) return;
    await sleep(50);
  }
  throw new Error('the server never connected to the Home Assistant stand-in');
}
