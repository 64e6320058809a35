import hljs from '/vendor/highlight.js';
import { element } from './dom.js';

/** What a module written by `write_tool` declares it needs beyond the sandbox (`export const permissions = { childProcess: true }`). */
export function declaredPermissions(code) {
  const declaration = /export\s+const\s+permissions\s*=\s*\{([^}]*)\}/.exec(code);
  if (!declaration) return [];
  return [...declaration[1].matchAll(/([A-Za-z_$][\w$]*)\s*:\s*true\b/g)].map((match) => match[1]);
}

function formatArguments(args) {
  try {
    return JSON.stringify(args, null, 2);
  } catch {
    return String(args);
  }
}

/** The TypeScript a `write_tool` call installs, highlighted, under its name and the permissions it asks for. */
function writtenTool(args) {
  const code = typeof args.code === 'string' ? args.code : '';
  const permissions = declaredPermissions(code);
  // The code scrolls sideways on a phone (highlight.js's .hljs): it takes the focus, so a keyboard can scroll it (WCAG 2.1.1).
  const highlightedCode = element('code', { className: 'hljs language-typescript', tabindex: '0' });
  // hljs escapes the text it is given: its output is markup of spans only.
  highlightedCode.innerHTML = hljs.highlight(code, { language: 'typescript', ignoreIllegals: true }).value;
  return element(
    'div',
    { className: 'written-tool', dataset: { role: 'written-tool' } },
    element('p', { className: 'written-tool-name' }, 'Tool ', element('code', {}, String(args.name ?? '')), args.description ? ` — ${args.description}` : ''),
    element(
      'p',
      { className: 'written-tool-permissions', dataset: { role: 'written-tool-permissions' } },
      permissions.length > 0 ? ['Asks for permissions beyond the sandbox: ', ...permissions.flatMap((name, index) => [index > 0 ? ', ' : '', element('code', {}, name)])] : 'Asks for no permissions beyond the sandbox.',
    ),
    element('pre', { className: 'written-tool-code' }, highlightedCode),
  );
}

/** A tool call's arguments as its card shows them: JSON, or for `write_tool` the code it installs. */
export function toolArgumentsView(tool, args) {
  if (tool === 'write_tool' && args && typeof args.code === 'string') return writtenTool(args);
  return element('pre', { className: 'tool-args-text' }, formatArguments(args ?? {}));
}
