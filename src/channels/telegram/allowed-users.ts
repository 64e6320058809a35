import type { Context, MiddlewareFn } from 'grammy';

export type AllowedUsers = { ok: true; userIds: ReadonlySet<number> } | { ok: false; reason: string };

/**
 * Reads TELEGRAM_ALLOWED_USERS: comma-separated numeric Telegram user ids. Anything else is a
 * one-line reason the channel shows as its status instead of starting; usernames are refused
 * on purpose, since anyone can take a username someone gave up.
 */
export function parseAllowedUsers(value: string): AllowedUsers {
  const items = value.split(',').map((item) => item.trim()).filter((item) => item !== '');
  if (items.length === 0) {
    return { ok: false, reason: 'TELEGRAM_ALLOWED_USERS is empty, so the bot would answer nobody: set it to your numeric Telegram user id (@userinfobot tells it).' };
  }
  const userIds = new Set<number>();
  for (const item of items) {
    const id = /^\d{1,16}$/.test(item) ? Number(item) : Number.NaN;
    if (!Number.isSafeInteger(id) || id <= 0) {
      return { ok: false, reason: `TELEGRAM_ALLOWED_USERS: ${JSON.stringify(item)} is not a numeric Telegram user id (ids look like 123456789; @userinfobot tells yours).` };
    }
    userIds.add(id);
  }
  return { ok: true, userIds };
}

export interface Stranger {
  id: number;
  username?: string;
  first_name?: string;
}

/**
 * Remembers which strangers (people not in TELEGRAM_ALLOWED_USERS) have been logged, so that each
 * user id is logged once, however often they write; at most `capacity` ids are remembered, the
 * oldest forgotten first, so a flood of strangers cannot grow it without end.
 */
export class StrangerLog {
  private readonly seen = new Set<number>();

  constructor(
    private readonly log: (stranger: Stranger) => void,
    private readonly capacity = 10_000,
  ) {}

  /** Logs the stranger unless their id was logged already; says whether it logged. */
  note(stranger: Stranger): boolean {
    if (this.seen.has(stranger.id)) return false;
    this.seen.add(stranger.id);
    if (this.seen.size > this.capacity) this.seen.delete(this.seen.values().next().value!);
    this.log(stranger);
    return true;
  }
}

/**
 * Lets through only updates from an allowed person's private chat. Groups get nothing either;
 * only someone not allowed is worth a line for the owner (once, through `strangers`).
 */
export function allowedUsersOnly(allowed: ReadonlySet<number>, strangers: StrangerLog): MiddlewareFn<Context> {
  return async (context, next) => {
    const from = context.from;
    if (!from || context.chat?.type !== 'private' || !allowed.has(from.id)) {
      if (from && !from.is_bot && !allowed.has(from.id)) strangers.note(from);
      return;
    }
    await next();
  };
}
