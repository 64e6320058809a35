// What the terminal refuses when TERMINAL_ALLOWED_COMMANDS is a list. The list names
// executables, not what they may do: these tables keep the executables that run other
// programs, and the argument forms that make a harmless tool run one, from riding on it.
// Each row is data; add a row to close a new hole, and a line to test/security/terminal-*.test.ts.

/** Executables refused whatever the list says: each one runs arbitrary commands. */
export interface RunnerGroup {
  /** What they are, completing "Refused: "x" is …". */
  what: string;
  names: readonly string[];
  /** Versioned or variant names (python3.12, vim.basic, ld-linux-x86-64.so.2). */
  patterns?: readonly RegExp[];
  /** What the model should do instead. */
  instead: string;
}

const askInstead = 'ask the person to run it, or to set TERMINAL_ALLOWED_COMMANDS=* and approve commands one by one';

export const commandRunners: readonly RunnerGroup[] = [
  {
    what: 'a shell',
    names: ['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'rbash', 'fish', 'csh', 'tcsh', 'busybox', 'toybox', 'pwsh', 'nu', 'xonsh', 'elvish'],
    instead: `run one allowed executable per call; for anything else ${askInstead}`,
  },
  {
    what: 'an interpreter that runs any program it is given',
    names: [
      'node', 'nodejs', 'deno', 'bun', 'tsx', 'ts-node', 'perl', 'ruby', 'irb', 'php', 'lua', 'luajit', 'tclsh', 'wish', 'expect',
      'Rscript', 'R', 'julia', 'java', 'jshell', 'groovy', 'scala', 'guile', 'racket', 'sbcl', 'clisp', 'ocaml', 'ghci', 'runghc',
      'erl', 'escript', 'elixir', 'iex', 'osascript', 'awk', 'gawk', 'mawk', 'nawk', 'pypy', 'pypy3',
    ],
    patterns: [/^python[0-9.]*$/, /^pypy[0-9.]*$/, /^perl[0-9.]*$/, /^ruby[0-9.]*$/, /^php[0-9.]*$/, /^lua[0-9.]*$/, /^node[0-9.]*$/, /^ld(-linux[\w.-]*|-musl[\w.-]*)?\.so[\d.]*$/],
    instead: `for JavaScript or Python use the code_exec tool, which runs the code sandboxed; otherwise ${askInstead}`,
  },
  {
    what: 'a command that runs another command',
    names: [
      'env', 'xargs', 'nohup', 'nice', 'ionice', 'chrt', 'taskset', 'timeout', 'setsid', 'stdbuf', 'unbuffer', 'time', 'flock', 'chroot',
      'unshare', 'nsenter', 'watch', 'script', 'parallel', 'entr', 'systemd-run', 'start-stop-daemon', 'at', 'batch', 'crontab',
      'sg', 'newgrp', 'fakeroot', 'firejail', 'bwrap', 'proot', 'torsocks', 'proxychains', 'proxychains4', 'sshpass', 'xdg-open',
      'dbus-launch', 'catchsegv', 'run-parts', 'tmux', 'screen', 'command', 'exec', 'eval', 'builtin',
      // util-linux, systemd and friends (issue 24: logsave, setarch, prlimit, setpriv and ssh-agent ran `touch` from a list).
      'logsave', 'setarch', 'linux32', 'linux64', 'uname26', 'prlimit', 'setpriv', 'ssh-agent', 'gpg-agent', 'dbus-run-session',
      'systemd-cat', 'systemd-inhibit', 'systemd-socket-activate', 'systemd-nspawn', 'run0', 'machinectl', 'numactl', 'cgexec',
      'hwloc-bind', 'capsh', 'faketime', 'eatmydata', 'nocache', 'trickle', 'cpulimit', 'runcon', 'aa-exec', 'chpst', 'softlimit',
      'setuidgid', 'envdir', 'envuidgid', 'setlock', 'pgrphack', 'daemonize', 'daemon', 'rlwrap', 'dtach', 'abduco', 'byobu',
      'chronic', 'ifne', 'pee', 'lckdo', 'mispipe', 'zrun', 'sem', 'run-one', 'run-this-one', 'keep-one-running', 'flatpak-spawn',
      'schroot', 'fakechroot', 'lxc-attach', 'lxc-execute', 'nsjail', 'minijail0', 'hyperfine', 'watchexec', 'nodemon', 'tsocks',
      'torify', 'gio', 'winpty', 'nix-run',
    ],
    // setarch's per-architecture names (x86_64 touch x is setarch x86_64 touch x).
    patterns: [/^(i[3-6]86|x86_64|ia64|arm|armv\d+\w*|armh|aarch64|arm64|ppc|ppc32|ppc64|ppc64le|s390|s390x|sparc|sparc32|sparc32bash|sparc64|mips|mips32|mips64|parisc|parisc32|parisc64|alpha|sh|sh64|m68k|loongarch64|riscv64)$/],
    instead: `run the inner command directly if it is allowed; otherwise ${askInstead}`,
  },
  {
    what: 'a tool that runs commands as another user',
    names: ['sudo', 'su', 'doas', 'pkexec', 'runuser', 'sudoedit', 'visudo', 'vipw', 'vigr', 'ksu', 'gksu', 'gksudo', 'kdesu', 'calife'],
    instead: 'ask the person to run it themselves',
  },
  {
    what: 'a debugger or tracer, which runs the program it traces',
    names: ['strace', 'ltrace', 'gdb', 'lldb', 'valgrind', 'perf', 'rr', 'uftrace', 'bpftrace', 'trace-cmd', 'stap'],
    instead: askInstead,
  },
  {
    what: 'an editor or pager that can run shell commands',
    names: [
      'vi', 'vim', 'nvim', 'gvim', 'view', 'rview', 'rvim', 'vimdiff', 'ex', 'emacs', 'emacsclient', 'ed', 'red', 'nano', 'pico', 'joe',
      'mcedit', 'mc', 'less', 'more', 'most', 'pg', 'man', 'info', 'pager', 'editor', 'sensible-pager', 'sensible-editor',
    ],
    patterns: [/^vim\./],
    instead: 'read files with the filesystem tool or cat/head/tail, and write them with the filesystem tool',
  },
  {
    what: 'a build tool or package manager, which runs scripts from the files it reads',
    names: [
      'make', 'gmake', 'cmake', 'ninja', 'meson', 'npm', 'npx', 'pnpm', 'pnpx', 'yarn', 'bunx', 'pip', 'pip3', 'pipx', 'uv', 'uvx', 'poetry',
      'conda', 'gem', 'bundle', 'rake', 'cargo', 'go', 'mvn', 'gradle', 'ant', 'apt', 'apt-get', 'aptitude', 'dpkg', 'snap', 'flatpak',
      'rpm', 'dnf', 'yum', 'zypper', 'pacman', 'apk', 'brew', 'nix', 'nix-shell',
    ],
    patterns: [/^pip[0-9.]+$/],
    instead: askInstead,
  },
  {
    what: 'a compiler, which can load plugins and run helper programs it is given',
    names: ['cc', 'c++', 'gcc', 'g++', 'clang', 'clang++', 'tcc', 'rustc', 'ld'],
    patterns: [/^(gcc|g\+\+|clang|clang\+\+)-[0-9.]+$/],
    instead: askInstead,
  },
  {
    what: 'a remote shell',
    names: ['ssh', 'slogin', 'scp', 'sftp', 'rsh', 'rlogin', 'telnet', 'mosh'],
    instead: 'use the ssh_exec tool for remote hosts',
  },
  {
    what: 'a database shell whose commands can run programs',
    names: ['sqlite3', 'mysql', 'mariadb', 'psql'],
    instead: askInstead,
  },
];

/** The group an executable name belongs to, if it is a command runner. */
export function findCommandRunner(name: string): RunnerGroup | undefined {
  return commandRunners.find((group) => group.names.includes(name) || group.patterns?.some((pattern) => pattern.test(name)));
}

/** Argument forms refused for one executable. */
export interface ArgumentRule {
  command: string;
  /** Words refused exactly (find's predicates, a subcommand). */
  words?: readonly string[];
  /** Long options refused, also abbreviated (GNU tools accept `--to-comm`) and with `=value`. */
  longOptions?: readonly string[];
  /** Short option letters refused, alone (`-I`), bundled (`-xIf`) or with their value attached (`-Igzip`). */
  shortOptions?: readonly string[];
  /** Letters refused in a first word without a dash (tar's old style, `tar xIf`). */
  oldStyleLetters?: readonly string[];
  /** Any other test on the arguments; answers the offending word. */
  test?: (args: readonly string[]) => string | undefined;
  /** What the form does, completing "Refused: <word> …". */
  what: string;
  instead: string;
}

const dockerReadOnlySubcommandList = ['ps', 'logs', 'images', 'inspect', 'stats', 'top', 'version', 'info', 'port', 'diff', 'history'] as const;
const dockerReadOnlySubcommands: ReadonlySet<string> = new Set(dockerReadOnlySubcommandList);

/** The subcommand (first word not starting with -) when it is not in `allowed`; a missing one counts too. */
function firstOperandOutside(args: readonly string[], allowed: ReadonlySet<string>): string | undefined {
  const subcommand = args.find((word) => !word.startsWith('-'));
  if (subcommand === undefined) return args[0] ?? '(no subcommand)';
  return allowed.has(subcommand) ? undefined : subcommand;
}

export const argumentRules: readonly ArgumentRule[] = [
  {
    command: 'find',
    words: ['-exec', '-execdir', '-ok', '-okdir'],
    what: 'makes find run a program for each file',
    instead: 'run find without it to list the files, then run an allowed command on them in another call',
  },
  {
    command: 'find',
    words: ['-fprint', '-fprint0', '-fprintf', '-fls'],
    what: 'makes find write its results to a file',
    instead: 'let find print, and save the output with the filesystem tool if needed',
  },
  {
    command: 'tar',
    longOptions: ['to-command', 'checkpoint-action', 'use-compress-program', 'rsh-command', 'rmt-command', 'info-script', 'new-volume-script'],
    shortOptions: ['I', 'F'],
    oldStyleLetters: ['I', 'F'],
    what: 'makes tar run a program',
    instead: 'use tar\'s own compression flags (-z, -j, -J, --zstd) and let it write files',
  },
  {
    command: 'tar',
    test: (args) => {
      if (args.includes('--force-local')) return undefined;
      return args.find((word) => /^[^/-][^/]*:/.test(word) || /^(--file=|-[^-]*f)[^/]*:/.test(word));
    },
    what: 'names a remote archive (host:file), for which tar runs a remote shell',
    instead: 'add --force-local if the colon is part of a local file name',
  },
  {
    command: 'rsync',
    longOptions: ['rsh', 'rsync-path'],
    shortOptions: ['e'],
    what: 'makes rsync run a program as its remote shell',
    instead: 'copy between local folders, or ask the person for a remote copy',
  },
  {
    command: 'zip',
    longOptions: ['unzip-command'],
    test: (args) => args.find((word) => /^-[^-]*TT/.test(word)),
    what: 'makes zip run a program to test the archive',
    instead: 'use zip -T, which tests with unzip',
  },
  { command: 'sort', longOptions: ['compress-program'], what: 'makes sort run a program', instead: 'sort without it' },
  { command: 'split', longOptions: ['filter'], what: 'makes split run a shell command for each piece', instead: 'split into files without it' },
  { command: 'sdiff', longOptions: ['diff-program'], what: 'makes sdiff run another program', instead: 'use it without that option' },
  { command: 'diff3', longOptions: ['diff-program'], what: 'makes diff3 run another program', instead: 'use it without that option' },
  { command: 'cpio', longOptions: ['rsh-command'], what: 'makes cpio run a remote shell', instead: 'use local files' },
  { command: 'wget', longOptions: ['use-askpass'], what: 'makes wget run a program for the password', instead: 'use wget without it' },
  { command: 'tcpdump', shortOptions: ['z'], what: 'makes tcpdump run a program on each saved file', instead: 'capture without -z' },
  { command: 'nmap', longOptions: ['script'], what: 'runs nmap scripts, which can run programs', instead: 'scan without --script, or ask the person' },
  { command: 'systemctl', words: ['edit'], what: 'opens an editor', instead: 'ask the person to edit the unit' },
  {
    command: 'docker',
    test: (args) => firstOperandOutside(args, dockerReadOnlySubcommands),
    what: 'is not one of docker\'s read-only commands (a container can reach the whole machine)',
    instead: `use ${dockerReadOnlySubcommandList.join(', ')}; ask the person for anything else`,
  },
  {
    command: 'podman',
    test: (args) => firstOperandOutside(args, dockerReadOnlySubcommands),
    what: 'is not one of podman\'s read-only commands',
    instead: `use ${dockerReadOnlySubcommandList.join(', ')}; ask the person for anything else`,
  },
];

/** Arguments always added in front of the command's own (GNU sed's --sandbox refuses its e, r and w commands). */
export const forcedArguments: Readonly<Record<string, readonly string[]>> = {
  sed: ['--sandbox'],
};

/** True when `word` is `--name`, `--name=…` or an abbreviation of `--name` (as GNU getopt and git accept). */
export function isLongOption(word: string, name: string): boolean {
  if (!word.startsWith('--') || word === '--') return false;
  const given = word.slice(2).split('=', 1)[0]!;
  return given !== '' && name.startsWith(given);
}

/** True when `word` is a bundle of short options (`-xvf`, `-Ifoo`) holding `letter`. */
export function hasShortOption(word: string, letter: string): boolean {
  return word.startsWith('-') && !word.startsWith('--') && word.slice(1).includes(letter);
}

/** The first word of `args` a rule refuses, if any. */
export function matchArgumentRule(rule: ArgumentRule, args: readonly string[]): string | undefined {
  for (const word of args) {
    if (rule.words?.includes(word)) return word;
    if (rule.longOptions?.some((name) => isLongOption(word, name))) return word;
    if (rule.shortOptions?.some((letter) => hasShortOption(word, letter))) return word;
  }
  const first = args[0];
  if (rule.oldStyleLetters && first !== undefined && !first.startsWith('-') && rule.oldStyleLetters.some((letter) => first.includes(letter))) {
    return first;
  }
  return rule.test?.(args);
}
