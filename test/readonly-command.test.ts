import { describe, expect, it } from 'vitest';
import { buildPolicy, judge, type ApprovalPolicy } from '../src/approvals/policy.ts';
import { judgeReadOnly } from '../src/approvals/readonly-command.ts';
import { readOnlyPrograms } from '../src/approvals/readonly-programs.ts';
import { findCommandRunner } from '../src/tools/builtin/command-policy.ts';

// The read-only class behind `terminal(readonly)` and `ssh_exec(readonly)` (docs/agent.md, "Approvals").
// Each line is judged as sh, bash or zsh would read it; the second column is the reason given
// when it is not read-only (a part of it), or `true` when it is read-only.

const readOnly: readonly string[] = [
  // Files and text.
  'ls',
  'ls -la /etc',
  'ls -la ../..',
  'ls --color=never -1 /var/log',
  'cat /etc/os-release',
  "cat '/etc/nginx/sites-enabled/my site.conf'",
  'cat "/tmp/a b"',
  'head -n 20 /var/log/syslog',
  'head -n20 /var/log/syslog',
  'tail -f /var/log/nginx/error.log',
  'tail -n 100 /var/log/syslog',
  'tail -5 /var/log/syslog',
  'wc -l /etc/passwd',
  "grep -R 'listen' /etc/nginx",
  "grep -E '^(a|b)' /etc/hosts",
  'grep -v "#" /etc/fstab',
  'egrep -i error /var/log/syslog',
  'fgrep -c x /etc/hosts',
  "grep 'a\\.b' /etc/hosts",
  'grep \\-v x /etc/hosts',
  'find /var/log -name "*.gz" -mtime +7',
  'find / -xdev -type f -size +100M',
  "find . -name '*.log' -print",
  'find /etc ! -name x',
  'stat /etc/passwd',
  'file /bin/ls',
  'sort /etc/passwd',
  'sort -k2 -t: /etc/passwd',
  'sort -ko /etc/passwd',
  'sort --reverse /etc/passwd',
  'uniq -c /tmp/list',
  'uniq -f 1 /tmp/list',
  'cut -d: -f1 /etc/passwd',
  'tr a-z A-Z',
  'diff /etc/hosts /etc/hosts.bak',
  'sha256sum /bin/ls',
  'readlink -f /etc/localtime',
  'tree -L 2 /etc/nginx',
  "sed --sandbox -n '1,5p' /etc/hosts",
  "jq '.name' /tmp/package.json",
  'echo hello',
  'pwd',
  // Globs that start with a folder cannot expand to an option.
  'ls /var/log/*.log',
  'tail -n 5 /var/log/nginx/*.log',
  'cat /proc/*/cmdline',
  "grep -r x / --include='*.conf'",
  'cat ./*.conf',
  'ls ~/',
  'ls ~',
  // The system.
  'df -h',
  'du -sh /var/lib/docker',
  'free -m',
  'uptime',
  'ps aux',
  'ps -ef --forest',
  'pgrep -a nginx',
  'vmstat 1 5',
  'iostat -x',
  'lscpu',
  'lsblk -f',
  'findmnt /',
  'mount',
  'id',
  'id www-data',
  'whoami',
  'hostname',
  'hostname -f',
  'uname -a',
  'date',
  'date -u',
  'date +%s',
  "date -d 'last sunday' +%F",
  'date -dyesterday',
  'date --date=tomorrow',
  'w',
  'who',
  'last -n 10',
  'printenv PATH',
  'which nginx',
  'whereis nginx',
  'dmesg',
  'dmesg -T --level=err,warn',
  'dmesg -H -l err',
  'sysctl net.ipv4.ip_forward',
  'sysctl -a',
  'top -b -n 1',
  'top -bn1',
  'lsof -i :80',
  'lsof -nP -iTCP -sTCP:LISTEN',
  'lsof -iUDP',
  'lsof +D /var/log',
  'dpkg-query -l nginx',
  'apt-cache policy nginx',
  'nginx -t',
  // Network.
  'ss -tlnp',
  'ss -s',
  'ss -A tcp',
  'ss -AD',
  'ss --tcp --listening --numeric',
  'netstat -tulpn',
  'ip a',
  'ip addr',
  'ip addr show',
  'ip -br a',
  'ip -4 addr show dev eth0',
  'ip route',
  'ip route show table all',
  'ip r',
  'ip link show',
  'ip -s link',
  'ip neigh',
  'ip rule list',
  // Services, logs, containers.
  'systemctl',
  'systemctl status nginx',
  'systemctl status nginx --no-pager -n 50',
  'systemctl --failed',
  'systemctl is-active nginx',
  'systemctl is-enabled nginx',
  'systemctl list-units --type=service',
  'systemctl list-timers --all',
  'systemctl cat nginx',
  'systemctl show -p ActiveState nginx',
  'systemctl -n 5 status nginx',
  'systemctl --user status',
  'journalctl -u nginx -n 100 --no-pager',
  'journalctl -b -1 -p err',
  'journalctl --since today',
  'journalctl --si=today',
  'journalctl -f -u ssh',
  'journalctl --disk-usage',
  'journalctl -o json -n 5',
  'journalctl --list-boots',
  'journalctl -D /var/log/journal',
  'journalctl --unit=nginx --rev',
  'hostnamectl',
  'hostnamectl status',
  'timedatectl',
  'timedatectl show',
  'docker ps',
  'docker ps -a --format "{{.Names}}"',
  'docker logs --tail 50 web',
  'docker logs -f web',
  'docker inspect web',
  'docker images',
  'docker stats --no-stream',
  'docker version',
  'docker info',
  'docker container ls',
  'docker image ls',
  'docker system df',
  // Pipes between read-only commands.
  'journalctl -u nginx | tail -5',
  'ps aux | grep nginx',
  'ps aux | sort -k3 -r | head',
  'cat /etc/passwd | cut -d: -f1 | sort | uniq -c',
  'docker ps | grep web',
  // Quotes and backslashes that stay plain words.
  "l's' -la",
  'l""s',
  '\\ls',
  "grep 'a;b' /etc/hosts",
  'grep "a|b" /etc/hosts',
  "grep '$HOME' /etc/profile",
  "grep '>' /etc/hosts",
];

const notReadOnly: readonly (readonly [string, string])[] = [
  // The measured holes.
  ['ss -D /tmp/x', '`-D` writes a file'],
  ['ss --diag=/tmp/x', '`--diag=/tmp/x` writes a file'],
  ['ss --di /tmp/x', '`--di` is `--diag`, which writes a file'],
  ['ss -nD /tmp/x', '`-D` (in `-nD`) writes a file'],
  ['ss -D/tmp/x', '`-D` (in `-D/tmp/x`) writes a file'],
  ["ss '-D' /tmp/x", '`-D` writes a file'],
  ['ss "-D" /tmp/x', '`-D` writes a file'],
  ["ss -n''D /tmp/x", '`-D` (in `-nD`) writes a file'],
  ['ss \\-D /tmp/x', '`-D` writes a file'],
  ['ss -tlnp -D /tmp/x', '`-D` writes a file'],
  ['ss /tmp -D x', '`-D` writes a file'],
  ['ss -K dst 10.0.0.1', '`-K` closes sockets'],
  ['ss --kill', '`--kill` closes sockets'],
  ['ss --ki', '`--ki` is `--kill`'],
  ['journalctl --vacuum-size=1K', '`--vacuum-size=1K` deletes archived journal files'],
  ['journalctl --vacu""um-size=1K', '`--vacuum-size=1K` deletes archived journal files'],
  ['journalctl --vacuu""um-size=1K', 'not an option journalctl is known to have'],
  ["journalctl --vac'uum-time=1s'", '`--vacuum-time=1s` deletes archived journal files'],
  ['journalctl --vacuum-t=1s', '`--vacuum-t=1s` is `--vacuum-time`, which deletes archived journal files'],
  ['journalctl --vac=1K', '`--vac=1K` could be `--vacuum-size`'],
  ['journalctl --vacuum-files 1', 'deletes archived journal files'],
  ['journalctl --rot', '`--rot` is `--rotate`, which rotates the journal files'],
  ['journalctl --rotate', '`--rotate` rotates the journal files'],
  ['journalctl --ro', '`--ro` could be `--rotate`'],
  ['journalctl --r', 'could be `--rotate`'],
  ['journalctl --flush', 'moves the journal from /run to /var'],
  ['journalctl --fl', 'is `--flush`'],
  ['journalctl --sync', 'makes journald write everything to disk'],
  ['journalctl --sy', 'could be `--sync`'],
  ['journalctl --s', 'could be `--sync`'],
  ['journalctl --relinquish-var', 'moves the journal back to /run'],
  ['journalctl --smart-relinquish-var', 'moves the journal back to /run'],
  ['journalctl --setup-keys', 'creates sealing keys'],
  ['journalctl --update-catalog', 'rewrites the message catalog'],
  ['journalctl --cursor-file=/tmp/c -u nginx', 'writes the last cursor to a file'],
  ['journalctl --image=/tmp/disk.img', 'mounts a disk image'],
  ['journalctl --no-such-option', 'not an option journalctl is known to have'],
  ['journalctl -u -- --rotate', '`--rotate` rotates the journal files'],
  ['systemctl status --ho=x', '`--ho=x` is `--host`'],
  // Other writing options.
  ['sort -o /etc/passwd /tmp/x', '`-o` writes its output to a file'],
  ['sort -ro /tmp/out /tmp/x', '`-o` (in `-ro`) writes its output to a file'],
  ['sort --output=/tmp/out /tmp/x', 'writes its output to a file'],
  ['sort --out=/tmp/out /tmp/x', '`--out=/tmp/out` is `--output`'],
  ['sort --compress-program=sh /tmp/x', 'runs a program'],
  ['sort --bogus /tmp/x', 'not an option sort is known to have'],
  ['uniq /tmp/in /tmp/out', '`/tmp/out` is a second file name'],
  ['find / -delete', '`-delete` deletes files'],
  ['find . -de""lete', '`-delete` deletes files'],
  ['find . -exec rm {} +', '`{` is brace expansion'],
  ["find . -exec rm '{}' +", '`-exec` runs a program for each file'],
  ['find . -execdir touch x ;', '`;` runs another command'],
  ['find . -ok rm', '`-ok` runs a program'],
  ['find . -okdir rm', '`-okdir` runs a program'],
  ['find . -fprint /tmp/x', '`-fprint` writes to a file'],
  ['find . -fprint0 /tmp/x', 'writes to a file'],
  ['find . -fprintf /tmp/x %p', 'writes to a file'],
  ['find . -fls /tmp/x', 'writes to a file'],
  ['date -s 12:00', '`-s` sets the clock'],
  ['date -us 12:00', '`-s` (in `-us`) sets the clock'],
  ['date --set=12:00', 'sets the clock'],
  ['date --se=12:00', 'is `--set`'],
  ['date 010112002030', '`010112002030` sets the clock'],
  ['hostname evil', '`evil` sets the host name'],
  ['hostname -F /tmp/name', 'sets the host name from a file'],
  ['hostname -b x', 'sets the host name'],
  ['mount /dev/sdb1 /mnt', 'only a bare `mount`'],
  ['mount -a', 'only a bare `mount`'],
  ['dmesg -c', '`-c` clears the kernel ring buffer'],
  ['dmesg -C', '`-C` clears the kernel ring buffer'],
  ['dmesg -D', 'turns off kernel messages'],
  ['dmesg -E', 'turns on kernel messages'],
  ['dmesg -n 1', 'sets the console log level'],
  ['dmesg -Tc', '`-c` (in `-Tc`) clears'],
  ['dmesg --clear', 'clears the kernel ring buffer'],
  ['dmesg --read-clear', 'clears the kernel ring buffer'],
  ['dmesg --console-of', 'is `--console-off`'],
  ['dmesg --co', 'could be `--console-off`'],
  ['sysctl -w net.ipv4.ip_forward=1', '`-w` writes kernel settings'],
  ['sysctl net.ipv4.ip_forward=1', '`net.ipv4.ip_forward=1` sets a kernel setting'],
  ['sysctl -p', 'loads kernel settings from a file'],
  ['sysctl --system', 'loads kernel settings'],
  ['top', 'without `-b`'],
  ['top -n 1', 'without `-b`'],
  ['lsof -Db', '`-D` (in `-Db`) builds or updates the device cache file'],
  ['file -C -m /tmp/magic', 'compiles a magic file'],
  ['tree -o /tmp/out /etc', '`-o` writes its output to a file'],
  ['tree -R -H . /etc', 'writes an HTML file into every folder'],
  ["sed -n '1p' /etc/hosts", 'without `--sandbox`'],
  ["sed --sandbox -i 's/a/b/' /etc/hosts", '`-i` edits files in place'],
  ["sed --sandbox -ni 's/a/b/' /etc/hosts", '`-i` (in `-ni`) edits files in place'],
  ["sed --sandbox --in-place 's/a/b/' /etc/hosts", 'edits files in place'],
  ["sed --sandbox --in 's/a/b/' /etc/hosts", 'is `--in-place`'],
  // Subcommands.
  ['systemctl restart nginx', '`systemctl restart` is not one of systemctl\'s read-only commands'],
  ['systemctl stop nginx', 'not one of systemctl\'s read-only commands'],
  ['systemctl edit nginx', 'not one of systemctl\'s read-only commands'],
  ['systemctl daemon-reload', 'not one of systemctl\'s read-only commands'],
  ['systemctl -- stop nginx', 'not one of systemctl\'s read-only commands'],
  ['systemctl --no-pager stop nginx', 'not one of systemctl\'s read-only commands'],
  ['systemctl -H root@other status', 'runs the command on another machine over ssh'],
  ['systemctl --host=other status', 'runs the command on another machine over ssh'],
  ['docker run --rm -v /:/host alpine', '`docker run` is not one of docker\'s read-only commands'],
  ['docker exec web sh', 'not one of docker\'s read-only commands'],
  ['docker rm web', 'not one of docker\'s read-only commands'],
  ['docker -H ssh://other ps', 'global options'],
  ['docker container rm web', '`docker container rm` is not one of docker\'s read-only commands'],
  ['docker system prune', 'not one of docker\'s read-only commands'],
  ['docker compose ps', 'not one of docker\'s read-only commands'],
  ['ip addr add 10.0.0.1/24 dev eth0', '`ip addr add` may change the system'],
  ['ip a d 10.0.0.1/24 dev eth0', '`ip a d` may change the system'],
  ['ip addr flush dev eth0', 'may change the system'],
  ['ip route del default', 'may change the system'],
  ['ip link set eth0 down', 'may change the system'],
  ['ip netns exec x touch y', 'may change the system'],
  ['ip vrf exec x touch y', 'not one of the objects ip shows read-only'],
  ['ip -b /tmp/commands', '`-b` is not one of ip\'s display options'],
  ['ip -batch /tmp/commands', 'not one of ip\'s display options'],
  ['ip -force -b x', 'not one of ip\'s display options'],
  ['ip monitor', 'not one of the objects ip shows read-only'],
  ['ip m', 'not one of the objects ip shows read-only'],
  ['ip xfrm state list', 'not one of the objects ip shows read-only'],
  ['hostnamectl set-hostname evil', 'not one of hostnamectl\'s read-only commands'],
  ['hostnamectl hostname evil', 'not one of hostnamectl\'s read-only commands'],
  ['hostnamectl -H other status', 'runs the command on another machine over ssh'],
  ['timedatectl set-time 12:00', 'not one of timedatectl\'s read-only commands'],
  ['apt-cache gencaches', 'not one of apt-cache\'s read-only commands'],
  ['apt-cache -o Dir::Cache=/tmp policy', 'sets APT configuration'],
  ['nginx -s stop', 'only `nginx -t`'],
  ["nginx -t -g 'load_module /tmp/x.so;'", 'only `nginx -t`'],
  // Shell features beyond plain words.
  ['ls; touch x', '`;` runs another command'],
  ['ls && touch x', '`&` runs commands in the background or chains them'],
  ['ls || touch x', '`||` runs another command'],
  ['ls & touch x', '`&`'],
  ['ps aux |& grep x', '`|&` is not a plain pipe'],
  ['ls > /tmp/x', '`>` redirects output'],
  ['ls >> /tmp/x', '`>` redirects output'],
  ['ls 2>&1', '`>` redirects output'],
  ['cat < /etc/passwd', '`<` redirects input'],
  ['cat <<EOF', '`<` redirects input'],
  ['cat <(touch x)', '`<` redirects input'],
  ['ls $(touch x)', '`$` expands variables or runs commands'],
  ['ls "$(touch x)"', 'inside double quotes'],
  ['ls `touch x`', 'runs a command'],
  ['ls "`touch x`"', 'inside double quotes'],
  ['ls $HOME', '`$` expands variables'],
  ['ls "\\$HOME"', 'inside double quotes'],
  ['(ls)', '`(` starts a subshell'],
  ['ls\ntouch x', 'a newline starts another command'],
  ['ls\rtouch x', 'a newline'],
  ['ls \\\ntouch x', 'a newline'],
  ['ls\u0000x', 'control character'],
  ['ls {-D,x}', '`{` is brace expansion'],
  ['ls # comment', '`#` starts a comment'],
  ['ls \'unterminated', 'not closed'],
  ['ls "unterminated', 'not closed'],
  ['ls \\', 'lone backslash'],
  ['| ls', '`|` has no command before it'],
  ['ls |', '`|` has no command after it'],
  ['ls | | ls', '`|` has no command before it'],
  ['', 'the command is empty'],
  ['   ', 'the command is empty'],
  ['ls ~root', '`~name` expands to a home folder'],
  // Pipes: every stage must be read-only.
  ['ps aux | tee /tmp/x', '`tee` writes files'],
  ['journalctl -u x | sh', '`sh` is a shell'],
  ['cat /etc/hosts | xargs rm', '`xargs` runs the command it is given'],
  ['ps aux | sort -o /tmp/x', '`-o` writes its output to a file'],
  ['ls | awk "{print}"', '`awk` runs programs'],
  ['ls | ss -D /tmp/x', '`-D` writes a file'],
  // Wildcards that could become options.
  ['ss *', '`*` is a wildcard'],
  ['ls *.log', '`*.log` is a wildcard'],
  ['journalctl --*', 'is a wildcard'],
  ['cat ?', 'is a wildcard'],
  ['cat [ab]', 'is a wildcard'],
  ['grep ^root /etc/passwd', 'is a wildcard'],
  ['systemctl s*', 'is a wildcard'],
  ['grep -r x / --include=*.conf', '`--include=*.conf` is a wildcard, which could expand to a file named like an option: quote it'],
  ['l* -la', 'the program name `l*` is a wildcard'],
  // Programs: unknown, runners, paths, assignments.
  ['touch x', '`touch` writes files'],
  ['rm -rf /tmp/x', '`rm` deletes files'],
  ['cp a b', '`cp` writes files'],
  ['dd if=/dev/zero of=/tmp/x', '`dd` writes files'],
  ['tee /tmp/x', '`tee` writes files'],
  ['foo', 'unknown program `foo`'],
  ['env', '`env` runs the command it is given'],
  ['env touch x', '`env` runs the command it is given'],
  ['sudo ls', '`sudo` runs commands as another user'],
  ['nice ls', 'unknown program `nice`'],
  ['timeout 5 ls', 'unknown program `timeout`'],
  ['xargs', '`xargs` runs the command it is given'],
  ['watch ls', '`watch` runs the command it is given'],
  ['time ls', 'unknown program `time`'],
  ['logsave /dev/null touch x', 'unknown program `logsave`'],
  ['setarch x86_64 touch x', 'unknown program `setarch`'],
  ['prlimit --nofile=100 touch x', 'unknown program `prlimit`'],
  ['setpriv touch x', 'unknown program `setpriv`'],
  ['ssh-agent touch x', 'unknown program `ssh-agent`'],
  ['awk "BEGIN{system(\\"id\\")}"', '`awk` runs programs'],
  ['less /etc/hosts', '`less` can run shell commands'],
  ['more /etc/hosts', '`more` can run shell commands'],
  ['apt list --installed', 'unknown program `apt`'],
  ['dpkg -l', 'unknown program `dpkg`'],
  ['/bin/ls', '`/bin/ls` is a path'],
  ['./ls', '`./ls` is a path'],
  ['LD_PRELOAD=/tmp/x.so ls', '`LD_PRELOAD=/tmp/x.so` sets an environment variable'],
  ['PAGER=touch systemctl status', 'sets an environment variable'],
  ['constructor', 'unknown program `constructor`'],
  ['__proto__', 'unknown program `__proto__`'],
  ['docker constructor', 'not one of docker\'s read-only commands'],
  ['if ls; then touch x; fi', '`;` runs another command'],
  ['! ls', 'unknown program `!`'],
  ['exec ls', 'unknown program `exec`'],
];

describe('the read-only command class', () => {
  it('has at least 150 command lines in this table', () => {
    expect(readOnly.length + notReadOnly.length).toBeGreaterThanOrEqual(150);
  });

  it.each(readOnly.map((line) => [line]))('%j is read-only', (line) => {
    expect(judgeReadOnly(line)).toEqual({ readOnly: true });
  });

  it.each(notReadOnly)('%j is not read-only: %s', (line, reason) => {
    const verdict = judgeReadOnly(line);
    expect(verdict.readOnly, line).toBe(false);
    if (!verdict.readOnly) expect(verdict.reason).toContain(reason);
  });

  it('has no command runner in its table (tools/builtin/command-policy.ts)', () => {
    const runners = Object.keys(readOnlyPrograms).filter((name) => findCommandRunner(name) !== undefined);
    expect(runners).toEqual([]);
  });
});

describe('terminal(readonly) and ssh_exec(readonly) rules', () => {
  const policy = buildPolicy({ default: 'allow', allow: ['terminal(readonly)', 'ssh_exec(readonly)'], ask: ['terminal', 'ssh_exec'] }) as ApprovalPolicy;
  const terminal = (command: string) => judge(policy, { tool: 'terminal', subject: command, commandSubject: true });
  const ssh = (subject: string) => judge(policy, { tool: 'ssh_exec', subject, commandSubject: true });

  it('allows a read-only terminal command by the readonly rule', () => {
    expect(terminal('df -h')).toEqual({ verdict: 'allow', rule: 'terminal(readonly)' });
    expect(terminal('journalctl -u nginx | tail -5')).toEqual({ verdict: 'allow', rule: 'terminal(readonly)' });
  });

  it('asks about any other, saying why it is not read-only', () => {
    expect(terminal('ss -D /tmp/x')).toEqual({ verdict: 'ask', rule: 'terminal', notReadOnly: '`-D` writes a file' });
    expect(terminal('journalctl --rot')).toEqual({ verdict: 'ask', rule: 'terminal', notReadOnly: '`--rot` is `--rotate`, which rotates the journal files' });
  });

  it('judges the command after the host for ssh_exec', () => {
    expect(ssh('web1 systemctl status nginx')).toEqual({ verdict: 'allow', rule: 'ssh_exec(readonly)' });
    expect(ssh('web1   ps aux')).toEqual({ verdict: 'allow', rule: 'ssh_exec(readonly)' });
    expect(ssh('web1 systemctl restart nginx')).toMatchObject({ verdict: 'ask', rule: 'ssh_exec', notReadOnly: expect.stringContaining('systemctl restart') });
    // The host is never taken for the program: `ls` as a host name leaves `journalctl --rotate` to judge.
    expect(ssh('ls journalctl --rotate')).toMatchObject({ verdict: 'ask', notReadOnly: '`--rotate` rotates the journal files' });
    expect(ssh('web1')).toMatchObject({ verdict: 'ask', notReadOnly: 'the command is empty' });
  });

  it('does not lend terminal(readonly) to ssh_exec or the other way round', () => {
    const terminalOnly = buildPolicy({ default: 'ask', allow: ['terminal(readonly)'] }) as ApprovalPolicy;
    expect(judge(terminalOnly, { tool: 'ssh_exec', subject: 'web1 ps aux', commandSubject: true })).toEqual({ verdict: 'ask', rule: 'default' });
    expect(judge(terminalOnly, { tool: 'terminal', subject: 'ss -D x', commandSubject: true })).toEqual({ verdict: 'ask', rule: 'default', notReadOnly: '`-D` writes a file' });
  });

  it('never matches a subject the normaliser found hidden characters in (a no-break space, a zero-width joiner)', () => {
    expect(judge(policy, { tool: 'terminal', subject: 'ls\u00a0-la', commandSubject: true, hiddenCharacters: true })).toEqual({
      verdict: 'ask',
      rule: 'terminal',
      notReadOnly: 'the command holds whitespace or control characters other than spaces and tabs',
    });
  });

  it('lets a deny rule still win over the readonly class', () => {
    const strict = buildPolicy({ default: 'allow', allow: ['terminal(readonly)'], deny: ['terminal(cat /etc/shadow)'] }) as ApprovalPolicy;
    expect(judge(strict, { tool: 'terminal', subject: 'cat /etc/shadow', commandSubject: true })).toEqual({ verdict: 'deny', rule: 'terminal(cat /etc/shadow)' });
  });

  it('is a class for terminal and ssh_exec only', () => {
    expect(buildPolicy({ allow: ['code_exec(readonly)'] })).toMatch(/readonly class is for terminal and ssh_exec/);
    expect(buildPolicy({ allow: ['terminal( readonly )'] })).toMatchObject({ allow: [{ tool: 'terminal', readOnly: true }] });
  });
});
