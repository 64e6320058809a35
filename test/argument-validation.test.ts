import { describe, expect, it, vi } from 'vitest';
import { compileArgumentsValidator } from '../src/tools/validation.ts';

describe('compileArgumentsValidator', () => {
  it('checks the formats MCP schemas use: uri, email, date-time', () => {
    const validate = compileArgumentsValidator({
      type: 'object',
      properties: { link: { type: 'string', format: 'uri' }, to: { type: 'string', format: 'email' }, at: { type: 'string', format: 'date-time' } },
    });
    expect(validate({ link: 'https://example.org/a?b=c', to: 'ada@example.org', at: '2026-05-01T09:30:00+02:00' })).toEqual({ ok: true });
    const wrong = validate({ link: 'not a uri', to: 'ada at example', at: 'tomorrow' });
    expect(wrong.ok).toBe(false);
    const message = wrong.ok ? '' : wrong.message;
    expect(message).toContain('"link" must match format "uri"');
    expect(message).toContain('"to" must match format "email"');
    expect(message).toContain('"at" must match format "date-time"');
  });

  it('ignores a format nothing knows, without printing a warning', () => {
    const warn = vi.spyOn(console, 'warn');
    try {
      const validate = compileArgumentsValidator({ type: 'object', properties: { where: { type: 'string', format: 'path' } } });
      expect(validate({ where: '/tmp' })).toEqual({ ok: true });
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });

  it('reads schemas that declare JSON Schema 2020-12, as MCP servers built on zod 4 send, and still draft-07 ones', () => {
    const modern = compileArgumentsValidator({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { point: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], items: false } },
      required: ['point'],
    });
    expect(modern({ point: [1, 2] })).toEqual({ ok: true });
    expect(modern({ point: [1, 'two'] }).ok).toBe(false);
    expect(modern({ point: [1, 2, 3] }).ok).toBe(false);
    const classic = compileArgumentsValidator({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { n: { type: 'number' } } });
    expect(classic({ n: 'x' })).toEqual({ ok: false, message: '"n" must be number' });
  });

  it('compiles a schema with an $id again when its tool comes back (a reload, a reconnected MCP server)', () => {
    const schema = () => ({ $id: 'https://example.org/tool-args', type: 'object', properties: { a: { type: 'number' } }, required: ['a'] });
    expect(compileArgumentsValidator(schema())({ a: 1 })).toEqual({ ok: true });
    expect(compileArgumentsValidator(schema())({})).toEqual({ ok: false, message: 'arguments is missing "a"' });
    const nested = () => ({ type: 'object', properties: { when: { $id: 'https://example.org/when', type: 'string', format: 'date' } } });
    expect(compileArgumentsValidator(nested())({ when: '2026-05-01' })).toEqual({ ok: true });
    expect(compileArgumentsValidator(nested())({ when: 'May' }).ok).toBe(false);
  });

  it('answers the same validator for the same schema object, and throws for a schema that is not one', () => {
    const schema = { type: 'object', properties: { a: { type: 'number' } } };
    expect(compileArgumentsValidator(schema)({ a: 'x' })).toEqual(compileArgumentsValidator(schema)({ a: 'x' }));
    expect(() => compileArgumentsValidator({ type: 'object', properties: { a: { type: 'nonsense' } } })).toThrow();
    expect(() => compileArgumentsValidator({ type: 'object', properties: { a: { $ref: '#/$defs/missing' } } })).toThrow(/missing/);
  });
});
