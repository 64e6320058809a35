import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import * as initial from './2026-11-22-initial.ts';
import * as userToolKv from './2026-11-22-user-tool-kv.ts';
import * as longTermMemory from './2026-11-23-long-term-memory.ts';
import * as approvals from './2026-11-24-approvals.ts';
import * as runs from './2026-11-24-runs.ts';
import * as notifications from './2026-11-25-notifications.ts';
import * as schedules from './2026-11-25-schedules.ts';
import * as scheduleRunStatus from './2026-11-26-schedule-run-status.ts';
import * as sessionKeys from './2026-11-27-session-keys.ts';
import * as sessionModel from './2026-11-28-session-model.ts';
import * as sessionsOfSchedules from './2026-11-28-sessions-of-schedules.ts';
import * as people from './2026-11-28T20-people.ts';
import * as signIns from './2026-11-28T20-sign-ins.ts';
import * as passkeys from './2026-11-28T20-webauthn-passkeys.ts';
import * as peopleApprovers from './2026-11-28T20-people-approvers.ts';
import * as peopleMemory from './2026-11-28T20-people-memory.ts';
import * as telegramLinks from './2026-11-28T20-telegram-links.ts';
import * as documents from './2026-11-29T06-documents.ts';

/**
 * Every migration, by its frozen name, in the order they run. Kysely runs them in the names'
 * alphabetical order and refuses a database that ran one a new name sorts before, so a new
 * name must sort after every other: `<date>-<name>`, or `<date>T<hour>-<name>` on a day that
 * already has one (`2026-11-28T20-people` comes after `2026-11-28-sessions-of-schedules`).
 * test/internals/people-migration.test.ts holds this list to that order.
 */
const migrations: Record<string, Migration> = {
  '2026-11-22-initial': initial,
  '2026-11-22-user-tool-kv': userToolKv,
  '2026-11-23-long-term-memory': longTermMemory,
  '2026-11-24-approvals': approvals,
  '2026-11-24-runs': runs,
  '2026-11-25-notifications': notifications,
  '2026-11-25-schedules': schedules,
  '2026-11-26-schedule-run-status': scheduleRunStatus,
  '2026-11-27-session-keys': sessionKeys,
  '2026-11-28-session-model': sessionModel,
  '2026-11-28-sessions-of-schedules': sessionsOfSchedules,
  '2026-11-28T20-people': people,
  '2026-11-28T20-people-approvers': peopleApprovers,
  '2026-11-28T20-people-memory': peopleMemory,
  '2026-11-28T20-sign-ins': signIns,
  '2026-11-28T20-telegram-links': telegramLinks,
  '2026-11-28T20-webauthn-passkeys': passkeys,
  '2026-11-29T06-documents': documents,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};

/** The names in the order this file lists them. */
export const migrationNames: readonly string[] = Object.keys(migrations);

export function migratorFor(db: Kysely<any>): Migrator {
  return new Migrator({ db, provider: migrationProvider });
}
