import type { Migration, MigrationProvider } from 'kysely';
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
import * as people from './2026-11-28-people.ts';
import * as signIns from './2026-11-28-sign-ins.ts';
import * as passkeys from './2026-11-28-webauthn-passkeys.ts';
import * as peopleApprovers from './2026-11-28-people-approvers.ts';
import * as peopleMemory from './2026-11-28-people-memory.ts';
import * as telegramLinks from './2026-11-28-telegram-links.ts';

/** Every migration, by its frozen date-prefixed name; Kysely runs them in name order. */
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
  '2026-11-28-people': people,
  '2026-11-28-sign-ins': signIns,
  '2026-11-28-webauthn-passkeys': passkeys,
  '2026-11-28-people-approvers': peopleApprovers,
  '2026-11-28-people-memory': peopleMemory,
  '2026-11-28-telegram-links': telegramLinks,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
