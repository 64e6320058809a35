/** Who may do what in a household (docs/people.md). */
export const roles = ['owner', 'adult', 'child', 'guest'] as const;
export type Role = (typeof roles)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (roles as readonly string[]).includes(value);
}

export interface Person {
  id: string;
  name: string;
  role: Role;
  /** False for the owner a new Hearth starts with, until they choose a passphrase. */
  hasPassphrase: boolean;
  createdAt: string;
}

/**
 * How a request or a run proved whose it is: the AUTH_TOKEN (the owner), a loopback request to a
 * household of one, a sign-in cookie, a personal API token, a linked Telegram account, or a
 * schedule running for the person who made it.
 */
export type CallerVia = 'auth_token' | 'loopback' | 'sign_in' | 'api_token' | 'telegram' | 'schedule';

export interface Caller {
  person: Person;
  via: CallerVia;
  /** The sign-in's or personal token's id, so what was opened with it can end with it. */
  credentialId?: string;
}

/** A person as events and the audit name them: enough to say who, nothing more. */
export interface PersonName {
  id: string;
  name: string;
}

export function personName(person: Pick<Person, 'id' | 'name'>): PersonName {
  return { id: person.id, name: person.name };
}
