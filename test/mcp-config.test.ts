// MCP (docs/integrations.md, "MCP servers"): MCP_CONFIG_FILE, the `mcpServers` format other MCP clients use, read into servers and
// errors that name the server and the field; a bad entry never keeps the good ones from loading.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseMcpConfig, readMcpConfig, sameServerConfig } from '../src/tools/mcp/mcp-config.ts';

let folder: string;
let dataDir: string;

beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'hearth-mcp-config-'));
  dataDir = path.join(folder, 'data');
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

const parse = (value: unknown) => parseMcpConfig(path.join(folder, 'mcp.json'), typeof value === 'string' ? value : JSON.stringify(value), dataDir);

describe('reading the file', () => {
  it('a missing file means no servers, and no error', async () => {
    expect(await readMcpConfig(path.join(folder, 'mcp.json'), dataDir)).toEqual({ servers: [], errors: [], readable: true, invalid: [] });
  });

  it('reads stdio and Streamable HTTP servers in the file\'s order, a relative cwd against DATA_DIR', async () => {
    const file = path.join(folder, 'mcp.json');
    await writeFile(
      file,
      `\uFEFF${JSON.stringify({
        globalShortcut: 'Ctrl+Space',
        mcpServers: {
          files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/home/me/notes'], env: { LOG: 'debug' }, cwd: 'mcp/files' },
          absolute: { type: 'stdio', command: '/usr/bin/mcp-thing', cwd: '/srv/thing' },
          remote: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer abc' }, trusted: true },
          plain: { url: 'http://127.0.0.1:3001/mcp' },
          off: { command: 'something', disabled: true },
        },
      })}`,
    );
    const config = await readMcpConfig(file, dataDir);
    expect(config.errors).toEqual([]);
    expect(config.servers).toEqual([
      { name: 'files', transport: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/home/me/notes'], env: { LOG: 'debug' }, cwd: path.join(dataDir, 'mcp/files'), jail: { paths: {}, network: false }, trusted: false },
      { name: 'absolute', transport: 'stdio', command: '/usr/bin/mcp-thing', args: [], env: {}, cwd: '/srv/thing', jail: { paths: {}, network: false }, trusted: false },
      { name: 'remote', transport: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer abc' }, trusted: true },
      { name: 'plain', transport: 'http', url: 'http://127.0.0.1:3001/mcp', headers: {}, trusted: false },
    ]);
  });

  it('mcp.example.json, as shipped, is read without errors: one stdio and one HTTP server', async () => {
    const example = await readMcpConfig(path.resolve('mcp.example.json'), folder);
    expect(example.errors).toEqual([]);
    expect(example.servers.map(({ name, transport }) => [name, transport])).toEqual([
      ['files', 'stdio'],
      ['everything', 'http'],
    ]);
    // The filesystem server's jail shows it exactly the folder it serves, read-write.
    expect(example.servers[0]).toMatchObject({ jail: { paths: { '/home/me/Documents': 'rw' }, network: false } });
  });

  it('an empty file or an empty mapping means no servers', () => {
    expect(parse('  \n')).toMatchObject({ servers: [], errors: [], readable: true });
    expect(parse({ mcpServers: {} })).toMatchObject({ servers: [], errors: [], readable: true });
  });
});

describe('a file that cannot be used', () => {
  it('malformed JSON is reported with its line and column, by the file\'s base name', () => {
    const config = parse('{\n  "mcpServers": {\n    "files": { "command": "x", }\n  }\n}\n');
    expect(config.readable).toBe(false);
    expect(config.servers).toEqual([]);
    expect(config.errors).toEqual([{ file: 'mcp.json', message: 'not valid JSON at line 3, column 32: Expected double-quoted property name' }]);
  });

  it('not an object, no mcpServers, or mcpServers not a mapping', () => {
    expect(parse([1, 2]).errors).toEqual([{ file: 'mcp.json', message: 'the file must hold a JSON object: {"mcpServers": {"<name>": {...}}}' }]);
    expect(parse({ servers: {} }).errors).toEqual([{ file: 'mcp.json', message: 'missing "mcpServers": the file must be {"mcpServers": {"<name>": {...}}}' }]);
    expect(parse({ mcpServers: [] }).errors).toEqual([{ file: 'mcp.json', message: '"mcpServers" must be an object of servers by name, not a list' }]);
    expect(parse({ mcpServers: [] }).readable).toBe(false);
  });
});

describe('bad entries', () => {
  it('each is reported naming the server and the field, and the good servers still load', () => {
    const config = parse({
      mcpServers: {
        good: { command: 'node', args: ['server.js'] },
        numbers: { command: 'node', args: ['server.js', 3], env: { API_KEY: 42 } },
        neither: { args: ['x'] },
        both: { command: 'node', url: 'http://localhost/mcp' },
        ftp: { url: 'ftp://files.example.com' },
        typo: { command: 'node', arguments: ['server.js'] },
        mixed: { command: 'node', headers: { Authorization: 'x' } },
        stream: { type: 'sse', url: 'http://localhost:8080/sse' },
        empty: { command: '' },
        text: 'node server.js',
        'my server': { command: 'node' },
        'a__b': { command: 'node' },
        'also-good': { url: 'https://example.com/mcp' },
      },
    });
    expect(config.servers.map((server) => server.name)).toEqual(['good', 'also-good']);
    expect(config.readable).toBe(true);
    expect(config.errors).toEqual([
      { file: 'mcp.json', server: 'numbers', message: '"args[1]" must be text, not the number 3; "env.API_KEY" must be text, not the number 42' },
      { file: 'mcp.json', server: 'neither', message: 'missing "command" (a program Hearth starts) or "url" (a Streamable HTTP endpoint)' },
      { file: 'mcp.json', server: 'both', message: 'give either "command" (a program Hearth starts) or "url" (a Streamable HTTP endpoint), not both' },
      { file: 'mcp.json', server: 'ftp', message: '"url" must be an http:// or https:// URL, not "ftp://files.example.com"' },
      { file: 'mcp.json', server: 'typo', message: 'unknown field "arguments"' },
      { file: 'mcp.json', server: 'mixed', message: 'unknown field "headers": headers belong to a "url" server' },
      { file: 'mcp.json', server: 'stream', message: 'the SSE transport is not supported: give the server\'s Streamable HTTP "url" (often ending in /mcp)' },
      { file: 'mcp.json', server: 'empty', message: '"command" must not be empty' },
      { file: 'mcp.json', server: 'text', message: 'the entry must be an object with "command" or "url", not "node server.js"' },
      { file: 'mcp.json', server: 'my server', message: 'the server name "my server" must be letters, digits, _ or - (at most 40 characters, no "__"): it becomes part of tool names' },
      { file: 'mcp.json', server: 'a__b', message: 'the server name "a__b" must be letters, digits, _ or - (at most 40 characters, no "__"): it becomes part of tool names' },
    ]);
    expect(config.invalid).toEqual(['numbers', 'neither', 'both', 'ftp', 'typo', 'mixed', 'stream', 'empty', 'text', 'my server', 'a__b']);
  });

  it('an empty server name', () => {
    expect(parse({ mcpServers: { '': { command: 'node' } } }).errors).toEqual([{ file: 'mcp.json', message: 'a server name must not be empty' }]);
  });
});

describe('comparing settings', () => {
  it('the same settings in another key order are the same; any changed value is not', () => {
    const [first] = parse({ mcpServers: { files: { command: 'node', args: ['a'], env: { A: '1', B: '2' } } } }).servers;
    const [reordered] = parse({ mcpServers: { files: { env: { B: '2', A: '1' }, args: ['a'], command: 'node' } } }).servers;
    const [changed] = parse({ mcpServers: { files: { command: 'node', args: ['b'], env: { A: '1', B: '2' } } } }).servers;
    expect(sameServerConfig(first!, reordered!)).toBe(true);
    expect(sameServerConfig(first!, changed!)).toBe(false);
  });
});
