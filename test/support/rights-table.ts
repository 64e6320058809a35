import { readFile } from 'node:fs/promises';
import { roles, type Role } from '../../src/people/person.ts';

/** Whether the caller acts on a thing of their own or on someone else's. */
export type Whose = 'own' | 'another';

/** One row of docs/protocol.md's *Who may do what* table. */
export interface RightsRow {
  /** The route cell as written, without backticks: `GET /sessions/:id shared`. */
  route: string;
  /** The code a 404 answers with (`session_not_found`), or '' for a route with none. */
  missing: string;
  /** Per role, the documented answer for their own thing and for another's; undefined where the row does not apply (`—`). */
  answers: Record<Role, Record<Whose, string | undefined>>;
}

const heading = '## Who may do what';

/** Reads the table from docs/protocol.md: the one place the answers are written down. */
export async function readRightsTable(file = 'docs/protocol.md'): Promise<RightsRow[]> {
  const markdown = await readFile(file, 'utf8');
  const start = markdown.indexOf(heading);
  if (start < 0) throw new Error(`${file} has no "${heading}" section`);
  const section = markdown.slice(start + heading.length).split(/^## /m)[0]!;
  const lines = section.split('\n').filter((line) => line.startsWith('|'));
  const [header, divider, ...body] = lines;
  const columns = cells(header ?? '');
  if (divider === undefined || columns.join(',') !== ['route', 'missing', ...roles].join(',')) {
    throw new Error(`the table under "${heading}" must have the columns route | missing | ${roles.join(' | ')}`);
  }
  return body.map((line) => {
    const [route = '', missing = '', ...perRole] = cells(line);
    if (perRole.length !== roles.length) throw new Error(`row "${line}" has ${perRole.length} role cells, not ${roles.length}`);
    const answers = Object.fromEntries(roles.map((role, index) => [role, ownAndAnother(perRole[index]!)])) as RightsRow['answers'];
    return { route: route.replaceAll('`', ''), missing: missing.replaceAll('`', ''), answers };
  });
}

function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((cell) => cell.trim());
}

/** `200 / 404` → both; `— / 403` → another's only; `200` (nothing is anyone's) → checked once, as the caller's own. */
function ownAndAnother(cell: string): Record<Whose, string | undefined> {
  const [own = '', another = ''] = cell.split('/').map((part) => part.trim());
  const applies = (value: string) => (value === '—' || value === '' ? undefined : value);
  return { own: applies(own), another: applies(another) };
}
