import { element, replaceContent } from './dom.js';
import { icon } from './icons.js';

/** A panel's heading, with a refresh button when `onRefresh` is given. */
export function heading(text, onRefresh) {
  return element(
    'header',
    { className: 'panel-header' },
    element('h2', {}, text),
    onRefresh && element('button', { type: 'button', className: 'icon-button', 'aria-label': `Refresh ${text.toLowerCase()}`, title: 'Refresh', onclick: onRefresh }, icon('refresh')),
  );
}

/** A request's failure, as a panel shows it. */
export function failure(error) {
  return element('p', { className: 'panel-error', role: 'alert' }, error.message);
}

/** A panel's data from `request`; on failure the panel shows the error under its heading, and undefined is answered. */
export async function load(aside, title, request, retry) {
  try {
    return await request();
  } catch (error) {
    replaceContent(aside, heading(title, retry), failure(error));
    return undefined;
  }
}
