import type { Person } from '../people/person.ts';

/** A person as the REST API answers them (GET /me, /people). */
export function personJson(person: Person) {
  return { id: person.id, name: person.name, role: person.role, has_passphrase: person.hasPassphrase, created_at: person.createdAt };
}
