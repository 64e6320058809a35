import { element } from './dom.js';

/**
 * Whether the agent's processes run in a jail (docs/security.md: The jail), from `jail` in
 * GET /health: a warning under the header when bubblewrap cannot run here (naming what is then
 * refused and the command that fixes it), a quieter note when the person set JAIL=off, nothing
 * when it is on.
 */
export class JailStatusView {
  constructor(header) {
    this.banner = element('div', { id: 'jail-banner', className: 'jail-banner', hidden: true });
    header.after(this.banner);
  }

  show(status) {
    const state = status?.state ?? 'unknown';
    this.banner.dataset.state = state;
    this.banner.hidden = state !== 'unavailable' && state !== 'off';
    if (this.banner.hidden) {
      this.banner.removeAttribute('role');
      return this.banner.replaceChildren();
    }
    // Unavailable is something to fix; off is the person's own choice, said once, without alarm.
    this.banner.setAttribute('role', state === 'unavailable' ? 'alert' : 'status');
    if (state === 'off') return void (this.banner.textContent = "JAIL=off: the agent's processes run unjailed.");
    this.banner.replaceChildren(
      `The jail is unavailable: ${status.reason}. Off until it works: ${(status.off ?? []).join(', ')}.`,
      ...(status.fix ? [' Fix: ', element('code', {}, status.fix)] : []),
    );
  }
}
