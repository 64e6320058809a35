import { sql, type RawBuilder } from 'kysely';

/**
 * The owner who has been here longest, as an SQL value: whose a row is when its writer names no
 * person (a one-person Hearth, and the runs and channels that act for the household as a whole).
 */
export function firstOwnerId(): RawBuilder<string> {
  return sql<string>`(select id from people where role = 'owner' order by created_at limit 1)`;
}
