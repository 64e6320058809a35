import { buildApp, createDependencies } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`hearth: ${error.message}`);
    process.exit(1);
  }
  const deps = await createDependencies(config);
  const app = await buildApp(config, deps);
  await app.listen({ host: config.HOST, port: config.PORT });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      app.log.info(`${signal}: shutting down`);
      void app.close().then(() => process.exit(0));
    });
  }
}

await main();
