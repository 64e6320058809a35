/**
 * Under the open session's title, when it is shared with the household: that it is, and whose it
 * is when it is someone else's. Sharing and unsharing are in the session list, beside Pin.
 */
export function showSharing(mark, session, me) {
  mark.hidden = !session?.shared;
  if (!session?.shared) return;
  const someoneElses = session.owner && session.owner.id !== me?.id;
  mark.textContent = someoneElses ? `${session.owner.name}’s, shared with the household` : 'Shared with the household';
}
