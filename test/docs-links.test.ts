import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// Every relative link of README.md and docs/*.md reaches a file that exists, and every #anchor a
// heading of the file it names, as GitHub renders them: the README is the tour and docs/ the
// reference, so a link that breaks when a section moves is a newcomer's dead end.

const markdownFiles = ['README.md', ...readdirSync('docs').filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

/** The text outside fenced code blocks and inline code, where links and headings live. */
function prose(markdown: string): string[] {
  const lines: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) lines.push(line.replace(/`[^`]*`/g, ''));
  }
  return lines;
}

/** GitHub's anchor of a heading: lower-cased, punctuation dropped, spaces to hyphens; repeats get -1, -2… */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

interface Link {
  file: string;
  target: string;
}

function relativeLinks(file: string): Link[] {
  const links: Link[] = [];
  for (const line of prose(readFileSync(file, 'utf8'))) {
    for (const match of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      links.push({ file, target });
    }
  }
  return links;
}

/** What is wrong with a link, or null when it resolves. */
function problemOf({ file, target }: Link): string | null {
  const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
  const resolved = pathPart === '' ? file : path.normalize(path.join(path.dirname(file), decodeURIComponent(pathPart)));
  if (!existsSync(resolved)) return `${file}: ${target} names ${resolved}, which does not exist`;
  if (anchor === undefined) return null;
  if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) return `${file}: ${target} has an anchor on a file without headings`;
  if (!anchorsOf(readFileSync(resolved, 'utf8')).has(anchor)) return `${file}: ${target} names no heading of ${resolved}`;
  return null;
}

describe('links of README.md and docs/', () => {
  it('finds the links it checks', () => {
    const links = markdownFiles.flatMap(relativeLinks);
    expect(links.length).toBeGreaterThan(20);
    expect(links.some((link) => link.target.includes('#'))).toBe(true);
  });

  it('resolves every relative link to a file and every #anchor to a heading', () => {
    const problems = markdownFiles.flatMap(relativeLinks).map(problemOf).filter((problem) => problem !== null);
    expect(problems).toEqual([]);
  });

  it('reads anchors as GitHub makes them', () => {
    expect(anchorsOf('# Hearth\n## Run it\n### No Ollama? Use the fake LLM\n## MCP servers (`mcp.json`)\n## Run it\n')).toEqual(
      new Set(['hearth', 'run-it', 'no-ollama-use-the-fake-llm', 'mcp-servers-mcpjson', 'run-it-1']),
    );
    expect(anchorsOf('```sh\n# a comment, not a heading\n```\n')).toEqual(new Set());
  });

  it('reports a missing file and a missing heading', () => {
    expect(problemOf({ file: 'README.md', target: 'docs/no-such-doc.md' })).toContain('does not exist');
    expect(problemOf({ file: 'README.md', target: 'docs/protocol.md#no-such-heading' })).toContain('names no heading');
    expect(problemOf({ file: 'README.md', target: 'docs/protocol.md#rest-api' })).toBeNull();
  });
});
