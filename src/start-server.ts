import path from 'node:path';
import { buildApp } from './app.ts';
import { createDependencies } from './app-dependencies.ts';
import { ConfigError, defaultDataDir, loadConfig, type Config } from './config.ts';
import { quietWhenNothingServed, startIdleMemoryTrim } from './idle-memory-trim.ts';
import { packageRoot } from './package-root.ts';
import { logStateMigration, moveStateOutOfCheckout, type StateMigrationReport } from './state-migration.ts';
import { acquireInstanceLock } from './operations/instance-lock.ts';
import { restoreAdvice } from './operations/migration-backup.ts';
import { DatabaseStartError } from './store/database.ts';
import { listenFailure, probeListen, unwritableDataFolder } from './start-up-checks.ts';
import { logStartUpSummary } from './start-up-summary.ts';
import { Jail } from './jail/jail.ts';
import { createLogger, type Logger } from './logger.ts';
import { readTlsPair, tlsFilesOf } from './server/tls-certificate.ts';
import type { HardeningReport } from './process-hardening/harden-process.ts';
import type { CodeCacheState } from './code-cached-script.ts';

/**
 * Run from Hearth's checkout, the state an older Hearth kept there moves out first
 * (src/state-migration.ts): only while DATA_DIR is left to its default, since a DATA_DIR
 * chosen by hand says where state goes and an older Hearth with one kept its database there.
 */
async function moveState(config: Config): Promise<StateMigrationReport | undefined> {
  if (path.resolve(process.cwd()) !== packageRoot) return undefined;
  try {
    return await moveStateOutOfCheckout(config, packageRoot, { move: config.DATA_DIR === defaultDataDir(process.env) });
  } catch (error) {
    stop(`Moving your state out of Hearth's checkout into ${config.DATA_DIR} failed, so Hearth did not start: ${(error as Error).message}`);
  }
}

/** Only the built server has a code cache (src/code-cached-script.ts); without one it starts a little slower. */
function logCodeCache(codeCache: CodeCacheState | undefined, logger: Logger): void {
  if (codeCache === 'rejected') {
    logger.info('The start\'s code cache in dist/ was made by another version of node or with other node options, so the server compiled its code itself: `npm run build`, with the node and NODE_OPTIONS the server runs with, makes one that fits.');
  } else if (codeCache === 'damaged') {
    logger.warn('The start\'s code cache in dist/ fails its checksum and was not used: `npm run build` makes it again.');
  } else if (codeCache === 'used') {
    logger.debug('The start\'s code came compiled from the code cache the build made.');
  } else if (codeCache === 'missing') {
    logger.debug('The build made no code cache for the start (see its output), so the server compiled its code itself.');
  }
}

function stop(line: string): never {
  console.error(`hearth: ${line}`);
  process.exit(1);
}

/**
 * What src/main.ts does once the process is hardened: config → database → app → listen. Resolves
 * once the server listens, with `started`, which settles when its services have started too.
 */
export async function startServer(hardening: HardeningReport, codeCache?: CodeCacheState): Promise<{ started: Promise<void> }> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    stop(error.message);
  }
  const unwritable = unwritableDataFolder(config);
  if (unwritable) stop(unwritable);
  // Held until the process ends: `hearth restore` refuses while it is, and so does a second Hearth
  // on this DATA_DIR, after waiting a little for one that is still closing (a restart).
  const locked = acquireInstanceLock(config.DATA_DIR, 5000);
  if (!locked.ok) stop(`${locked.message} Two cannot share one DATA_DIR: stop the other, or give this one its own.`);
  const logger = createLogger(config.LOG_LEVEL, config.LOG_FORMAT);
  // Probing the machine for the jail waits on a few processes: it runs while the rest starts (issue 38).
  // Awaited by createDependencies; caught here only so that a start stopped before then leaves no unhandled rejection.
  const jail = Jail.create({ config, logger });
  jail.catch(() => undefined);
  const tlsFiles = tlsFilesOf(config);
  const tls = tlsFiles && readTlsPair(tlsFiles);
  if (tls && 'problem' in tls) stop(`${tls.problem}. Fix the file, or unset TLS_CERT_FILE and TLS_KEY_FILE for plain HTTP.`);
  const taken = await probeListen(config.HOST, config.PORT);
  if (taken) stop(taken);
  const migration = await moveState(config);
  let deps;
  try {
    deps = await createDependencies(config, { logger, jail });
  } catch (error) {
    if (!(error instanceof DatabaseStartError)) throw error;
    stop(error.backupFile ? `${error.message} ${restoreAdvice(error.backupFile)}` : error.message);
  }
  const app = await buildApp(config, deps);
  if (migration) logStateMigration(migration, deps.logger);
  if (hardening.problems.length > 0) {
    app.log.warn(`Hearth could not fully harden its own process (see docs/security.md): ${hardening.problems.join('; ')}.`);
  }
  logCodeCache(codeCache, deps.logger);
  let url: string;
  try {
    url = await app.listen({ host: config.HOST, port: config.PORT });
  } catch (error) {
    const line = listenFailure(error, config.HOST, config.PORT);
    if (!line) throw error;
    await app.close();
    stop(line);
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      app.log.info(`${signal}: shutting down`);
      // Released by hand rather than left to the exit: a lock nothing refers to would be collected, and closed, early.
      void app.close().then(() => {
        locked.lock.release();
        process.exit(0);
      });
    });
  }
  const trim = startIdleMemoryTrim(quietWhenNothingServed(app.server, () => app.agent.busy), deps.logger);
  const started = app.started.then(
    () => logStartUpSummary(url, deps, config.DATA_DIR).finally(() => trim.startUpFinished()),
    (error: unknown) => {
      app.log.fatal({ err: error }, 'Hearth could not start its services, so it stops');
      void app.close().finally(() => process.exit(1));
    },
  );
  return { started };
}
