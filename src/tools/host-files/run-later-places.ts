import path from 'node:path';

/**
 * Places whose files run as code later, outside the call that wrote them: a shell reads its rc
 * file at every start, sshd its authorized_keys at every login, cron its tables every minute.
 * A write there is always put to the person, in every profile, whatever the rules allow or
 * FS_WRITABLE_PATHS grants; the reason says what the place does. Names are matched in any
 * folder, not only under this user's home, so root's and every other user's home count too.
 */
interface RunLaterPlace {
  matches(segments: readonly string[], real: string): boolean;
  does: string;
}

const atLogin = 'this file runs at login and whenever a shell starts';
const atBoot = 'what is there starts at boot or at login';
const onSchedule = 'what is there runs on a schedule (cron)';

/** A segment naming a shell's start-up file: `.bashrc`, `.bashrc.d`, `.zshrc.local`, `.profile`… */
const shellStartName = /^\.(bashrc|zshrc|kshrc|cshrc|tcshrc|mkshrc|zshenv)|^\.(profile|bash_profile|bash_login|bash_logout|zprofile|zlogin|zlogout|xprofile|xinitrc|xsession|xsessionrc|pam_environment)$/;

function followedBy(segments: readonly string[], first: string, second?: string): boolean {
  return segments.some((segment, index) => segment === first && (second === undefined || segments[index + 1] === second));
}

function under(real: string, ...folders: string[]): boolean {
  return folders.some((folder) => real === folder || real.startsWith(`${folder}/`));
}

const places: RunLaterPlace[] = [
  { matches: (segments) => segments.some((segment) => shellStartName.test(segment)), does: atLogin },
  { matches: (segments) => followedBy(segments, '.config', 'fish'), does: atLogin },
  { matches: (_, real) => under(real, '/etc/profile', '/etc/profile.d', '/etc/bash.bashrc', '/etc/zsh', '/etc/environment', '/etc/zshrc', '/etc/zprofile'), does: atLogin },
  { matches: (segments) => segments.includes('.ssh'), does: 'it decides who may log in to this machine over SSH (authorized_keys) and what ssh runs at every connection' },
  { matches: (segments) => followedBy(segments, '.config', 'autostart'), does: 'programs there start at every desktop login' },
  { matches: (segments) => followedBy(segments, '.config', 'systemd'), does: atBoot },
  { matches: (_, real) => under(real, '/etc/systemd', '/lib/systemd', '/usr/lib/systemd', '/etc/init.d', '/etc/rc.local'), does: atBoot },
  { matches: (_, real) => under(real, '/var/spool/cron', '/etc/crontab', '/etc/anacrontab') || /^\/etc\/cron[^/]*(\/|$)/.test(real), does: onSchedule },
  { matches: (segments) => followedBy(segments, '.local', 'bin'), does: 'programs there run instead of the system\'s when someone types their name' },
  { matches: (segments) => followedBy(segments, '.git', 'hooks'), does: 'this file runs on every git commit (a git hook), checkout or push' },
  { matches: (segments) => followedBy(segments, '.git', 'config'), does: 'it can name programs that run on every git commit (core.hooksPath)' },
  { matches: (segments) => segments.at(-1) === '.npmrc', does: 'npm reads it on every install: it can point at another registry or run scripts' },
  { matches: (segments) => segments.at(-1) === '.pypirc', does: 'it decides where Python packages are uploaded, and with which password' },
];

/** What the place does, when a real (resolved) path lies in a place that runs code later; undefined otherwise. */
export function runsCodeLater(real: string): string | undefined {
  const segments = real.split(path.sep).filter((segment) => segment !== '');
  return places.find((place) => place.matches(segments, real))?.does;
}
