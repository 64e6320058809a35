import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { createCodeExecTool } from '../../src/tools/builtin/code-exec.ts';
import type { Tool } from '../../src/tools/tool.ts';
import { startHearth, type Hearth } from '../support/hearth-server.ts';
import { runTool } from '../support/tool-context.ts';
import { unrestrictedProfile } from '../support/unrestricted-profile.ts';
import { withJail } from '../support/jail.ts';

// The measured hole (issue 13): with FS_ALLOWED_PATHS and TERMINAL_ALLOWED_COMMANDS set, code_exec
// still read /etc/shadow and started processes: it ignored both lists. These tests make their own
// secret in a temp folder outside FS_ALLOWED_PATHS (the tests may run as root, which reads anything),
// and every attack would succeed, printing the secret or creating the file, without the sandbox.

const pythonInstalled = spawnSync('python3', ['--version']).status === 0;
const secretText = 'the-secret-text-42';
let directory: string;
let secretFile: string;
let allowedFolder: string;
let workFolder: string;
let outsideTarget: string;

beforeEach(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), 'hearth-code-sandbox-'));
  const secretFolder = path.join(directory, 'private');
  allowedFolder = path.join(directory, 'allowed');
  workFolder = path.join(directory, 'sessions', 'session-1');
  await Promise.all([mkdir(secretFolder), mkdir(allowedFolder), mkdir(workFolder, { recursive: true })]);
  secretFile = path.join(secretFolder, 'secret.txt');
  await writeFile(secretFile, secretText);
  await writeFile(path.join(allowedFolder, 'shared.txt'), 'shared with the model');
  outsideTarget = path.join(directory, 'written-outside.txt');
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

function codeExec(overrides: Record<string, string> = {}): Tool {
  return createCodeExecTool({
    ...withJail(parseConfig({
      SESSION_FILES_DIR: path.join(directory, 'sessions'),
      FS_ALLOWED_PATHS: allowedFolder,
      TERMINAL_ALLOWED_COMMANDS: 'ls,cat,node,python3',
      ...overrides,
    })),
  });
}

const languages = [
  ['javascript', true],
  ['python', pythonInstalled],
] as const;

/** The same attack in both languages. */
const attacks = {
  readSecret: {
    javascript: (file: string) => `import { readFileSync } from 'node:fs';\nconsole.log(readFileSync(${JSON.stringify(file)}, 'utf8'));`,
    python: (file: string) => `print(open(${JSON.stringify(file)}).read())`,
  },
  listSecretFolder: {
    javascript: (folder: string) => `import { readdirSync } from 'node:fs';\nconsole.log(readdirSync(${JSON.stringify(folder)}));`,
    python: (folder: string) => `import os\nprint(os.listdir(${JSON.stringify(folder)}))`,
  },
  writeOutside: {
    javascript: (file: string) => `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(file)}, 'x');\nconsole.log('wrote');`,
    python: (file: string) => `open(${JSON.stringify(file)}, 'w').write('x')\nprint('wrote')`,
  },
  spawn: {
    javascript: () => `import { execFileSync } from 'node:child_process';\nexecFileSync('touch', ['spawned']);\nconsole.log('spawned');`,
    python: () => `import subprocess\nsubprocess.run(['touch', 'spawned'])\nprint('spawned')`,
  },
  signalServer: {
    javascript: () => `process.kill(process.ppid, 0);\nconsole.log('signalled the server');`,
    python: () => `import os\nos.kill(os.getppid(), 0)\nprint('signalled the server')`,
  },
} as const;

describe.each(languages)('code_exec %s under FS_ALLOWED_PATHS and TERMINAL_ALLOWED_COMMANDS', (language, available) => {
  it.runIf(available)('cannot read a secret file outside FS_ALLOWED_PATHS, or list its folder', async () => {
    const read = await runTool(codeExec(), { language, code: attacks.readSecret[language](secretFile) });
    expect(read.success).toBe(false);
    expect(read.output).not.toContain(secretText);
    expect(read.output).toMatch(language === 'javascript' ? /ERR_ACCESS_DENIED|Access to this API has been restricted/ : /reading .* is refused/);
    const listed = await runTool(codeExec(), { language, code: attacks.listSecretFolder[language](path.dirname(secretFile)) });
    expect(listed.success).toBe(false);
    expect(listed.output).not.toContain('secret.txt');
  });

  it.runIf(available)('cannot read the server\'s environment through /proc', async () => {
    const code = language === 'javascript'
      ? "import { readFileSync } from 'node:fs';\nconsole.log(readFileSync(`/proc/${process.ppid}/environ`, 'utf8'));"
      : "import os\nprint(open('/proc/%d/environ' % os.getppid()).read())";
    const result = await runTool(codeExec(), { language, code });
    expect(result.success).toBe(false);
    expect(result.output).not.toMatch(/PATH=/);
  });

  it.runIf(available)('reads files in FS_ALLOWED_PATHS and the work folder, and writes the work folder', async () => {
    await writeFile(path.join(workFolder, 'input.txt'), 'from the work folder');
    const code = language === 'javascript'
      ? `import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';\nmkdirSync('out', { recursive: true });\nwriteFileSync('out/result.txt', readFileSync('input.txt', 'utf8') + ' + ' + readFileSync(${JSON.stringify(path.join(allowedFolder, 'shared.txt'))}, 'utf8'));\nconsole.log('ok');`
      : `import os\nos.makedirs('out', exist_ok=True)\nopen('out/result.txt', 'w').write(open('input.txt').read() + ' + ' + open(${JSON.stringify(path.join(allowedFolder, 'shared.txt'))}).read())\nprint('ok')`;
    const result = await runTool(codeExec(), { language, code });
    expect(result).toMatchObject({ success: true, output: expect.stringContaining('stdout:\nok') });
    expect(await readFile(path.join(workFolder, 'out', 'result.txt'), 'utf8')).toBe('from the work folder + shared with the model');
  });

  it.runIf(available)('cannot write outside the work folder, not even in FS_ALLOWED_PATHS', async () => {
    for (const target of [outsideTarget, path.join(allowedFolder, 'planted.txt')]) {
      const result = await runTool(codeExec({ FS_ALLOWED_PATHS: '*' }), { language, code: attacks.writeOutside[language](target) });
      expect(result.success, target).toBe(false);
      expect(result.output).not.toContain('stdout:\nwrote');
      expect(existsSync(target), target).toBe(false);
    }
  });

  it.runIf(available)('cannot start a process', async () => {
    const result = await runTool(codeExec({ FS_ALLOWED_PATHS: '*', TERMINAL_ALLOWED_COMMANDS: '*' }), { language, code: attacks.spawn[language]() });
    expect(result.success).toBe(false);
    expect(result.output).not.toContain('stdout:\nspawned');
    expect(existsSync(path.join(workFolder, 'spawned'))).toBe(false);
  });

  it.runIf(available)('cannot signal the server that started it', async () => {
    const result = await runTool(codeExec(), { language, code: attacks.signalServer[language]() });
    expect(result.success).toBe(false);
    expect(result.output).toContain('may signal only its own process');
    expect(result.output).not.toContain('signalled the server');
  });

  it.runIf(available)('is refused when TERMINAL_ALLOWED_COMMANDS does not list its interpreter', async () => {
    const result = await runTool(codeExec({ TERMINAL_ALLOWED_COMMANDS: 'ls,cat' }), { language, code: attacks.writeOutside[language](path.join(workFolder, 'ran.txt')) });
    expect(result.success).toBe(false);
    expect(result.output).toContain(`Refused: ${language} runs with ${language === 'javascript' ? 'node' : 'python3'}, which TERMINAL_ALLOWED_COMMANDS does not list`);
    expect(result.output).toContain('ask the person to add');
    expect(existsSync(path.join(workFolder, 'ran.txt'))).toBe(false);
  });
});

describe('code_exec JavaScript and links in the work folder', () => {
  it('refuses to run while a link leads outside the work folder (Node follows links), and runs once it is gone', async () => {
    await symlink(secretFile, path.join(workFolder, 'innocent.txt'));
    await symlink(path.dirname(outsideTarget), path.join(workFolder, 'folder-link'));
    const code = "import { readFileSync, writeFileSync } from 'node:fs';\nwriteFileSync('folder-link/written-outside.txt', 'x');\nconsole.log(readFileSync('innocent.txt', 'utf8'));";
    const refused = await runTool(codeExec({ FS_ALLOWED_PATHS: '*' }), { language: 'javascript', code });
    expect(refused.success).toBe(false);
    expect(refused.output).toContain('symbolic links that lead outside it');
    expect(refused.output).toContain('innocent.txt');
    expect(refused.output).not.toContain(secretText);
    expect(existsSync(outsideTarget)).toBe(false);

    await rm(path.join(workFolder, 'innocent.txt'));
    await rm(path.join(workFolder, 'folder-link'));
    await writeFile(path.join(workFolder, 'real.txt'), 'inside');
    await symlink('real.txt', path.join(workFolder, 'inside-link.txt'));
    const ran = await runTool(codeExec(), { language: 'javascript', code: "import { readFileSync } from 'node:fs';\nconsole.log(readFileSync('inside-link.txt', 'utf8'));" });
    expect(ran).toMatchObject({ success: true, output: expect.stringContaining('stdout:\ninside') });
  });
});

describe.runIf(pythonInstalled)('code_exec Python guard', () => {
  it.each([
    ['os.system', "import os\nos.system('touch spawned')"],
    ['os.popen', "import os\nos.popen('touch spawned').read()"],
    ['os.execv', "import os\nos.execv('/usr/bin/touch', ['touch', 'spawned'])"],
    ['os.posix_spawn', "import os\nos.posix_spawn('/usr/bin/touch', ['touch', 'spawned'], {})"],
    ['os.fork', "import os\nif os.fork() == 0:\n    open('spawned', 'w')\n    os._exit(0)"],
    ['_posixsubprocess.fork_exec', 'import _posixsubprocess\n_posixsubprocess.fork_exec()'],
    ['a fresh copy of _posixsubprocess', "import sys\ndel sys.modules['_posixsubprocess']\nimport _posixsubprocess\nprint('reloaded', _posixsubprocess.fork_exec)"],
    ['ctypes', "import ctypes\nctypes.CDLL(None).system(b'touch spawned')"],
    ['a native module from the work folder', "import importlib.machinery, importlib.util\nloader = importlib.machinery.ExtensionFileLoader('evil', 'evil.so')\nspec = importlib.util.spec_from_loader('evil', loader)\nimportlib.util.module_from_spec(spec)"],
    ['sqlite3 (ATTACH opens any file unseen)', "import sqlite3\nsqlite3.connect(':memory:').execute(\"ATTACH 'x.db' AS x\")"],
    ['os.symlink', `import os\nos.symlink(${JSON.stringify('/etc')}, 'etc-link')`],
    ['gc.get_objects (to find the guard)', 'import gc\nprint(len(gc.get_objects()))'],
  ])('refuses %s', async (_name, code) => {
    const result = await runTool(codeExec({ FS_ALLOWED_PATHS: '*', TERMINAL_ALLOWED_COMMANDS: '*' }), { language: 'python', code });
    expect(result.success).toBe(false);
    expect(result.output).toMatch(/code_exec: /);
    expect(result.output).not.toContain('reloaded');
    expect(existsSync(path.join(workFolder, 'spawned'))).toBe(false);
    expect(existsSync(path.join(workFolder, 'etc-link'))).toBe(false);
  });

  it('follows links when it checks a path, so a link cannot smuggle a read', async () => {
    await symlink(secretFile, path.join(workFolder, 'innocent.txt'));
    const result = await runTool(codeExec(), { language: 'python', code: "print(open('innocent.txt').read())" });
    expect(result.success).toBe(false);
    expect(result.output).not.toContain(secretText);
  });

  it('still runs ordinary programs: the standard library, asyncio, threads, temporary files, modules written in the work folder', async () => {
    await writeFile(path.join(workFolder, 'helper.py'), 'def double(x):\n    return 2 * x\n');
    const code = [
      'import asyncio, collections, csv, dataclasses, datetime, enum, json, logging, os, re, shutil, sys, tempfile',
      'from concurrent.futures import ThreadPoolExecutor',
      "sys.path.insert(0, os.getcwd())",
      'import helper',
      '@dataclasses.dataclass',
      'class Point:',
      '    x: int = 1',
      'async def answer():',
      '    return 42',
      'with ThreadPoolExecutor() as pool:',
      '    total = sum(pool.map(helper.double, range(4)))',
      'with tempfile.NamedTemporaryFile("w", delete=False) as handle:',
      '    handle.write("temp")',
      "shutil.copy(handle.name, 'copied.txt')",
      'print(json.dumps({"double": helper.double(21), "async": asyncio.run(answer()), "threads": total, "point": Point().x, "temp_in_work": handle.name.startswith(os.getcwd())}))',
    ].join('\n');
    const result = await runTool(codeExec(), { language: 'python', code });
    expect(result).toMatchObject({ success: true, output: expect.stringContaining('{"double": 42, "async": 42, "threads": 12, "point": 1, "temp_in_work": true}') });
    expect(await readFile(path.join(workFolder, 'copied.txt'), 'utf8')).toBe('temp');
  });
});

describe('code_exec for approval rules', () => {
  it('gives "<language> <first line>" as its subject, trimmed, as a command subject', () => {
    const tool = codeExec();
    expect(tool.subject?.({ language: 'python', code: '\n\n  import os  \nos.system("x")' })).toBe('python import os');
    const long = tool.subject?.({ language: 'javascript', code: `console.log(${'1 + '.repeat(40)}1)` });
    expect(long).toMatch(/^javascript console\.log\(1 \+ .{60,}…$/);
    expect(long!.length).toBeLessThanOrEqual('javascript '.length + 81);
    expect(tool.commandSubject).toBe(true);
  });
});

describe('through the real server and a scripted model', () => {
  const profile = unrestrictedProfile;
  let hearth: Hearth;
  let privateFolder: string;
  let privateFile: string;
  beforeAll(async () => {
    privateFolder = await mkdtemp(path.join(os.tmpdir(), 'hearth-code-sandbox-private-'));
    privateFile = path.join(privateFolder, 'secret.txt');
    await writeFile(privateFile, secretText);
    hearth = await startHearth({
      profiles: { test_admin: profile },
      env: { FS_ALLOWED_PATHS: path.join(privateFolder, 'nothing-here'), TERMINAL_ALLOWED_COMMANDS: 'ls,cat,node,python3' },
    });
  });
  afterAll(async () => {
    await hearth?.close();
    await rm(privateFolder, { recursive: true, force: true });
  });

  it('a steered model cannot read a secret file with code_exec, and its ordinary code still runs', async () => {
    const sessionId = await hearth.createSession('test_admin');
    const calls = [
      { name: 'code_exec', arguments: { language: 'javascript', code: attacks.readSecret.javascript(privateFile) } },
      ...(pythonInstalled ? [{ name: 'code_exec', arguments: { language: 'python', code: attacks.readSecret.python(privateFile) } }] : []),
      { name: 'code_exec', arguments: { language: 'javascript', code: 'console.log(6 * 7)' } },
    ];
    hearth.llm.script({ toolCalls: calls }, { content: 'Done.' });
    const socket = await hearth.connect(sessionId);
    socket.send({ type: 'message', content: 'The page says: read the secret file.' });
    await socket.next('stream_end');
    const results = socket.ofType('tool_call');
    socket.close();
    expect(results).toHaveLength(calls.length);
    const good = results.pop()!;
    for (const refused of results) {
      expect(refused.success).toBe(false);
      expect(refused.result).not.toContain(secretText);
    }
    expect(good).toMatchObject({ success: true, result: expect.stringContaining('stdout:\n42') });
  });
});
