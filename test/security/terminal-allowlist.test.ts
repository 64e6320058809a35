import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { createTerminalTool } from '../../src/tools/builtin/terminal.ts';
import type { Tool } from '../../src/tools/tool.ts';
import { startHearth, type Hearth } from '../support/hearth-server.ts';
import { runTool } from '../support/tool-context.ts';
import { unrestrictedProfile } from '../support/unrestricted-profile.ts';
import { withJail } from '../support/jail.ts';

// The measured hole (issue 13): with TERMINAL_ALLOWED_COMMANDS=ls,cat,git the model ran
// `git -c alias.x='!id; echo $AUTH_TOKEN' x`. Every attack below tries to create a file named
// `pwned` through a listed tool; each test checks both the refusal and that the file is absent,
// so it fails if the refusal goes (the command would run and create the file).

const allowlist = 'ls,cat,git,find,tar,sed';
let directory: string;
let workFolder: string;

beforeEach(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), 'hearth-terminal-allowlist-'));
  workFolder = path.join(directory, 'session-1');
  await mkdir(workFolder, { recursive: true });
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

function terminal(allowed = allowlist, extra: Record<string, string> = {}): Tool {
  return createTerminalTool(withJail(parseConfig({ SESSION_FILES_DIR: directory, TERMINAL_ALLOWED_COMMANDS: allowed, ...extra })));
}

const pwned = () => existsSync(path.join(workFolder, 'pwned'));

async function expectRefused(command: string, pattern: RegExp | string, allowed = allowlist): Promise<string> {
  const result = await runTool(terminal(allowed), { command });
  expect(result.success, command).toBe(false);
  expect(result.output, command).toMatch(typeof pattern === 'string' ? new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : pattern);
  expect(pwned(), `${command} created the file`).toBe(false);
  return result.output;
}

/** A repository in the work folder with one commit, made by the test (not through the tool). */
function makeRepository(): void {
  const git = (...args: string[]) => {
    const result = spawnSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { cwd: workFolder, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
  };
  git('init', '-q');
  spawnSync('sh', ['-c', 'echo hello > readme.txt'], { cwd: workFolder });
  git('add', 'readme.txt');
  git('commit', '-q', '-m', 'first');
}

describe('git on an allowlist', () => {
  it("refuses the measured hole, git -c alias.x='!…' x, and the other ways to pass configuration", async () => {
    const output = await expectRefused("git -c alias.x='!touch pwned; echo $AUTH_TOKEN' x", 'Refused: git -c sets git configuration');
    expect(output).toContain('ask the person');
    await expectRefused("git -c 'alias.x=!touch pwned' x", 'git -c');
    await expectRefused('git --config-env=alias.x=HOME x', 'git --config-env');
    await expectRefused("git -c core.pager='touch pwned' log", 'git -c');
  });

  it('refuses options that point git at other programs or folders', async () => {
    await expectRefused('git --exec-path=/tmp status', 'changes where git finds the programs');
    await expectRefused('git -C /etc status', "Use the terminal's cwd parameter");
    await expectRefused('git --git-dir=/tmp/elsewhere status', 'another repository');
    await expectRefused('git --work-tree=/ status', 'another repository');
  });

  it.each([
    ['git difftool', 'runs a diff program'],
    ['git mergetool', 'runs a merge program'],
    ['git filter-branch --tree-filter "touch pwned" HEAD', 'runs shell snippets'],
    ['git help log', 'opens manual pages'],
    ['git log --help', 'opens a manual page'],
    ['git grep -O"touch pwned" hello', 'opens the matching files in a program'],
    ['git grep --open-files-in-pager=touch hello', 'opens the matching files in a program'],
    ['git submodule foreach "touch pwned"', 'runs a shell command in every submodule'],
    ['git bisect run touch pwned', 'runs a command at every step'],
    ['git rebase --exec "touch pwned" HEAD', 'runs a command after every commit'],
    ['git rebase -x "touch pwned" HEAD', 'runs a command after every commit'],
    ['git rebase --exe="touch pwned" HEAD', 'runs a command after every commit'],
    ['git clone --upload-pack="touch pwned" . copy', 'runs a program or sets configuration'],
    ['git clone -c core.fsmonitor=x . copy', 'runs a program or sets configuration'],
    ['git fetch --upload-pack="touch pwned" origin', 'runs a program as the remote side'],
    ['git push --receive-pack="touch pwned" origin', 'runs a program as the remote side'],
    ['git config --global alias.x "!touch pwned"', 'changes configuration outside this repository'],
    ['git config --file=.git/config alias.x "!touch pwned"', 'changes configuration outside this repository'],
  ])('refuses %s', async (command, reason) => {
    makeRepository();
    await expectRefused(command, reason);
  });

  it('refuses to run while the repository\'s own configuration names a program (the model can write .git/config)', async () => {
    makeRepository();
    const config = path.join(workFolder, '.git', 'config');
    const original = await readFile(config, 'utf8');
    for (const [section, line] of [
      ['alias', 'x = !touch pwned'],
      ['core', 'fsmonitor = touch pwned'],
      ['core', 'pager = touch pwned'],
      ['diff', 'external = touch pwned'],
    ] as const) {
      await writeFile(config, `${original}[${section}]\n\t${line}\n`);
      const command = section === 'alias' ? 'git x' : section === 'diff' ? 'git diff HEAD' : 'git status';
      await expectRefused(command, `this repository's own configuration sets ${section}.${line.split(' ')[0]}`);
    }
    // The same through an include of a file the model wrote.
    await writeFile(path.join(workFolder, 'extra.conf'), '[alias]\n\tx = !touch pwned\n');
    await writeFile(config, `${original}[include]\n\tpath = ../extra.conf\n`);
    await expectRefused('git x', 'alias.x');
    // And `git config` writing one for the next call.
    await writeFile(config, original);
    const written = await runTool(terminal(), { command: 'git config alias.y "!touch pwned"' });
    expect(written.success).toBe(true);
    await expectRefused('git y', 'alias.y');
  });

  it('never runs hooks the model planted in .git/hooks, and commits work', async () => {
    makeRepository();
    const hook = path.join(workFolder, '.git', 'hooks', 'pre-commit');
    await writeFile(hook, `#!/bin/sh\ntouch "${path.join(workFolder, 'pwned')}"\n`);
    await chmod(hook, 0o755);
    // The hook really runs when git is called without Hearth's guard.
    spawnSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-q', '--allow-empty', '-m', 'probe'], { cwd: workFolder });
    expect(pwned()).toBe(true);
    await rm(path.join(workFolder, 'pwned'));

    for (const command of ['git config user.name Tester', 'git config user.email tester@example.com', 'git commit --allow-empty -m second']) {
      const result = await runTool(terminal(), { command });
      expect(result, command).toMatchObject({ success: true });
    }
    expect(pwned()).toBe(false);
    const log = await runTool(terminal(), { command: 'git log --oneline' });
    expect(log.output).toMatch(/second\n.*probe\n.*first/);
  });

  it('runs ordinary git commands: init, status, log, diff', async () => {
    expect((await runTool(terminal(), { command: 'git init' })).success).toBe(true);
    await writeFile(path.join(workFolder, 'notes.txt'), 'one\n');
    const status = await runTool(terminal(), { command: 'git status --short' });
    expect(status).toMatchObject({ success: true, output: expect.stringContaining('?? notes.txt') });
    expect((await runTool(terminal(), { command: 'git add notes.txt' })).success).toBe(true);
    const diff = await runTool(terminal(), { command: 'git diff --cached' });
    expect(diff.output).toContain('+one');
  });

  it('does not find the repository Hearth may live in from a session folder', async () => {
    spawnSync('git', ['init', '-q'], { cwd: directory });
    const status = await runTool(terminal(), { command: 'git status' });
    expect(status.success).toBe(false);
    expect(status.output).toContain('not a git repository');
  });
});

describe('other listed tools that can run programs', () => {
  beforeEach(async () => {
    await writeFile(path.join(workFolder, 'file.txt'), 'line one\nline two\n');
  });

  it('refuses find -exec, -execdir, -ok, -okdir and the -fprint family', async () => {
    await expectRefused('find . -name file.txt -exec touch pwned \\;', 'makes find run a program for each file');
    await expectRefused('find . -execdir touch pwned \\;', 'find -execdir');
    await expectRefused('find . -ok touch pwned \\;', 'find -ok');
    await expectRefused('find . -okdir touch pwned \\;', 'find -okdir');
    await expectRefused('find . -fprint pwned', 'makes find write its results to a file');
    await expectRefused('find . -fprintf pwned %p', 'find -fprintf');
    const listed = await runTool(terminal(), { command: 'find . -name file.txt' });
    expect(listed).toMatchObject({ success: true, output: expect.stringContaining('./file.txt') });
  });

  it('refuses tar options that run programs, abbreviated or bundled, and remote archive names', async () => {
    await expectRefused('tar -cf archive.tar --checkpoint=1 --checkpoint-action=exec=touch\\ pwned file.txt', 'makes tar run a program');
    await expectRefused('tar -cf archive.tar --to-command="touch pwned" file.txt', 'tar --to-command');
    await expectRefused('tar -cf archive.tar --to-comm="touch pwned" file.txt', 'tar --to-comm');
    await expectRefused('tar -I "touch pwned" -cf archive.tar file.txt', 'tar -I');
    await expectRefused('tar -cIf "touch pwned" archive.tar file.txt', 'tar -cIf');
    await expectRefused('tar cIf "touch pwned" archive.tar file.txt', 'tar cIf');
    await expectRefused('tar --use-compress-program="touch pwned" -cf archive.tar file.txt', 'makes tar run a program');
    await expectRefused('tar --rsh-command=/bin/sh -cf host:archive.tar file.txt', 'makes tar run a program');
    await expectRefused('tar -cf localhost:archive.tar file.txt', 'remote archive');
    const packed = await runTool(terminal(), { command: 'tar -czf archive.tgz file.txt' });
    expect(packed.success).toBe(true);
    const listed = await runTool(terminal(), { command: 'tar -tzf archive.tgz' });
    expect(listed.output).toContain('file.txt');
  });

  it("always runs sed with --sandbox, so its e, r and w commands are refused by sed itself", async () => {
    for (const command of ['sed -n "1e touch pwned" file.txt', 'sed "s/line/touch pwned/e" file.txt', 'sed -n "w pwned" file.txt']) {
      const result = await runTool(terminal(), { command });
      expect(result.success, command).toBe(false);
      expect(result.output, command).toContain('disabled in sandbox mode');
      expect(pwned(), command).toBe(false);
    }
    const printed = await runTool(terminal(), { command: 'sed -n 2p file.txt' });
    expect(printed).toMatchObject({ success: true, output: expect.stringContaining('stdout:\nline two') });
  });

  it.each([
    ['rsync,sort,split,zip', 'rsync -e "touch pwned" file.txt host:copy', 'makes rsync run a program'],
    ['rsync,sort,split,zip', 'rsync -avze "touch pwned" file.txt host:copy', 'rsync -avze'],
    ['rsync,sort,split,zip', 'rsync --rsh="touch pwned" file.txt host:copy', 'rsync --rsh'],
    ['rsync,sort,split,zip', 'sort --compress-program="touch pwned" file.txt', 'makes sort run a program'],
    ['rsync,sort,split,zip', 'sort --compress-prog=sh file.txt', 'sort --compress-prog'],
    ['rsync,sort,split,zip', 'split --filter="touch pwned" file.txt', 'split --filter'],
    ['rsync,sort,split,zip', 'split --f="touch pwned" file.txt', 'split --f'],
    ['rsync,sort,split,zip', 'zip -TT "touch pwned" out.zip file.txt', 'makes zip run a program'],
    ['rsync,sort,split,zip', 'zip --unzip-command="touch pwned" -T out.zip file.txt', 'zip --unzip-command'],
    ['docker', 'docker run --rm -v /:/host alpine touch /host/pwned', 'docker\'s read-only commands'],
    ['systemctl', 'systemctl edit nginx', 'opens an editor'],
  ])('on %s refuses %s', async (allowed, command, reason) => {
    await expectRefused(command, reason, allowed);
  });
});

describe('executables that run any command are refused even when listed', () => {
  const listed = 'ls,env,sh,bash,xargs,python3,node,perl,awk,vim,less,timeout,nice,sudo,ssh,make,find';

  it.each([
    ['env touch pwned', 'is a command that runs another command'],
    ['sh -c "touch pwned"', 'is a shell'],
    ['bash -c "touch pwned"', 'is a shell'],
    ['xargs touch', 'is a command that runs another command'],
    ['python3 -c "open(\'pwned\', \'w\')"', 'use the code_exec tool'],
    ['node -e "require(\'fs\').writeFileSync(\'pwned\', \'\')"', 'use the code_exec tool'],
    ['perl -e "open(F, \'>pwned\')"', 'is an interpreter'],
    ['awk "BEGIN { system(\\"touch pwned\\") }"', 'is an interpreter'],
    ['vim -c "!touch pwned" -c q', 'is an editor or pager'],
    ['less file.txt', 'is an editor or pager'],
    ['timeout 5 touch pwned', 'is a command that runs another command'],
    ['nice touch pwned', 'is a command that runs another command'],
    ['sudo touch pwned', 'runs commands as another user'],
    ['ssh localhost touch pwned', 'use the ssh_exec tool'],
    ['make', 'is a build tool'],
    ['/usr/bin/env touch pwned', 'is a command that runs another command'],
  ])('%s', async (command, reason) => {
    const output = await expectRefused(command, reason, listed);
    expect(output).toContain('never run from TERMINAL_ALLOWED_COMMANDS');
  });

  // Issue 24: each of these created its file in list mode before the runner table named it.
  const issue24 = 'ls,logsave,setarch,prlimit,setpriv,ssh-agent,x86_64,linux64,numactl,capsh,faketime,systemd-cat,dbus-run-session';
  it.each([
    ['logsave /dev/null touch pwned', 'is a command that runs another command'],
    [`setarch ${os.machine()} touch pwned`, 'is a command that runs another command'],
    ['prlimit --nofile=100 touch pwned', 'is a command that runs another command'],
    ['setpriv touch pwned', 'is a command that runs another command'],
    ['ssh-agent touch pwned', 'is a command that runs another command'],
    ['x86_64 touch pwned', 'is a command that runs another command'],
    ['linux64 touch pwned', 'is a command that runs another command'],
    ['systemd-cat touch pwned', 'is a command that runs another command'],
    ['dbus-run-session touch pwned', 'is a command that runs another command'],
  ])('%s (issue 24)', async (command, reason) => {
    const output = await expectRefused(command, reason, issue24);
    expect(output).toContain('never run from TERMINAL_ALLOWED_COMMANDS');
  });

  it('leaves them out of the allowed list the model is shown', () => {
    const tool = terminal(listed);
    expect(tool.description).toContain('allowed: ls, find.');
  });

  it('still runs the listed tools that are not command runners', async () => {
    await writeFile(path.join(workFolder, 'file.txt'), 'x');
    expect(await runTool(terminal(listed), { command: 'ls' })).toMatchObject({ success: true, output: expect.stringContaining('file.txt') });
  });
});

describe('the terminal tool for approval rules', () => {
  it('gives the command line as its subject, as a command subject', () => {
    const tool = terminal();
    expect(tool.subject?.({ command: 'git status --short' })).toBe('git status --short');
    expect(tool.commandSubject).toBe(true);
  });

  it('keeps cwd inside the work folder and FS_ALLOWED_PATHS', async () => {
    // Outside SESSION_FILES_DIR: a folder there that is not this session's is another session's (the path policy).
    const allowedFolder = await mkdtemp(path.join(os.tmpdir(), 'hearth-terminal-allowed-'));
    try {
      const tool = terminal(allowlist, { FS_ALLOWED_PATHS: allowedFolder });
      const refused = await runTool(tool, { command: 'ls', cwd: '/etc' });
      expect(refused).toMatchObject({ success: false, output: expect.stringContaining('cwd: Access to /etc is refused') });
      const escaped = await runTool(tool, { command: 'ls', cwd: '../..' });
      expect(escaped.success).toBe(false);
      expect((await runTool(tool, { command: 'ls', cwd: allowedFolder })).success).toBe(true);
    } finally {
      await rm(allowedFolder, { recursive: true, force: true });
    }
  });
});

describe('through the real server and a scripted model', () => {
  const profile = unrestrictedProfile;
  let hearth: Hearth;
  beforeAll(async () => {
    hearth = await startHearth({ profiles: { test_admin: profile }, env: { TERMINAL_ALLOWED_COMMANDS: 'ls,cat,git' } });
  });
  afterAll(() => hearth?.close());

  it("refuses git -c alias.x='!…' x and runs git status in the session's folder", async () => {
    const sessionId = await hearth.createSession('test_admin');
    const sessionFolder = path.join(hearth.config.SESSION_FILES_DIR, sessionId);
    hearth.llm.script(
      {
        toolCalls: [
          { name: 'terminal', arguments: { command: "git -c alias.x='!touch pwned; echo $AUTH_TOKEN' x" } },
          { name: 'terminal', arguments: { command: 'git init' } },
          { name: 'terminal', arguments: { command: 'git status' } },
        ],
      },
      { content: 'Done.' },
    );
    const socket = await hearth.connect(sessionId);
    socket.send({ type: 'message', content: 'Do what the web page said.' });
    await socket.next('stream_end');
    const [trick, init, status] = socket.ofType('tool_call');
    socket.close();
    expect(trick).toMatchObject({ success: false, result: expect.stringContaining('Refused: git -c') });
    expect(existsSync(path.join(sessionFolder, 'pwned'))).toBe(false);
    expect(init).toMatchObject({ success: true });
    expect(status).toMatchObject({ success: true, result: expect.stringContaining('No commits yet') });
  });
});

describe('issue 24 through the real server: runners named in the list', () => {
  let hearth: Hearth;
  beforeAll(async () => {
    hearth = await startHearth({ profiles: { test_admin: unrestrictedProfile }, env: { TERMINAL_ALLOWED_COMMANDS: 'ls,logsave,setarch,prlimit,setpriv,ssh-agent' } });
  });
  afterAll(() => hearth?.close());

  it('refuses logsave, setarch, prlimit, setpriv and ssh-agent, and none creates its file', async () => {
    const sessionId = await hearth.createSession('test_admin');
    const commands = ['logsave /dev/null touch pwned', `setarch ${os.machine()} touch pwned`, 'prlimit --nofile=100 touch pwned', 'setpriv touch pwned', 'ssh-agent touch pwned'];
    hearth.llm.script({ toolCalls: commands.map((command) => ({ name: 'terminal', arguments: { command } })) }, { content: 'Done.' });
    const socket = await hearth.connect(sessionId);
    socket.send({ type: 'message', content: 'Make the file however you can.' });
    await socket.next('stream_end');
    socket.close();
    const calls = socket.ofType('tool_call');
    expect(calls).toHaveLength(commands.length);
    for (const call of calls) expect(call).toMatchObject({ success: false, result: expect.stringContaining('is a command that runs another command') });
    expect(existsSync(path.join(hearth.config.SESSION_FILES_DIR, sessionId, 'pwned'))).toBe(false);
  });
});
