// Scenario 5d: the idle RSS of a server process of its own with Home Assistant, MQTT, Telegram and
// one MCP server configured, each connected to a stand-in, beside 5b's with nothing configured.
import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fixtureScript } from '../../test/support/mcp-servers.ts';
import { mosquittoPath, startMosquitto, type Mosquitto } from '../../test/support/mosquitto.ts';
import { startTelegramBotApi } from '../../test/support/telegram-bot-api.ts';
import { track } from '../child-processes.ts';
import { sleep } from '../epoch-time.ts';
import type { HomeAssistantReport } from '../home-assistant-process.ts';
import { projectRoot } from '../project-root.ts';
import type { ScenarioResult } from '../report.ts';
import { ServerProcess } from '../server-process.ts';
import { megabytes } from '../statistics.ts';
import { makeTemporaryDirectory, removeTemporaryDirectory } from '../temporary-directories.ts';
import type { BenchContext } from './bench-context.ts';

const settleMs = 2_000;
const person = 7_500_002;

async function get(server: ServerProcess, url: string): Promise<any> {
  const response = await fetch(server.baseUrl + url, { headers: server.headers, signal: AbortSignal.timeout(5_000) });
  return response.json();
}

async function waitUntil(probe: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

export async function integrationsMemory({ llm }: BenchContext): Promise<ScenarioResult> {
  const directory = await makeTemporaryDirectory('hearth-bench-integrations-');
  const homeAssistant = track(
    fork(path.join(projectRoot, 'bench', 'home-assistant-process.ts'), [], { cwd: projectRoot, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
  );
  const telegram = await startTelegramBotApi();
  const mosquitto: Mosquitto | undefined = existsSync(mosquittoPath) ? await startMosquitto() : undefined;
  let server: ServerProcess | undefined;
  try {
    const [ready] = (await once(homeAssistant, 'message')) as [HomeAssistantReport];
    if (ready.type !== 'ready') throw new Error('the Home Assistant stand-in did not start');
    await writeFile(path.join(directory, 'mcp.json'), `${JSON.stringify({ mcpServers: { fixture: { command: process.execPath, args: [fixtureScript] } } })}\n`);
    ({ server } = await ServerProcess.start({
      dataDir: directory,
      databaseFile: path.join(directory, 'hearth.db'),
      llmUrl: llm.url,
      environment: {
        HA_URL: ready.url,
        HA_TOKEN: ready.token,
        ...(mosquitto && { MQTT_URL: mosquitto.url }),
        TELEGRAM_BOT_TOKEN: telegram.token,
        TELEGRAM_ALLOWED_USERS: String(person),
        TELEGRAM_API_ROOT: telegram.apiRoot,
      },
    }));
    const running = server;
    const expected = ['home_assistant', 'telegram', ...(mosquitto ? ['mqtt'] : [])];
    await waitUntil(async () => {
      const { integrations } = (await get(running, '/integrations')) as { integrations: { name: string; status: string }[] };
      return expected.every((name) => integrations.some((integration) => integration.name === name && integration.status === 'connected'));
    }, `${expected.join(', ')} connected`);
    await waitUntil(async () => (await get(running, '/agents/tools')).servers?.[0]?.status === 'connected', 'the MCP server connected');
    await sleep(settleMs);
    const kilobytes = await server.residentKilobytes();
    const configured = `Home Assistant, ${mosquitto ? 'MQTT, ' : ''}Telegram and one MCP server`;
    return {
      rows: [{ scenario: `5d. Idle RSS with ${configured} connected (${settleMs / 1000} s after)`, measured: megabytes(kilobytes), target: 'report only', passed: undefined }],
      details: [
        `5d. A server process of its own, on a new database, with HA_URL/HA_TOKEN at the Home Assistant stand-in (bench/home-assistant-process.ts), ` +
          (mosquitto ? `MQTT_URL at a Mosquitto of its own (${mosquittoPath}), ` : `no MQTT (no Mosquitto at ${mosquittoPath}), `) +
          `TELEGRAM_BOT_TOKEN at the Bot API stand-in (test/support/telegram-bot-api.ts) and an mcp.json naming the fixture MCP server ` +
          `(test/support/mcp-fixture-server.mjs); VmRSS of the server's own process ${settleMs / 1000} s after all of them report connected.`,
      ],
    };
  } finally {
    await server?.stop().catch(() => undefined);
    await mosquitto?.close().catch(() => undefined);
    await telegram.close().catch(() => undefined);
    homeAssistant.disconnect();
    await once(homeAssistant, 'exit').catch(() => undefined);
    await removeTemporaryDirectory(directory);
  }
}
