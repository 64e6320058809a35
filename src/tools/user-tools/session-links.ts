import path from 'node:path';
import { RecentlyUsed } from './recently-used.ts';
import { LinkScan } from './sandbox.ts';

/** Sessions whose folder's link scan is kept between calls. */
const maxLinkScans = 64;

/**
 * Node follows links: a user tool does not run while its session's folder holds one that leads
 * outside it (another tool or the person put it there), so no tool can read or write through it.
 */
export class SessionLinks {
  /** Per session: what its folder's last link check saw. */
  private readonly scans = new RecentlyUsed<string, LinkScan>(maxLinkScans);

  constructor(private readonly sessionFilesDir: string) {}

  /** Why no user tool may run in this session's folder now, if so; a session without a folder yet has no links. */
  async refusal(sessionId: string): Promise<string | undefined> {
    let scan = this.scans.use(sessionId);
    if (!scan) {
      scan = new LinkScan(path.join(this.sessionFilesDir, sessionId));
      this.scans.set(sessionId, scan);
      this.scans.evict();
    }
    let links;
    try {
      links = await scan.check();
    } catch (error) {
      this.scans.delete(sessionId);
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      return `Refused: the session's folder cannot be checked for links (${(error as Error).message}); no user tool runs until it can.`;
    }
    if (links.length === 0) return undefined;
    const shown = links.slice(0, 5).map(({ link, target }) => `${link} → ${target}`).join(', ');
    const more = links.length > 5 ? ` and ${links.length - 5} more` : '';
    return (
      `Refused: the session's folder holds links that lead outside it (${shown}${more}). User tools would follow them out of ` +
      'their sandbox, so none runs in this session until they are removed; copy the files in instead.'
    );
  }

  /** Forgets a deleted session's scan. */
  forget(sessionId: string): void {
    this.scans.delete(sessionId);
  }
}
