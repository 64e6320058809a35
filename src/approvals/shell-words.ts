// A command line split into words the way a POSIX shell (sh, dash, bash, zsh) reads plain
// words, for judging what it runs. Anything a shell would do beyond plain words and `|`
// pipes is answered as a problem, never guessed at: the caller treats it as not read-only.

export interface ShellWord {
  /** The word after quote removal: `--vacuu""um-size` is `--vacuum-size`, `\-D` is `-D`. */
  text: string;
  /**
   * Set when the word holds an unquoted wildcard (`*`, `?`, `[`, and zsh's `^`, `~`, `#`), which
   * the shell replaces with matching file names: the literal text before the first one.
   */
  globPrefix?: string;
}

export type ParsedCommandLine = { stages: ShellWord[][] } | { problem: string };

const unquotedProblems: Readonly<Record<string, string>> = {
  ';': '`;` runs another command',
  '&': '`&` runs commands in the background or chains them',
  '<': '`<` redirects input',
  '>': '`>` redirects output',
  '(': '`(` starts a subshell',
  ')': '`)` ends a subshell',
  '$': '`$` expands variables or runs commands',
  '`': '`` ` `` runs a command',
  '{': '`{` is brace expansion, which makes several words',
  '}': '`}` is brace expansion, which makes several words',
};

const wildcardCharacters = new Set(['*', '?', '[', '^']);

function isControlCharacter(character: string): boolean {
  const code = character.charCodeAt(0);
  return (code < 0x20 && character !== '\t') || code === 0x7f;
}

/** Splits `line` into pipeline stages of words, or says which shell feature it uses. */
export function parseCommandLine(line: string): ParsedCommandLine {
  const stages: ShellWord[][] = [];
  let words: ShellWord[] = [];
  let text = '';
  let inWord = false;
  let globPrefix: string | undefined;

  const endWord = () => {
    if (inWord) words.push(globPrefix === undefined ? { text } : { text, globPrefix });
    text = '';
    inWord = false;
    globPrefix = undefined;
  };

  for (let index = 0; index < line.length; index++) {
    const character = line[index]!;
    if (character === '\n' || character === '\r') return { problem: 'a newline starts another command' };
    if (isControlCharacter(character)) return { problem: 'the command holds a control character' };
    if (character === ' ' || character === '\t') {
      endWord();
      continue;
    }
    if (character === '|') {
      const next = line[index + 1];
      if (next === '|') return { problem: '`||` runs another command' };
      if (next === '&') return { problem: '`|&` is not a plain pipe' };
      endWord();
      if (words.length === 0) return { problem: '`|` has no command before it' };
      stages.push(words);
      words = [];
      continue;
    }
    const problem = unquotedProblems[character];
    if (problem !== undefined) return { problem };
    const startsWord = !inWord;
    inWord = true;
    if (character === "'") {
      const end = line.indexOf("'", index + 1);
      if (end === -1) return { problem: 'a single quote is not closed' };
      const quoted = line.slice(index + 1, end);
      if ([...quoted].some((inner) => inner === '\n' || inner === '\r' || isControlCharacter(inner))) {
        return { problem: 'a quoted word holds a newline or control character' };
      }
      text += quoted;
      index = end;
    } else if (character === '"') {
      let closed = false;
      for (index++; index < line.length; index++) {
        const inner = line[index]!;
        if (inner === '"') {
          closed = true;
          break;
        }
        if (inner === '$' || inner === '`') return { problem: `\`${inner}\` inside double quotes expands variables or runs commands` };
        if (inner === '\n' || inner === '\r' || isControlCharacter(inner)) return { problem: 'a quoted word holds a newline or control character' };
        if (inner === '\\' && index + 1 < line.length && '"\\'.includes(line[index + 1]!)) text += line[++index];
        else text += inner;
      }
      if (!closed) return { problem: 'a double quote is not closed' };
    } else if (character === '\\') {
      const next = line[index + 1];
      if (next === undefined) return { problem: 'the command ends with a lone backslash' };
      if (next === '\n' || next === '\r' || isControlCharacter(next)) return { problem: 'a backslash escapes a newline or control character' };
      text += next;
      index++;
    } else if (character === '#' && startsWord) {
      return { problem: '`#` starts a comment, which hides the rest of the line from this check' };
    } else if (character === '~' && startsWord) {
      const next = line[index + 1];
      if (next !== undefined && next !== '/' && next !== ' ' && next !== '\t' && next !== '|') {
        return { problem: '`~name` expands to a home folder: write the path instead' };
      }
      text += character;
    } else {
      // zsh's extended wildcards: `x~y` excludes, `x#` repeats.
      if (wildcardCharacters.has(character) || character === '~' || character === '#') globPrefix ??= text;
      text += character;
    }
  }
  endWord();
  if (words.length === 0) return { problem: stages.length === 0 ? 'the command is empty' : '`|` has no command after it' };
  stages.push(words);
  return { stages };
}
