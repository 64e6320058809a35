// The programs a server admin reads with, for the `terminal(readonly)` and `ssh_exec(readonly)`
// approval rules (docs/agent.md, "Approvals"). Each row knows the program's options that write, run
// something or change the system; a program without a row is not read-only. Command runners
// (env, xargs, nice, sudo, awk, less … see tools/builtin/command-policy.ts) never get a row:
// test/readonly-command.test.ts checks that. To add a program, add a row and lines to that test.

/** What a program's words may be; `check` sees them after quote removal. */
export interface ProgramRule {
  /** Short option letters that write, run or change something, and what they do ("writes a file"). */
  short?: Readonly<Record<string, string>>;
  /** Long option names (without `--`) that do; any abbreviation of one counts as that option. */
  long?: Readonly<Record<string, string>>;
  /** The program's other long options; when given, a long option outside these and `long` is not read-only. */
  safeLong?: readonly string[];
  /** Short letters that take a value, attached (`-n5`) or as the next word: the rest of a bundle is the value. */
  shortValues?: string;
  /** Short letters whose optional value is only ever attached (`-b-1`, `-Iseconds`). */
  shortOptionalValues?: string;
  /** Long options (full names) whose value may be the next word; only used to find the operands. */
  longValues?: readonly string[];
  /** Words refused wherever they stand (find's actions), with what they do. */
  words?: Readonly<Record<string, string>>;
  /** `words`: the program does not take `-x`/`--name` options (find, ip); only `words` and `check` apply. */
  style?: 'getopt' | 'words';
  /** The remaining test (subcommands, operands); answers why the command is not read-only. */
  check?: (args: readonly string[], operands: readonly string[]) => string | undefined;
}

const writesAFile = 'writes a file';

/** The first operand must be one of `allowed` (a missing one is fine when `optional`). */
function subcommand(program: string, allowed: readonly string[], optional: boolean): ProgramRule['check'] {
  return (_args, operands) => {
    const first = operands[0];
    if (first === undefined) return optional ? undefined : `\`${program}\` needs one of its read-only commands: ${allowed.join(', ')}`;
    return allowed.includes(first) ? undefined : `\`${program} ${first}\` is not one of ${program}'s read-only commands (${allowed.join(', ')})`;
  };
}

const systemctlReadCommands = [
  'status', 'show', 'cat', 'is-active', 'is-enabled', 'is-failed', 'is-system-running', 'list-units', 'list-unit-files', 'list-timers',
  'list-sockets', 'list-dependencies', 'list-jobs', 'list-machines', 'list-paths', 'list-automounts', 'get-default', 'show-environment',
];

const dockerReadCommands: Readonly<Partial<Record<string, readonly string[] | true>>> = {
  ps: true, logs: true, inspect: true, images: true, stats: true, version: true, info: true, top: true, port: true, diff: true, history: true,
  container: ['ls', 'list', 'ps', 'inspect', 'logs', 'stats', 'top', 'port', 'diff'],
  image: ['ls', 'list', 'inspect', 'history'],
  network: ['ls', 'list', 'inspect'],
  volume: ['ls', 'list', 'inspect'],
  system: ['df', 'info'],
};

function checkDocker(args: readonly string[]): string | undefined {
  const [command, sub] = args;
  if (command === undefined) return '`docker` needs one of its read-only commands';
  if (command.startsWith('-')) return `\`${command}\` is one of docker's global options, which can reach another daemon: put the command first`;
  const allowed = Object.hasOwn(dockerReadCommands, command) ? dockerReadCommands[command] : undefined;
  if (allowed === undefined) return `\`docker ${command}\` is not one of docker's read-only commands (${Object.keys(dockerReadCommands).join(', ')})`;
  if (allowed === true) return undefined;
  if (sub !== undefined && allowed.includes(sub)) return undefined;
  return `\`docker ${[command, sub].filter(Boolean).join(' ')}\` is not one of docker's read-only commands (${allowed.map((word) => `${command} ${word}`).join(', ')})`;
}

// iproute2 picks the first object, in this order, that the word abbreviates (`ip a` is address).
const ipObjects = [
  'address', 'addrlabel', 'maddress', 'route', 'rule', 'neighbor', 'neighbour', 'ntable', 'ntbl', 'link', 'l2tp', 'fou', 'ila', 'macsec',
  'tunnel', 'tunl', 'tuntap', 'tap', 'token', 'tcpmetrics', 'tcp_metrics', 'monitor', 'xfrm', 'mroute', 'mrule', 'netns', 'netconf',
  'vrf', 'sr', 'nexthop', 'mptcp', 'ioam', 'help', 'stats',
];
// Objects whose bare form and whose show/list only read.
const ipReadObjects = new Set(['address', 'addrlabel', 'maddress', 'route', 'rule', 'neighbor', 'neighbour', 'ntable', 'ntbl', 'link', 'l2tp', 'tunnel', 'tunl', 'tuntap', 'tap', 'netconf', 'nexthop', 'mroute', 'mrule', 'netns', 'token']);
const ipReadCommands = new Set(['show', 'list', 'lst']);
const ipOptions = new Set([
  '-4', '-6', '-0', '-s', '-stats', '-statistics', '-d', '-details', '-br', '-brief', '-c', '-color', '-j', '-json', '-p', '-pretty',
  '-o', '-oneline', '-h', '-human', '-human-readable', '-r', '-resolve', '-t', '-timestamp', '-ts', '-tshort', '-iec', '-a', '-all', '-V', '-Version',
]);

function checkIp(args: readonly string[]): string | undefined {
  let index = 0;
  for (; index < args.length && args[index]!.startsWith('-'); index++) {
    const option = args[index]!;
    if (!ipOptions.has(option) && !/^-c(olor)?=(always|auto|never)$/.test(option)) return `\`${option}\` is not one of ip's display options (\`-b\` runs a batch file, \`-n\` enters a namespace)`;
  }
  const object = args[index];
  if (object === undefined) return '`ip` needs an object such as `addr`, `route` or `link`';
  // Every object the word could stand for must be a readable one, whatever order an ip version tries them in.
  const candidates = ipObjects.filter((name) => name.startsWith(object));
  if (candidates.length === 0 || candidates.some((name) => !ipReadObjects.has(name))) {
    return `\`ip ${object}\` is not one of the objects ip shows read-only (address, route, rule, neighbour, link …)`;
  }
  const command = args[index + 1];
  if (command !== undefined && !ipReadCommands.has(command)) return `\`ip ${object} ${command}\` may change the system: only \`show\` or \`list\` are read-only`;
  return undefined;
}

function atMostOperands(count: number, what: string): ProgramRule['check'] {
  return (_args, operands) => (operands.length > count ? `\`${operands[count]}\` ${what}` : undefined);
}

const noArguments = (program: string, what: string): ProgramRule['check'] => (args) => (args.length > 0 ? `\`${program} ${args[0]}\`: ${what}` : undefined);

const plain: ProgramRule = {};

export const readOnlyPrograms: Readonly<Record<string, ProgramRule>> = {
  // Files and text: none of these writes or runs anything.
  ls: plain, cat: plain, head: plain, tail: plain, wc: plain, cut: plain, tr: plain, nl: plain, tac: plain, stat: plain, realpath: plain,
  readlink: plain, basename: plain, dirname: plain, diff: plain, cmp: plain, comm: plain, md5sum: plain, sha1sum: plain, sha256sum: plain,
  sha512sum: plain, b2sum: plain, cksum: plain, grep: plain, egrep: plain, fgrep: plain, jq: plain, echo: plain, pwd: plain,
  sort: {
    short: { o: 'writes its output to a file' },
    long: { output: 'writes its output to a file', 'compress-program': 'runs a program to compress temporary files' },
    safeLong: [
      'ignore-leading-blanks', 'dictionary-order', 'ignore-case', 'general-numeric-sort', 'ignore-nonprinting', 'month-sort', 'human-numeric-sort',
      'numeric-sort', 'random-sort', 'random-source', 'reverse', 'sort', 'version-sort', 'batch-size', 'check', 'debug', 'files0-from', 'key',
      'merge', 'stable', 'buffer-size', 'field-separator', 'temporary-directory', 'parallel', 'unique', 'zero-terminated', 'help', 'version',
    ],
    shortValues: 'kSTot',
  },
  uniq: {
    shortValues: 'fsw',
    longValues: ['skip-fields', 'skip-chars', 'check-chars'],
    check: atMostOperands(1, 'is a second file name, which uniq writes its output to'),
  },
  find: {
    style: 'words',
    words: {
      '-delete': 'deletes files',
      '-exec': 'runs a program for each file',
      '-execdir': 'runs a program for each file',
      '-ok': 'runs a program for each file',
      '-okdir': 'runs a program for each file',
      '-fprint': 'writes to a file',
      '-fprint0': 'writes to a file',
      '-fprintf': 'writes to a file',
      '-fls': 'writes to a file',
    },
  },
  file: { short: { C: 'compiles a magic file and writes it' }, long: { compile: 'compiles a magic file and writes it' }, shortValues: 'efFmP' },
  tree: { short: { o: 'writes its output to a file', R: 'writes an HTML file into every folder' } },
  sed: {
    short: { i: 'edits files in place' },
    long: { 'in-place': 'edits files in place' },
    shortValues: 'efl',
    check: (args) => (args.includes('--sandbox') ? undefined : '`sed` without `--sandbox` can write files (`w`) and run commands (`e`)'),
  },
  // The system.
  df: plain, du: plain, free: plain, uptime: plain, ps: plain, pgrep: plain, pidof: plain, vmstat: plain, iostat: plain, lscpu: plain,
  lsblk: plain, lsmod: plain, lspci: plain, lsusb: plain, findmnt: plain, id: plain, whoami: plain, groups: plain, uname: plain, arch: plain,
  nproc: plain, w: plain, who: plain, last: plain, printenv: plain, which: plain, whereis: plain, getent: plain, locale: plain, netstat: plain,
  'dpkg-query': plain,
  date: {
    short: { s: 'sets the clock' },
    long: { set: 'sets the clock' },
    safeLong: ['date', 'debug', 'file', 'iso-8601', 'resolution', 'rfc-email', 'rfc-2822', 'rfc-3339', 'reference', 'universal', 'utc', 'help', 'version'],
    shortValues: 'dfrs',
    shortOptionalValues: 'I',
    longValues: ['date', 'file', 'reference', 'set', 'rfc-3339'],
    check: (_args, operands) => {
      const setting = operands.find((operand) => !operand.startsWith('+'));
      return setting === undefined ? undefined : `\`${setting}\` sets the clock (only a \`+FORMAT\` operand is read-only)`;
    },
  },
  hostname: {
    short: { F: 'sets the host name from a file', b: 'sets the host name' },
    long: { file: 'sets the host name from a file', boot: 'sets the host name' },
    shortValues: 'F',
    check: (_args, operands) => (operands.length > 0 ? `\`${operands[0]}\` sets the host name` : undefined),
  },
  mount: { check: noArguments('mount', 'only a bare `mount` (the list) is read-only') },
  dmesg: {
    short: {
      c: 'clears the kernel ring buffer',
      C: 'clears the kernel ring buffer',
      D: 'turns off kernel messages on the console',
      E: 'turns on kernel messages on the console',
      n: 'sets the console log level',
    },
    long: {
      'read-clear': 'clears the kernel ring buffer',
      clear: 'clears the kernel ring buffer',
      'console-off': 'turns off kernel messages on the console',
      'console-on': 'turns on kernel messages on the console',
      'console-level': 'sets the console log level',
    },
    safeLong: [
      'color', 'decode', 'file', 'facility', 'force-prefix', 'human', 'json', 'kernel', 'level', 'noescape', 'nopager', 'notime', 'raw',
      'show-delta', 'since', 'until', 'reltime', 'syslog', 'ctime', 'time-format', 'userspace', 'follow', 'follow-new', 'buffer-size', 'help', 'version',
    ],
    shortValues: 'Fflns',
    shortOptionalValues: 'L',
  },
  sysctl: {
    short: { w: 'writes kernel settings', p: 'loads kernel settings from a file', f: 'loads kernel settings from a file' },
    long: { write: 'writes kernel settings', load: 'loads kernel settings from a file', system: 'loads kernel settings from the system files' },
    shortValues: 'r',
    check: (_args, operands) => {
      const setting = operands.find((operand) => operand.includes('='));
      return setting === undefined ? undefined : `\`${setting}\` sets a kernel setting`;
    },
  },
  top: {
    check: (args) =>
      args.some((word) => /^-[cHiSs1]*b/.test(word)) ? undefined : '`top` without `-b` waits for keystrokes, which can kill or renice processes',
  },
  lsof: { short: { D: 'builds or updates the device cache file' }, shortValues: 'Acdeikmpsu' },
  // Network.
  ss: {
    short: { D: writesAFile, K: 'closes sockets' },
    long: { diag: writesAFile, kill: 'closes sockets' },
    safeLong: [
      'help', 'version', 'numeric', 'resolve', 'all', 'listening', 'options', 'extended', 'memory', 'processes', 'threads', 'info', 'tos',
      'cgroup', 'tipcinfo', 'summary', 'events', 'context', 'contexts', 'net', 'bpf', 'no-header', 'oneline', 'ipv4', 'ipv6', 'packet', 'tcp',
      'mptcp', 'sctp', 'udp', 'dccp', 'raw', 'unix', 'tipc', 'vsock', 'xdp', 'inet-sockopt', 'family', 'query', 'socket', 'filter',
    ],
    shortValues: 'fADFN',
  },
  ip: { style: 'words', check: checkIp },
  // Services, logs and containers.
  systemctl: {
    short: { H: 'runs the command on another machine over ssh' },
    long: { host: 'runs the command on another machine over ssh', image: 'mounts a disk image' },
    shortValues: 'tpPsHMno',
    longValues: ['type', 'property', 'state', 'signal', 'host', 'machine', 'lines', 'output', 'root', 'image', 'what', 'kill-whom'],
    check: subcommand('systemctl', systemctlReadCommands, true),
  },
  journalctl: {
    long: {
      'vacuum-size': 'deletes archived journal files',
      'vacuum-time': 'deletes archived journal files',
      'vacuum-files': 'deletes archived journal files',
      rotate: 'rotates the journal files',
      flush: 'moves the journal from /run to /var',
      sync: 'makes journald write everything to disk',
      'relinquish-var': 'moves the journal back to /run',
      'smart-relinquish-var': 'moves the journal back to /run',
      'setup-keys': 'creates sealing keys',
      'update-catalog': 'rewrites the message catalog',
      'cursor-file': 'writes the last cursor to a file',
      image: 'mounts a disk image',
    },
    safeLong: [
      'help', 'version', 'no-pager', 'pager-end', 'follow', 'output', 'output-fields', 'all', 'full', 'no-full', 'lines', 'no-tail', 'new-id128',
      'quiet', 'merge', 'this-boot', 'boot', 'list-boots', 'dmesg', 'system', 'user', 'directory', 'file', 'root', 'header', 'identifier',
      'exclude-identifier', 'priority', 'facility', 'grep', 'case-sensitive', 'interval', 'verify', 'verify-key', 'disk-usage', 'cursor',
      'after-cursor', 'show-cursor', 'since', 'until', 'unit', 'user-unit', 'field', 'fields', 'catalog', 'list-catalog', 'dump-catalog',
      'reverse', 'machine', 'utc', 'no-hostname', 'namespace', 'list-namespaces', 'force', 'truncate-newline',
    ],
    shortValues: 'oDpgcSUtTuFMi',
    shortOptionalValues: 'nb',
  },
  docker: { style: 'words', check: checkDocker },
  hostnamectl: {
    short: { H: 'runs the command on another machine over ssh' },
    long: { host: 'runs the command on another machine over ssh' },
    shortValues: 'HM',
    check: subcommand('hostnamectl', ['status'], true),
  },
  timedatectl: {
    short: { H: 'runs the command on another machine over ssh' },
    long: { host: 'runs the command on another machine over ssh' },
    shortValues: 'HMpP',
    check: subcommand('timedatectl', ['status', 'show', 'list-timezones', 'timesync-status', 'show-timesync'], true),
  },
  'apt-cache': {
    short: { o: 'sets APT configuration', c: 'reads another APT configuration', p: 'uses another cache file', s: 'uses another cache file' },
    long: { option: 'sets APT configuration', 'config-file': 'reads another APT configuration', 'pkg-cache': 'uses another cache file', 'src-cache': 'uses another cache file' },
    shortValues: 'ocps',
    check: subcommand('apt-cache', ['policy', 'show', 'showpkg', 'showsrc', 'search', 'depends', 'rdepends', 'madison', 'stats', 'pkgnames'], false),
  },
  nginx: {
    style: 'words',
    check: (args) => {
      const other = args.find((word) => !['-t', '-T', '-v', '-V', '-q'].includes(word));
      return other === undefined ? undefined : `\`nginx ${other}\`: only \`nginx -t\`, \`-T\`, \`-v\` and \`-V\` are read-only`;
    },
  },
};

/** Programs often tried that have no row, with why (the rest are "unknown"). */
export const notReadOnlyPrograms: Readonly<Record<string, string>> = {
  tee: 'writes files',
  dd: 'writes files',
  cp: 'writes files',
  mv: 'moves files',
  rm: 'deletes files',
  touch: 'writes files',
  env: 'runs the command it is given (`printenv` lists the environment)',
  xargs: 'runs the command it is given',
  sudo: 'runs commands as another user',
  su: 'runs commands as another user',
  awk: 'runs programs (`system()`) and writes files',
  less: 'can run shell commands',
  more: 'can run shell commands',
  watch: 'runs the command it is given',
  sh: 'is a shell',
  bash: 'is a shell',
};
