import Fastify, { type FastifyInstance, type FastifyRequest, type InjectOptions } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import type { Person, Role } from '../../src/people/person.ts';
import { documentRoutes } from '../../src/server/document-routes.ts';
import { handleError } from '../../src/server/error-handler.ts';
import { InMemoryDocuments } from '../support/in-memory-documents.ts';

// The routes' shapes and refusals over the test double of the library; the real library is the whole-server test's.

const people: Record<string, Person> = Object.fromEntries(
  (['owner', 'adult', 'child', 'guest'] as Role[]).map((role) => [role, { id: `${role}-id`, name: role, role, hasPassphrase: true, createdAt: '2026-11-29T00:00:00Z' }]),
);

let opened: { app: FastifyInstance; documents: InMemoryDocuments }[] = [];
afterEach(async () => {
  for (const { app, documents } of opened) {
    await app.close();
    documents.close();
  }
  opened = [];
});

async function routes(limitMegabytes = 1) {
  const documents = new InMemoryDocuments(limitMegabytes * 1024 * 1024);
  const app = Fastify({ ajv: { customOptions: { coerceTypes: false, removeAdditional: false } } }) as unknown as FastifyInstance;
  app.setErrorHandler(handleError);
  app.decorateRequest('caller', null as unknown as FastifyRequest['caller']);
  app.addHook('onRequest', async (request) => {
    request.caller = { person: people[String(request.headers['x-role'] ?? 'owner')]!, via: 'api_token' };
  });
  await app.register(documentRoutes, { documents, config: { SESSION_FILES_MAX_SIZE_MB: limitMegabytes } });
  opened.push({ app, documents });
  return { app, documents };
}

function form(name: string, content: string, library?: string): { payload: Buffer; headers: Record<string, string> } {
  const boundary = 'hearth-document-test';
  const parts = [
    ...(library ? [`--${boundary}\r\nContent-Disposition: form-data; name="library"\r\n\r\n${library}\r\n`] : []),
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: text/plain\r\n\r\n${content}\r\n`,
    `--${boundary}--\r\n`,
  ];
  return { payload: Buffer.from(parts.join('')), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

describe('document routes (over the test double)', () => {
  it('adds by multipart and by raw body, lists, reads, opens at a passage, downloads, searches and deletes', async () => {
    const { app } = await routes();
    const added = await app.inject({ method: 'POST', url: '/documents', ...form('hood.md', 'The hood takes filter F-22.\n\nClean it monthly.', 'household') });
    expect(added.statusCode).toBe(201);
    const document = added.json();
    expect(document).toMatchObject({ name: 'hood.md', library: 'household', owner_person_id: null, status: 'ready', source: 'rest', passages: 2 });

    const raw = await app.inject({ method: 'POST', url: '/documents?name=notes.txt', payload: 'private notes', headers: { 'content-type': 'text/plain' } });
    expect(raw.statusCode).toBe(201);
    expect(raw.json()).toMatchObject({ name: 'notes.txt', library: 'mine', owner_person_id: 'owner-id' });

    expect((await app.inject({ url: '/documents' })).json().documents.map((each: { name: string }) => each.name).sort()).toEqual(['hood.md', 'notes.txt']);
    expect((await app.inject({ url: `/documents/${document.id}` })).json()).toEqual(document);
    const passages = await app.inject({ url: `/documents/${document.id}/passages?from=1&count=5` });
    expect(passages.json()).toEqual({ passages: [{ document_id: document.id, ordinal: 1, page: null, heading: null, text: 'Clean it monthly.' }] });

    const file = await app.inject({ url: `/documents/${document.id}/file` });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toBe('application/octet-stream');
    expect(file.headers['content-disposition']).toBe("attachment; filename*=UTF-8''hood.md");
    expect(file.headers['x-content-type-options']).toBe('nosniff');
    expect(file.body).toBe('The hood takes filter F-22.\n\nClean it monthly.');

    const search = (await app.inject({ url: '/documents/search?q=which%20filter&limit=3' })).json();
    expect(search.results[0]).toMatchObject({ document_id: document.id, name: 'hood.md', passage: 0, text: 'The hood takes filter F-22.' });

    expect((await app.inject({ method: 'DELETE', url: `/documents/${document.id}` })).statusCode).toBe(204);
    expect((await app.inject({ url: `/documents/${document.id}` })).json().error.code).toBe('document_not_found');
  });

  it('keeps a private document private: another person gets 404 everywhere, never 403', async () => {
    const { app } = await routes();
    const id = (await app.inject({ method: 'POST', url: '/documents?name=diary.txt&library=mine', payload: 'mine alone', headers: { 'content-type': 'text/plain', 'x-role': 'adult' } })).json().id;
    for (const [method, url] of [['GET', `/documents/${id}`], ['GET', `/documents/${id}/passages`], ['GET', `/documents/${id}/file`], ['DELETE', `/documents/${id}`]] as const) {
      const response = await app.inject({ method, url, headers: { 'x-role': 'owner' } });
      expect([method, url, response.statusCode, response.json().error.code]).toEqual([method, url, 404, 'document_not_found']);
    }
    expect((await app.inject({ url: '/documents', headers: { 'x-role': 'owner' } })).json()).toEqual({ documents: [] });
    expect((await app.inject({ url: '/documents/search?q=mine', headers: { 'x-role': 'owner' } })).json()).toEqual({ results: [] });
  });

  it('refuses what a role may not do, and bad input, with clear errors', async () => {
    const { app } = await routes(1);
    const household = (await app.inject({ method: 'POST', url: '/documents', ...form('rules.txt', 'House rules', 'household') })).json();
    const refused = async (request: InjectOptions, status: number, code: string) => {
      const response = await app.inject(request);
      expect([response.statusCode, response.json().error.code]).toEqual([status, code]);
      return response.json().error.message as string;
    };
    await refused({ method: 'POST', url: '/documents?name=a.txt', payload: 'x', headers: { 'content-type': 'text/plain', 'x-role': 'guest' } }, 403, 'forbidden');
    await refused({ method: 'POST', url: '/documents', ...form('a.txt', 'x', 'household'), headers: { ...form('a.txt', 'x', 'household').headers, 'x-role': 'child' } }, 403, 'forbidden');
    expect(await refused({ method: 'DELETE', url: `/documents/${household.id}`, headers: { 'x-role': 'adult' } }, 403, 'forbidden')).toContain('owner or whoever added it');
    expect((await app.inject({ url: '/documents', headers: { 'x-role': 'guest' } })).json()).toEqual({ documents: [] });
    expect(await refused({ method: 'POST', url: '/documents', payload: 'no name', headers: { 'content-type': 'text/plain' } }, 400, 'invalid_request')).toContain('?name=');
    await refused({ method: 'POST', url: '/documents?name=a.txt&library=everyone', payload: 'x', headers: { 'content-type': 'text/plain' } }, 400, 'invalid_request');
    await refused({ method: 'POST', url: '/documents', ...form('a.txt', 'x', 'everyone') }, 400, 'invalid_request');
    await refused({ method: 'POST', url: '/documents?name=photo.jpg', payload: 'x', headers: { 'content-type': 'image/jpeg' } }, 415, 'unsupported_type');
    await refused({ method: 'POST', url: '/documents?name=big.txt', payload: Buffer.alloc(1024 * 1024 + 10, 97), headers: { 'content-type': 'text/plain' } }, 413, 'file_too_large');
    await refused({ method: 'POST', url: '/documents', ...form('big.txt', 'a'.repeat(1024 * 1024 + 10)) }, 413, 'file_too_large');
    await refused({ url: '/documents/search?q=%20' }, 400, 'invalid_request');
    await refused({ url: '/documents/search?q=rules&limit=99' }, 400, 'invalid_request');
    await refused({ url: `/documents/${household.id}/passages?from=-1` }, 400, 'invalid_request');
  });
});
