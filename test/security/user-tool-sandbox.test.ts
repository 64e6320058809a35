// The user-tool sandbox (issue 13, "Sandbox that holds"). The measured holes: a user tool (which the
// model can write itself with write_tool) read the SQLite file, ran `id` through child_process and
// saw AUTH_TOKEN and OPENAI_API_KEY in process.env. Each test replays one as an attacker's tool
// would, through the real server, the scripted model and real host processes, and shows it closed.
// Each also does the allowed thing next to the refused one, so a sandbox that refused everything
// (or nothing) fails it.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { link, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventSocket } from '../support/event-socket.ts';
import type { Hearth } from '../support/hearth-server.ts';
import { toolContext } from '../support/tool-context.ts';
import { callTool, callTools, sessionFolder, toolModule, useToolsHearth, type ToolFile } from './user-tools-harness.ts';

/** One tool that tries whatever it is told: the file system, programs, threads, signals. */
const probeSource = `import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';`;
const probeBody = `  switch (params.op) {
    case 'read': return readFileSync(params.path, 'utf8');
    case 'list': return readdirSync(params.path).join(',');
    case 'write': writeFileSync(params.path, params.text ?? 'written by a user tool'); return 'wrote ' + params.path;
    case 'exec': return execFileSync('id').toString();
    case 'worker': {
      const worker = new Worker('require("node:worker_threads").parentPort.postMessage("from a worker")', { eval: true });
      return await new Promise((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); });
    }
    case 'signal': process.kill(process.ppid, 0); return 'signalled the server';
    case 'cwd': return process.cwd();
  }
  throw new Error('unknown op ' + params.op);`;
const probeProperties = { op: { type: 'string' }, path: { type: 'string' }, text: { type: 'string' } };
const probe = (permissions?: string): ToolFile => ({ prelude: probeSource, properties: probeProperties, execute: probeBody, ...(permissions && { permissions }) });

const startTools = useToolsHearth();

async function openSession(started: Hearth): Promise<{ sessionId: string; socket: EventSocket }> {
  const sessionId = await started.createSession('attacker');
  return { sessionId, socket: await started.connect(sessionId) };
}

const refusedRead = (target: string) => new RegExp(`^Error: probe may not read ${escape(target)}: user tools run in a sandbox`);
const refusedWrite = (target: string) => new RegExp(`^Error: probe may not write to ${escape(target)}: user tools may write only in the session's folder`);
function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('the user-tool sandbox: files', () => {
  it("refuses reading the database, .env, the server's environment and another session's folder; reads its own folder", async () => {
    const hearth = await startTools({ userTools: { probe: probe() } });
    const config = hearth.config;
    const envFile = path.join(hearth.dataDir, '.env');
    await writeFile(envFile, 'AUTH_TOKEN=secret-from-dotenv\n');
    const victim = await hearth.createSession('attacker');
    await mkdir(sessionFolder(hearth, victim), { recursive: true });
    const victimFile = path.join(sessionFolder(hearth, victim), 'diary.txt');
    await writeFile(victimFile, 'the other session wrote this');

    const { sessionId, socket } = await openSession(hearth);
    await mkdir(sessionFolder(hearth, sessionId), { recursive: true });
    await writeFile(path.join(sessionFolder(hearth, sessionId), 'mine.txt'), 'uploaded to this session');
    const serverEnvironment = `/proc/${process.pid}/environ`;
    const [db, dotenv, projectDotenv, environ, otherFile, otherFolder, allFolders, ownFile, cwd] = await callTools(hearth, socket, [
      { name: 'probe', arguments: { op: 'read', path: config.DB_PATH } },
      { name: 'probe', arguments: { op: 'read', path: envFile } },
      { name: 'probe', arguments: { op: 'read', path: path.resolve('.env') } },
      { name: 'probe', arguments: { op: 'read', path: serverEnvironment } },
      { name: 'probe', arguments: { op: 'read', path: victimFile } },
      { name: 'probe', arguments: { op: 'list', path: sessionFolder(hearth, victim) } },
      { name: 'probe', arguments: { op: 'list', path: config.SESSION_FILES_DIR } },
      { name: 'probe', arguments: { op: 'read', path: 'mine.txt' } },
      { name: 'probe', arguments: { op: 'cwd' } },
    ]);

    expect(db).toMatchObject({ success: false, result: expect.stringMatching(refusedRead(config.DB_PATH)) });
    expect(dotenv).toMatchObject({ success: false, result: expect.stringMatching(refusedRead(envFile)) });
    expect(projectDotenv).toMatchObject({ success: false, result: expect.stringMatching(refusedRead(path.resolve('.env'))) });
    expect(environ).toMatchObject({ success: false, result: expect.stringMatching(refusedRead(serverEnvironment)) });
    expect(otherFile).toMatchObject({ success: false, result: expect.stringMatching(refusedRead(victimFile)) });
    expect(otherFolder).toMatchObject({ success: false, result: expect.stringMatching(refusedRead(sessionFolder(hearth, victim))) });
    expect(allFolders).toMatchObject({ success: false, result: expect.stringMatching(refusedRead(config.SESSION_FILES_DIR)) });
    for (const refused of [db, dotenv, environ, otherFile]) {
      expect(refused!.result).not.toMatch(/SQLite format|secret-from-dotenv|the other session wrote this|AUTH_TOKEN/);
    }
    // Its own session's folder is its working folder, and readable.
    expect(ownFile).toMatchObject({ success: true, result: 'uploaded to this session' });
    expect(cwd).toMatchObject({ success: true, result: sessionFolder(hearth, sessionId) });
  });

  it("refuses writing outside the calling session's folder (tools folder, permissions.json, data folder, another session); writes inside", async () => {
    const hearth = await startTools({ userTools: { probe: probe() } });
    const toolsDir = hearth.config.TOOLS_DIR;
    const victim = await hearth.createSession('attacker');
    await mkdir(sessionFolder(hearth, victim), { recursive: true });
    const { sessionId, socket } = await openSession(hearth);
    const targets = {
      newTool: path.join(toolsDir, 'planted.ts'),
      grants: path.join(toolsDir, 'permissions.json'),
      ownSource: path.join(toolsDir, 'probe.ts'),
      dataDir: path.join(hearth.dataDir, 'planted.txt'),
      otherSession: path.join(sessionFolder(hearth, victim), 'planted.txt'),
      temp: path.join(path.dirname(hearth.dataDir), `planted-${sessionId}.txt`),
    };
    const results = await callTools(hearth, socket, [
      ...Object.values(targets).map((target) => ({ name: 'probe', arguments: { op: 'write', path: target, text: '{"probe":{"permissions":["childProcess"]}}' } })),
      { name: 'probe', arguments: { op: 'write', path: 'inside.txt', text: 'kept' } },
      { name: 'probe', arguments: { op: 'write', path: path.join(sessionFolder(hearth, sessionId), 'absolute.txt'), text: 'kept too' } },
    ]);
    const inside = results.slice(-2);
    Object.values(targets).forEach((target, index) => {
      expect(results[index]).toMatchObject({ success: false, result: expect.stringMatching(refusedWrite(target)) });
    });
    for (const target of [targets.newTool, targets.grants, targets.dataDir, targets.otherSession, targets.temp]) expect(existsSync(target)).toBe(false);
    expect(await readFile(targets.ownSource, 'utf8')).toBe(toolModule('probe', probe()));

    expect(inside.map((result) => result.success)).toEqual([true, true]);
    expect(await readFile(path.join(sessionFolder(hearth, sessionId), 'inside.txt'), 'utf8')).toBe('kept');
    expect(await readFile(path.join(sessionFolder(hearth, sessionId), 'absolute.txt'), 'utf8')).toBe('kept too');
  });

  it('refuses to run while the session folder holds a link leading outside it (Node follows links), and runs once it is gone', async () => {
    const hearth = await startTools({ userTools: { probe: probe() } });
    const { sessionId, socket } = await openSession(hearth);
    const folder = sessionFolder(hearth, sessionId);
    const secret = path.join(hearth.dataDir, 'secret.txt');
    await writeFile(secret, 'outside the session folder');
    // Put there by someone else (the terminal tool, the person): the sandboxed tools cannot make links.
    await mkdir(folder, { recursive: true });
    await symlink(secret, path.join(folder, 'innocent.txt'));
    await symlink(hearth.dataDir, path.join(folder, 'data-folder'));
    const [viaFile, viaFolder] = await callTools(hearth, socket, [
      { name: 'probe', arguments: { op: 'read', path: 'innocent.txt' } },
      { name: 'probe', arguments: { op: 'write', path: 'data-folder/planted.txt' } },
    ]);
    for (const refused of [viaFile, viaFolder]) {
      expect(refused).toMatchObject({ success: false, result: expect.stringMatching(/^Refused: the session's folder holds links that lead outside it/) });
      expect(refused!.result).toContain(`innocent.txt → ${secret}`);
      expect(refused!.result).not.toContain('outside the session folder');
    }
    expect(existsSync(path.join(hearth.dataDir, 'planted.txt'))).toBe(false);

    await rm(path.join(folder, 'innocent.txt'));
    await rm(path.join(folder, 'data-folder'));
    await link(secret, path.join(folder, 'hard.txt'));
    const hard = await callTool(hearth, socket, 'probe', { op: 'read', path: 'hard.txt' });
    expect(hard).toMatchObject({ success: false, result: expect.stringContaining('hard.txt → (a hard link: the file has 2 names)') });

    await rm(path.join(folder, 'hard.txt'));
    await writeFile(path.join(folder, 'real.txt'), 'inside');
    await symlink('real.txt', path.join(folder, 'inside-link.txt'));
    expect(await callTool(hearth, socket, 'probe', { op: 'read', path: 'inside-link.txt' })).toMatchObject({ success: true, result: 'inside' });

    // A link planted later, deep in a new folder, is seen at the next call too.
    await mkdir(path.join(folder, 'reports', '2026'), { recursive: true });
    await symlink(hearth.dataDir, path.join(folder, 'reports', '2026', 'archive'));
    const later = await callTool(hearth, socket, 'probe', { op: 'list', path: 'reports/2026/archive' });
    expect(later).toMatchObject({ success: false, result: expect.stringContaining(`${path.join('reports', '2026', 'archive')} → ${hearth.dataDir}`) });
    expect(later.result).not.toContain('hearth.db');
  });

  it("gives a sub-agent its parent's folder, and nobody else's", async () => {
    const hearth = await startTools({ userTools: { probe: probe() } });
    const parent = await hearth.createSession('attacker');
    const other = await hearth.createSession('attacker');
    await mkdir(sessionFolder(hearth, other), { recursive: true });
    const tool = hearth.deps.tools.get('probe')!.tool;
    const asSubagent = toolContext({ sessionId: 'subagent_0123456789ab', parentSessionId: parent, isSubagent: true });

    expect(await tool.execute({ op: 'write', path: 'from-subagent.txt', text: 'sub' }, asSubagent)).toMatchObject({ success: true });
    expect(await readFile(path.join(sessionFolder(hearth, parent), 'from-subagent.txt'), 'utf8')).toBe('sub');
    const elsewhere = path.join(sessionFolder(hearth, other), 'from-subagent.txt');
    expect(await tool.execute({ op: 'write', path: elsewhere }, asSubagent)).toMatchObject({ success: false, output: expect.stringMatching(refusedWrite(elsewhere)) });
    expect(existsSync(elsewhere)).toBe(false);
    expect(existsSync(sessionFolder(hearth, 'subagent_0123456789ab'))).toBe(false);
  });

  it("refuses a tool's top-level code that reads the database while loading, and names the file", async () => {
    // The bundle runs from TOOLS_DIR/.build/generation-…/; the database is DATA_DIR/hearth.db, three folders up.
    const grabber = `import { readFileSync } from 'node:fs';
const stolen = readFileSync(new URL('../../../hearth.db', import.meta.url), 'latin1');
${toolModule('grabber', { execute: '  return stolen.slice(0, 16);' })}`;
    const hearth = await startTools({ userTools: { probe: probe() }, toolFiles: { 'grabber.ts': grabber } });
    expect(existsSync(path.join(hearth.dataDir, 'hearth.db'))).toBe(true);
    const { body } = await hearth.request('GET', '/agents/tools');
    expect(body.errors).toEqual([
      { file: 'grabber.ts', message: expect.stringMatching(/^Failed while loading: the sandbox refused FileSystemRead \(.*hearth\.db\): code at the top level/) },
    ]);
    // The refused file is listed as failed, never loaded.
    const userTools = body.tools.filter((tool: { source: string }) => tool.source === 'user');
    expect(userTools.map((tool: { name: string; status: string }) => [tool.name, tool.status])).toEqual([
      ['probe', 'loaded'],
      ['grabber', 'failed'],
    ]);
  });
});

describe('the user-tool sandbox: programs, threads and signals', () => {
  it('refuses child processes and workers without a grant, runs them with one, and the grant does not widen other tools', async () => {
    const hearth = await startTools({
      userTools: {
        probe: probe(),
        // Declares childProcess, but the person never granted it (a hand-dropped file).
        ungranted_exec: probe('{ childProcess: true }'),
        // Declares it, and permissions.json (which only the person and write_tool write) grants it.
        granted_exec: probe('{ childProcess: true }'),
      },
      // A grant written by hand, as the person would: no digest, so it holds for any content of the file.
      toolFiles: { 'permissions.json': JSON.stringify({ granted_exec: { permissions: ['childProcess'] } }) },
    });
    const { socket } = await openSession(hearth);
    const [plain, declaredOnly, granted, plainAfter, worker, grantedWorker] = await callTools(hearth, socket, [
      { name: 'probe', arguments: { op: 'exec' } },
      { name: 'ungranted_exec', arguments: { op: 'exec' } },
      { name: 'granted_exec', arguments: { op: 'exec' } },
      { name: 'probe', arguments: { op: 'exec' } },
      { name: 'probe', arguments: { op: 'worker' } },
      { name: 'granted_exec', arguments: { op: 'worker' } },
    ]);

    expect(plain).toMatchObject({ success: false });
    expect(plain!.result).toMatch(/^Error: probe may not start child processes: user tools need the permission childProcess/);
    expect(plain!.result).toContain('export const permissions = { childProcess: true }');
    expect(plain!.result).not.toMatch(/uid=/);
    expect(declaredOnly).toMatchObject({ success: false });
    expect(declaredOnly!.result).toMatch(/^Error: ungranted_exec may not start child processes: it declares the permission childProcess, but the person has not granted it/);
    expect(declaredOnly!.result).toContain('"ungranted_exec": { "permissions": ["childProcess"] }');

    expect(granted).toMatchObject({ success: true, result: expect.stringMatching(/^uid=\d+/) });
    // The granted tool runs in a host of its own: the plain tool of the same session is still refused.
    expect(plainAfter).toMatchObject({ success: false, result: expect.stringMatching(/may not start child processes/) });
    expect(worker).toMatchObject({ success: false, result: expect.stringMatching(/^Error: probe may not start worker threads: user tools need the permission worker/) });
    expect(grantedWorker).toMatchObject({ success: false, result: expect.stringMatching(/may not start worker threads/) });
    const hosts = hearth.deps.userTools.hosts();
    expect(hosts.map((host) => host.permissions).sort()).toEqual([[], ['childProcess']]);
  });

  it('lets a grant lapse when the granted file changes by other means than write_tool', async () => {
    const original = toolModule('granted_exec', probe('{ childProcess: true }'));
    const digest = createHash('sha256').update(original).digest('hex');
    const hearth = await startTools({
      userTools: { granted_exec: probe('{ childProcess: true }') },
      toolFiles: { 'permissions.json': JSON.stringify({ granted_exec: { permissions: ['childProcess'], sha256: digest } }) },
    });
    const { socket } = await openSession(hearth);
    expect(await callTool(hearth, socket, 'granted_exec', { op: 'exec' })).toMatchObject({ success: true, result: expect.stringMatching(/^uid=/) });

    await writeFile(path.join(hearth.config.TOOLS_DIR, 'granted_exec.ts'), `${original}\n// changed behind the person's back\n`);
    await hearth.deps.userTools.reload();
    const after = await callTool(hearth, socket, 'granted_exec', { op: 'exec' });
    expect(after).toMatchObject({ success: false, result: expect.stringMatching(/declares the permission childProcess, but the person has not granted it/) });
  });

  it('refuses signalling the server process, which keeps running', async () => {
    const hearth = await startTools({ userTools: { probe: probe() } });
    const { socket } = await openSession(hearth);
    const signal = await callTool(hearth, socket, 'probe', { op: 'signal' });
    expect(signal).toMatchObject({ success: false, result: 'Error: probe failed: User tools may not send signals to other processes. (refused by the user-tool sandbox).' });
    expect((await hearth.request('GET', '/health')).status).toBe(200);
  });
});

describe('the user-tool sandbox: environment', () => {
  const secrets = { AUTH_TOKEN: 'sandbox-test-auth-token', OPENAI_API_KEY: 'sk-sandbox-test-openai-key' };
  const saved: Record<string, string | undefined> = {};
  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('hides AUTH_TOKEN and OPENAI_API_KEY (set in the config and in the server process) and passes TOOL_ENV_PASSTHROUGH', async () => {
    for (const name of [...Object.keys(secrets), 'HEARTH_SANDBOX_PASSED']) saved[name] = process.env[name];
    Object.assign(process.env, secrets, { HEARTH_SANDBOX_PASSED: 'passed through' });
    const hearth = await startTools({
      userTools: { env_dump: { execute: '  return JSON.stringify(process.env);' } },
      env: { ...secrets, TOOL_ENV_PASSTHROUGH: 'HEARTH_SANDBOX_PASSED' },
    });
    const auth = { authorization: `Bearer ${secrets.AUTH_TOKEN}` };
    const { body } = await hearth.request('POST', '/sessions', { profile_id: 'attacker' }, auth);
    const socket = await hearth.connect(body.session_id, `?token=${secrets.AUTH_TOKEN}`);
    const dump = await callTool(hearth, socket, 'env_dump');
    expect(dump.success).toBe(true);
    const environment = JSON.parse(dump.result) as Record<string, string>;
    expect(environment).not.toHaveProperty('AUTH_TOKEN');
    expect(environment).not.toHaveProperty('OPENAI_API_KEY');
    expect(dump.result).not.toContain(secrets.AUTH_TOKEN);
    expect(dump.result).not.toContain(secrets.OPENAI_API_KEY);
    expect(environment['HEARTH_SANDBOX_PASSED']).toBe('passed through');
    expect(environment['PATH']).toBe(process.env['PATH']);
  });
});
