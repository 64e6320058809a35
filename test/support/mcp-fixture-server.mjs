#!/usr/bin/env node
// A small MCP server over stdio, built with the official SDK's McpServer, for what the reference
// servers cannot show: its pid, tools added and removed at runtime (list_changed), a crash, a
// child of its own, its environment, paged tool lists, what it received, and what it can read
// and reach (probe: for the jail tests), and what a program run in its session can do to a terminal (run_attached).
//
// FIXTURE_LOG=<file>        appends one JSON line per message received and per aborted call
// FIXTURE_PAGE_SIZE=<n>     answers tools/list in pages of n tools
// FIXTURE_CRASH_AFTER_MS=<n> exits with code 3 n ms after initialization
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const logFile = process.env.FIXTURE_LOG;
const log = (entry) => {
  if (logFile) appendFileSync(logFile, `${JSON.stringify({ pid: process.pid, ...entry })}\n`);
};
const text = (value) => ({ content: [{ type: 'text', text: String(value) }] });

const server = new McpServer({ name: 'hearth-fixture', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
const added = new Map();

server.registerTool('pid', { description: 'Tells the server process id.' }, async () => text(process.pid));

server.registerTool('echo', { description: 'Echoes the text.', inputSchema: { text: z.string() } }, async ({ text: value }) => text(value));

server.registerTool('env', { description: 'Tells the environment as JSON.' }, async () => text(JSON.stringify(process.env)));

server.registerTool('sleep', { description: 'Waits, until cancelled.', inputSchema: { ms: z.number() } }, async ({ ms }, extra) => {
  log({ event: 'sleeping', requestId: extra.requestId });
  await new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    extra.signal.addEventListener('abort', () => {
      clearTimeout(timer);
      log({ event: 'aborted', requestId: extra.requestId });
      resolve();
    });
  });
  return text('slept');
});

server.registerTool('add_tool', { description: 'Adds a tool.', inputSchema: { name: z.string() } }, async ({ name }) => {
  added.set(name, server.registerTool(name, { description: `Added at runtime: ${name}.` }, async () => text(`I am ${name}`)));
  return text(`added ${name}`);
});

server.registerTool('remove_tool', { description: 'Removes a tool added at runtime.', inputSchema: { name: z.string() } }, async ({ name }) => {
  added.get(name)?.remove();
  added.delete(name);
  return text(`removed ${name}`);
});

server.registerTool('crash', { description: 'Exits at once with the code.', inputSchema: { code: z.number() } }, async ({ code }) => {
  process.stderr.write(`crashing on purpose with code ${code}\n`);
  process.exit(code);
});

server.registerTool('spawn_child', { description: 'Starts a detached child that runs until killed; tells its pid.' }, async () => {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' });
  child.unref();
  return text(child.pid);
});

server.registerTool(
  'run_attached',
  {
    description: 'Runs a program with this server\'s own standard descriptors (and session); tells what it wrote to descriptor 3.',
    inputSchema: { command: z.string(), args: z.array(z.string()) },
  },
  async ({ command, args }) => {
    const child = spawn(command, args, { stdio: ['inherit', 'inherit', 'inherit', 'pipe'] });
    let written = '';
    child.stdio[3].on('data', (chunk) => (written += chunk));
    const code = await new Promise((resolve) => child.once('close', resolve).once('error', (error) => resolve(error.code)));
    return text(written || `no answer (exit ${code})`);
  },
);

server.registerTool(
  'probe',
  { description: 'Reads each file ({ppid} stands for its parent process id) and fetches each URL; tells per target what came back or the error.', inputSchema: { reads: z.array(z.string()), urls: z.array(z.string()) } },
  async ({ reads, urls }) => {
    const found = { reads: {}, urls: {} };
    for (const file of reads) {
      try {
        found.reads[file] = readFileSync(file.replace('{ppid}', String(process.ppid)), 'latin1');
      } catch (error) {
        found.reads[file] = `error ${error.code}`;
      }
    }
    for (const url of urls) {
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(3000) });
        found.urls[url] = `answered ${response.status} ${(await response.text()).slice(0, 200)}`;
      } catch (error) {
        found.urls[url] = `error ${error.cause?.code ?? error.name}`;
      }
    }
    return text(JSON.stringify(found));
  },
);

const pageSize = Number(process.env.FIXTURE_PAGE_SIZE ?? 0);
if (pageSize > 0) {
  // McpServer answers tools/list in one page; this answers the same list in pages.
  const whole = server.server._requestHandlers.get('tools/list');
  server.server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
    const { tools } = await whole({ ...request, params: {} }, extra);
    const start = Number(request.params?.cursor ?? 0);
    const next = start + pageSize;
    return { tools: tools.slice(start, next), ...(next < tools.length && { nextCursor: String(next) }) };
  });
}

const transport = new StdioServerTransport();
await server.connect(transport);
const receive = transport.onmessage;
transport.onmessage = (message, extra) => {
  log({ event: 'received', method: message.method, id: message.id, params: message.params });
  receive?.(message, extra);
};

if (process.env.FIXTURE_CRASH_AFTER_MS) {
  server.server.oninitialized = () => {
    setTimeout(() => {
      process.stderr.write('crashing after start\n');
      process.exit(3);
    }, Number(process.env.FIXTURE_CRASH_AFTER_MS));
  };
}
