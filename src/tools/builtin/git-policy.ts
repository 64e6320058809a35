// git under a TERMINAL_ALLOWED_COMMANDS list. git runs programs in many ways: aliases with
// `!`, configuration that names a program (core.pager, core.fsmonitor, diff.external,
// filter drivers…), hooks, and options of some subcommands. A list holding git must not
// hold all of that, so: no configuration from the command line, none of the subcommands
// and options below, no repository configuration that names a program, and never hooks.

import { isLongOption, hasShortOption } from './command-policy.ts';

/** Options before the subcommand that change nothing git runs. */
const harmlessGlobalOptions: ReadonlySet<string> = new Set([
  '--no-pager', '-P', '--paginate', '-p', '--no-replace-objects', '--literal-pathspecs', '--glob-pathspecs',
  '--noglob-pathspecs', '--icase-pathspecs', '--no-optional-locks', '--version',
]);

/** Options before the subcommand that are refused, with why; anything else unknown is refused too. */
const refusedGlobalOptions: readonly { options: readonly string[]; why: string }[] = [
  {
    options: ['-c', '--config-env'],
    why: 'sets git configuration for the call, and configuration can make git run any program (alias.x=!command, core.pager…). Run git without it; if a setting is really needed, ask the person to set it',
  },
  { options: ['--exec-path'], why: 'changes where git finds the programs it runs. Run git without it' },
  {
    options: ['-C', '--git-dir', '--work-tree', '--namespace', '--super-prefix', '--bare'],
    why: 'points git at another repository or folder. Use the terminal\'s cwd parameter to choose the folder instead',
  },
  { options: ['--help', '-h', '--html-path', '--man-path', '--info-path'], why: 'opens manual pages through other programs. Use "git <command> -h" for a summary' },
];

/** Subcommands refused outright. */
export const refusedGitSubcommands: Readonly<Record<string, string>> = {
  difftool: 'runs a diff program',
  mergetool: 'runs a merge program',
  'filter-branch': 'runs shell snippets for every commit',
  'filter-repo': 'runs Python snippets for every commit',
  instaweb: 'starts a web server and a browser',
  'web--browse': 'starts a browser',
  help: 'opens manual pages through man or a browser (use "git <command> -h" for a summary)',
  'send-email': 'runs a mail program',
  'imap-send': 'can run a tunnel command',
  daemon: 'starts a server',
  shell: 'is a login shell',
  'upload-pack': 'is a server-side program',
  'receive-pack': 'is a server-side program',
  'upload-archive': 'is a server-side program',
  'http-backend': 'is a server-side program',
  'remote-ext': 'runs a command as a remote',
  'remote-fd': 'is a transport helper',
  credential: 'talks to credential helpers',
  'credential-store': 'talks to credential helpers',
  'credential-cache': 'talks to credential helpers',
  p4: 'runs Perforce',
  svn: 'runs Subversion',
  cvsimport: 'runs CVS',
  cvsserver: 'is a server-side program',
  archimport: 'runs GNU Arch',
};

/** Options (or words) refused for one subcommand. */
export const refusedGitArguments: readonly { subcommand: string; words?: readonly string[]; longOptions?: readonly string[]; shortOptions?: readonly string[]; what: string }[] = [
  { subcommand: 'submodule', words: ['foreach'], what: 'runs a shell command in every submodule' },
  { subcommand: 'bisect', words: ['run'], what: 'runs a command at every step' },
  { subcommand: 'rebase', longOptions: ['exec'], shortOptions: ['x'], what: 'runs a command after every commit' },
  { subcommand: 'grep', longOptions: ['open-files-in-pager'], shortOptions: ['O'], what: 'opens the matching files in a program' },
  { subcommand: 'clone', longOptions: ['upload-pack', 'template', 'config'], shortOptions: ['u', 'c'], what: 'runs a program or sets configuration for the new repository' },
  { subcommand: 'init', longOptions: ['template'], what: 'copies hooks and configuration from a template' },
  { subcommand: 'fetch', longOptions: ['upload-pack'], what: 'runs a program as the remote side' },
  { subcommand: 'pull', longOptions: ['upload-pack'], what: 'runs a program as the remote side' },
  { subcommand: 'ls-remote', longOptions: ['upload-pack'], shortOptions: ['u'], what: 'runs a program as the remote side' },
  { subcommand: 'push', longOptions: ['receive-pack', 'exec'], what: 'runs a program as the remote side' },
  { subcommand: 'archive', longOptions: ['exec', 'remote'], what: 'runs a program as the remote side' },
  { subcommand: 'config', longOptions: ['global', 'system', 'file', 'blob', 'edit'], shortOptions: ['f', 'e'], what: 'changes configuration outside this repository, or opens an editor' },
];

/**
 * Repository configuration keys (as `git config --list` prints them, lower-cased) that name a
 * program git runs. A repository is refused while its own configuration holds one: the model
 * can write `.git/config` with the filesystem tool.
 */
export const programConfigKeys: readonly RegExp[] = [
  /^alias\./,
  /^core\.(fsmonitor|hookspath|pager|editor|sshcommand|askpass|gitproxy|alternaterefscommand)$/,
  /^diff\.external$/,
  /^diff\..+\.(textconv|command)$/,
  /^(difftool|mergetool)\./,
  /^merge\..+\.driver$/,
  /^filter\..+\.(clean|smudge|process)$/,
  /^credential\.(.+\.)?helper$/,
  /^gpg\./,
  /^sequence\.editor$/,
  /^pager\./,
  /^interactive\.difffilter$/,
  /^remote\..+\.(uploadpack|receivepack|vcs)$/,
  /^uploadpack\.packobjectshook$/,
  /^submodule\..+\.update$/,
  /^(web|help)\.browser$/,
  /^browser\./,
  /^man\./,
  /^imap\.tunnel$/,
  /^sendemail\./,
  /^instaweb\./,
];

/**
 * Added in front of every git call: hooks never run (the model can write `.git/hooks/`), no
 * pager or editor starts, the fsmonitor is off, and `ext::` remotes (which run a command) are refused.
 */
export const gitSafetyArguments: readonly string[] = [
  '-c', 'core.hooksPath=/dev/null',
  '-c', 'core.fsmonitor=false',
  '-c', 'core.pager=cat',
  '-c', 'core.editor=false',
  '-c', 'sequence.editor=false',
  '-c', 'protocol.ext.allow=never',
];

function refusal(word: string, why: string): string {
  return `Refused: git ${word} ${why}. TERMINAL_ALLOWED_COMMANDS lists executables, not what they run.`;
}

/** A refusal for arguments that make git run programs; undefined when they are fine. */
export function checkGitArguments(args: readonly string[]): string | undefined {
  let index = 0;
  while (index < args.length && args[index]!.startsWith('-')) {
    const word = args[index]!;
    const name = word.split('=', 1)[0]!;
    if (harmlessGlobalOptions.has(word)) {
      index += 1;
      continue;
    }
    const refused = refusedGlobalOptions.find((entry) => entry.options.includes(name) || entry.options.some((option) => option.startsWith('--') && isLongOption(word, option.slice(2))));
    if (refused) return refusal(word, refused.why);
    return `Refused: the git option ${word} before the subcommand is not supported here; run "git <subcommand> …" without it.`;
  }
  const subcommand = args[index];
  if (subcommand === undefined) return undefined;
  const rest = args.slice(index + 1);
  if (Object.hasOwn(refusedGitSubcommands, subcommand)) {
    return `${refusal(subcommand, refusedGitSubcommands[subcommand]!)} Ask the person to run it if it is needed.`;
  }
  if (rest.includes('--help')) return refusal(`${subcommand} --help`, 'opens a manual page through man or a browser. Use "git ' + subcommand + ' -h" for a summary');
  for (const rule of refusedGitArguments) {
    if (rule.subcommand !== subcommand) continue;
    const word = rest.find((candidate) =>
      rule.words?.includes(candidate) ||
      rule.longOptions?.some((option) => isLongOption(candidate, option)) ||
      rule.shortOptions?.some((letter) => hasShortOption(candidate, letter)),
    );
    if (word !== undefined) return `${refusal(`${subcommand} ${word}`, rule.what)} Leave it out, or ask the person to run it.`;
  }
  return undefined;
}

/** Entries of `git config --list --show-scope -z` output. */
export function parseConfigList(output: string): { scope: string; key: string }[] {
  const fields = output.split('\0');
  const entries: { scope: string; key: string }[] = [];
  for (let index = 0; index + 1 < fields.length; index += 2) {
    const scope = fields[index]!;
    const key = fields[index + 1]!.split('\n', 1)[0]!.toLowerCase();
    entries.push({ scope, key });
  }
  return entries;
}

/**
 * A refusal when the repository's own configuration (local or worktree scope, including what
 * it includes) names a program; the person's global and system configuration are theirs.
 */
export function checkRepositoryConfig(configList: string): string | undefined {
  const offending = parseConfigList(configList)
    .filter((entry) => entry.scope === 'local' || entry.scope === 'worktree' || entry.scope === 'command')
    .map((entry) => entry.key)
    .filter((key) => programConfigKeys.some((pattern) => pattern.test(key)));
  if (offending.length === 0) return undefined;
  return (
    `Refused: this repository's own configuration sets ${[...new Set(offending)].join(', ')}, which makes git run other programs. ` +
    'git does not run here while it does. Ask the person to review .git/config (or remove those lines if you added them).'
  );
}
