// `npx hearth <command>` (package.json's bin, through bin/hearth.js): backup, restore, doctor.
// Reads the configuration as the server does (src/config.ts: the environment over `.env`).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, envFileFor, loadConfig, type Config } from './config.ts';
import { createBackup, timestampedName } from './operations/backup.ts';
import { formatDoctorReport, runDoctor } from './operations/doctor.ts';
import { restoreBackup } from './operations/restore.ts';

const usage = `Usage: hearth <command> [--data-dir DIR]

  backup [file]     the database (an online copy, safe while Hearth runs) and DATA_DIR's files
                    in one .tar.gz; by default DATA_DIR/backups/hearth-backup-<time>.tar.gz
  restore <file>    checks the archive whole, then puts it in place of DATA_DIR's state;
                    refuses while a Hearth runs on that DATA_DIR
  doctor            what is configured, installed and reachable

  --data-dir DIR    this DATA_DIR instead of the configured one
`;

function fail(line: string, code = 1): never {
  process.stderr.write(`hearth: ${line}\n`);
  process.exit(code);
}

function configFor(dataDir: string | undefined): Config {
  try {
    return loadConfig({ ...process.env, ...(dataDir !== undefined && { DATA_DIR: path.resolve(dataDir) }) });
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message);
    throw error;
  }
}

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

async function backup(config: Config, file: string | undefined): Promise<void> {
  const result = await createBackup(config, file ?? path.join(config.DATA_DIR, 'backups', timestampedName('hearth-backup')));
  if (!result.ok) fail(result.message);
  const total = result.manifest.database.size + result.manifest.files.reduce((sum, entry) => sum + entry.size, 0);
  console.log(`Backed up ${path.resolve(config.DB_PATH)} (schema at ${result.manifest.last_migration ?? 'none'}) and ${result.manifest.files.length} files of ${path.resolve(config.DATA_DIR)} (${megabytes(total)}) to ${result.file}`);
  if (result.skipped.length > 0) console.log(`Left out (not regular files): ${result.skipped.join(', ')}`);
  if (result.outside.length > 0) console.log(`Not in the archive, since these settings point outside DATA_DIR: ${result.outside.join(', ')}`);
}

async function restore(config: Config, file: string | undefined): Promise<void> {
  if (file === undefined) fail(`restore needs the archive: hearth restore <file>\n\n${usage}`, 2);
  const result = await restoreBackup(config, file);
  if (!result.ok) fail(result.message);
  const { manifest } = result;
  console.log(
    `Restored the backup of ${manifest.created_at} (Hearth ${manifest.hearth_version}, schema at ${manifest.last_migration ?? 'none'}): ` +
      `the database at ${path.resolve(config.DB_PATH)} and ${manifest.files.length} files in ${path.resolve(config.DATA_DIR)}.`,
  );
  if (result.replaced) console.log(`What was there before is in ${result.replaced}.`);
}

async function doctor(config: Config): Promise<void> {
  const envFile = envFileFor(process.env);
  const report = await runDoctor(config, { envFile: existsSync(envFile) ? envFile : undefined });
  process.stdout.write(formatDoctorReport(report));
  if (report.problems > 0) process.exitCode = 1;
}

async function main(argv: string[]): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  } catch (error) {
    fail(`${(error as Error).message}\n\n${usage}`, 2);
  }
  const [command, argument, ...rest] = parsed.positionals;
  if (parsed.values.help || command === undefined || command === 'help') {
    process.stdout.write(usage);
    return;
  }
  if (rest.length > 0) fail(`too many arguments: ${rest.join(' ')}\n\n${usage}`, 2);
  const commands: Record<string, (config: Config) => Promise<void>> = {
    backup: (config) => backup(config, argument),
    restore: (config) => restore(config, argument),
    doctor: (config) => (argument === undefined ? doctor(config) : fail(`doctor takes no argument\n\n${usage}`, 2)),
  };
  const run = commands[command];
  if (!run) fail(`no command ${JSON.stringify(command)}\n\n${usage}`, 2);
  await run(configFor(parsed.values['data-dir']));
}

await main(process.argv.slice(2));
