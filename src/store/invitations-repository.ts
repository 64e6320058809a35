import type { Db } from './database.ts';

export interface StoredInvitation {
  id: string;
  role: string;
  invitedBy: string;
  createdAt: string;
  expiresAt: string;
}

export async function insertInvitation(db: Db, invitation: StoredInvitation & { codeHash: string }): Promise<void> {
  await db
    .insertInto('invitations')
    .values({
      id: invitation.id,
      code_hash: invitation.codeHash,
      role: invitation.role,
      invited_by: invitation.invitedBy,
      created_at: invitation.createdAt,
      expires_at: invitation.expiresAt,
      accepted_at: null,
      accepted_by: null,
    })
    .execute();
}

/** The invitation of this code while it is unused and unexpired at `now`. */
export async function findOpenInvitation(db: Db, codeHash: string, now: string): Promise<{ id: string; role: string; invitedBy: string | null } | undefined> {
  return db.selectFrom('invitations').select(['id', 'role', 'invited_by as invitedBy']).where('code_hash', '=', codeHash).where('accepted_at', 'is', null).where('expires_at', '>', now).executeTakeFirst();
}

/** Marks it used by `personId`; false when someone used it first (the update is the one-time check). */
export async function acceptInvitation(db: Db, id: string, personId: string, now: string): Promise<boolean> {
  const result = await db.updateTable('invitations').set({ accepted_at: now, accepted_by: personId }).where('id', '=', id).where('accepted_at', 'is', null).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
