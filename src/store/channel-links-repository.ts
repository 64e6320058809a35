import type { Db } from './database.ts';

export interface StoredLinkCode {
  channel: string;
  personId: string;
  expiresAt: string;
}

export interface StoredChannelLink {
  account: string;
  personId: string;
  linkedAt: string;
}

/** A new code for the person; any code they had for the channel is gone, so only the last one shown works. */
export async function replaceLinkCode(db: Db, code: StoredLinkCode & { codeHash: string; createdAt: string }): Promise<void> {
  await db.transaction().execute(async (transaction) => {
    await transaction.deleteFrom('channel_link_codes').where('person_id', '=', code.personId).where('channel', '=', code.channel).execute();
    await transaction
      .insertInto('channel_link_codes')
      .values({ code_hash: code.codeHash, channel: code.channel, person_id: code.personId, created_at: code.createdAt, expires_at: code.expiresAt })
      .execute();
  });
}

/** Takes the code out (a code works once): what it was for, expired or not; undefined when no such code is stored. */
export async function takeLinkCode(db: Db, channel: string, codeHash: string): Promise<StoredLinkCode | undefined> {
  const row = await db
    .deleteFrom('channel_link_codes')
    .where('code_hash', '=', codeHash)
    .where('channel', '=', channel)
    .returning(['channel', 'person_id', 'expires_at'])
    .executeTakeFirst();
  return row && { channel: row.channel, personId: row.person_id, expiresAt: row.expires_at };
}

/** Links the account to the person, instead of anyone it was linked to before. */
export async function upsertChannelLink(db: Db, channel: string, link: StoredChannelLink): Promise<void> {
  await db
    .insertInto('channel_links')
    .values({ channel, account: link.account, person_id: link.personId, linked_at: link.linkedAt })
    .onConflict((conflict) => conflict.columns(['channel', 'account']).doUpdateSet({ person_id: link.personId, linked_at: link.linkedAt }))
    .execute();
}

export async function findChannelLink(db: Db, channel: string, account: string): Promise<StoredChannelLink | undefined> {
  const row = await db.selectFrom('channel_links').select(['account', 'person_id', 'linked_at']).where('channel', '=', channel).where('account', '=', account).executeTakeFirst();
  return row && { account: row.account, personId: row.person_id, linkedAt: row.linked_at };
}

export async function listChannelLinks(db: Db, channel: string): Promise<StoredChannelLink[]> {
  const rows = await db.selectFrom('channel_links').select(['account', 'person_id', 'linked_at']).where('channel', '=', channel).orderBy('linked_at').execute();
  return rows.map((row) => ({ account: row.account, personId: row.person_id, linkedAt: row.linked_at }));
}

/** Every account of the channel linked to the person, and their unused codes; returns how many links went. */
export async function deleteChannelLinksOf(db: Db, channel: string, personId: string): Promise<number> {
  return db.transaction().execute(async (transaction) => {
    await transaction.deleteFrom('channel_link_codes').where('person_id', '=', personId).where('channel', '=', channel).execute();
    const result = await transaction.deleteFrom('channel_links').where('person_id', '=', personId).where('channel', '=', channel).executeTakeFirst();
    return Number(result.numDeletedRows);
  });
}
