/**
 * setpriv's arguments before a command Hearth spawns for a jail: the kernel SIGKILLs the process
 * when Hearth dies, from its first instruction on. bubblewrap's own `--die-with-parent` takes hold
 * only after it has cloned the jail, and pasta forks away from Hearth unless it runs in the
 * foreground. A death of Hearth before setpriv's `prctl` is caught by a shell after it: its `$PPID`
 * is no longer Hearth's id (`parentIsHearth`).
 */
export const diesWithHearth = ['setpriv', '--pdeathsig', 'KILL', '--'];

/** A shell test that holds while the process's parent is still this Hearth; `$1` (or `$0`) carries `process.pid`. */
export function parentIsHearth(variable: '$0' | '$1'): string {
  return `[ "$PPID" = "${variable}" ]`;
}
