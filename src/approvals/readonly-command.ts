// Whether a command line only reads (the `terminal(readonly)` and `ssh_exec(readonly)` rules,
// docs/agent.md, "Approvals"), and when not, why. The line is read as a POSIX shell reads it; anything
// beyond plain words and `|` pipes between read-only commands is not read-only, and so is any
// program or option the table in readonly-programs.ts is not sure of.

import { notReadOnlyPrograms, readOnlyPrograms, type ProgramRule } from './readonly-programs.ts';
import { parseCommandLine, type ShellWord } from './shell-words.ts';

export type ReadOnlyVerdict = { readOnly: true } | { readOnly: false; reason: string };

export function judgeReadOnly(commandLine: string): ReadOnlyVerdict {
  const parsed = parseCommandLine(commandLine);
  if ('problem' in parsed) return { readOnly: false, reason: parsed.problem };
  for (const stage of parsed.stages) {
    const reason = stageProblem(stage);
    if (reason !== undefined) return { readOnly: false, reason };
  }
  return { readOnly: true };
}

function stageProblem([program, ...args]: ShellWord[]): string | undefined {
  const name = program!.text;
  if (program!.globPrefix !== undefined) return `the program name \`${name}\` is a wildcard`;
  if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(name)) return `\`${name}\` sets an environment variable for the command`;
  if (name.includes('/')) return `\`${name}\` is a path: name the program, as a file there can be anything`;
  if (Object.hasOwn(notReadOnlyPrograms, name)) return `\`${name}\` ${notReadOnlyPrograms[name]}`;
  if (!Object.hasOwn(readOnlyPrograms, name)) return `unknown program \`${name}\``;
  const rule = readOnlyPrograms[name]!;
  for (const word of args) {
    // A wildcard's names start with its literal text: from a folder (`/var/log/*.log`) they cannot look like options or subcommands.
    if (word.globPrefix !== undefined && !word.globPrefix.includes('/')) {
      const instead = word.text.startsWith('-') ? 'quote it' : `start it with a folder (\`./${word.text}\`) or quote it`;
      return `\`${word.text}\` is a wildcard, which could expand to a file named like an option: ${instead}`;
    }
  }
  const texts = args.map((word) => word.text);
  return optionProblem(name, rule, texts) ?? rule.check?.(texts, operandsOf(rule, texts));
}

function optionProblem(program: string, rule: ProgramRule, args: readonly string[]): string | undefined {
  for (const word of args) {
    if (rule.words && Object.hasOwn(rule.words, word)) return `\`${word}\` ${rule.words[word]}`;
    if (rule.style === 'words') continue;
    // Every word is checked, even one that may be another option's value or follow `--`: a wrong guess then only asks.
    if (word.startsWith('--')) {
      const problem = longOptionProblem(program, rule, word);
      if (problem !== undefined) return problem;
    } else if (word.startsWith('-')) {
      const problem = shortOptionProblem(rule, word);
      if (problem !== undefined) return problem;
    }
  }
  return undefined;
}

/** GNU getopt takes any unambiguous abbreviation (`--rot` is `--rotate`); one that could be a dangerous option counts as it. */
function longOptionProblem(program: string, rule: ProgramRule, word: string): string | undefined {
  if (!rule.long) return undefined;
  const given = word.slice(2).split('=', 1)[0]!;
  if (given === '') return undefined;
  const candidates = Object.keys(rule.long).filter((name) => name.startsWith(given));
  const first = candidates.find((name) => name === given) ?? candidates[0];
  if (first === undefined) {
    const known = !rule.safeLong || rule.safeLong.some((name) => name.startsWith(given));
    return known ? undefined : `\`${word}\` is not an option ${program} is known to have`;
  }
  const what = rule.long[first];
  if (given === first) return `\`${word}\` ${what}`;
  const alsoSafe = rule.safeLong?.some((name) => name.startsWith(given)) === true;
  if (candidates.length === 1 && !alsoSafe) return `\`${word}\` is \`--${first}\`, which ${what}`;
  return `\`${word}\` could be \`--${first}\`, which ${what}`;
}

/** A bundle (`-nD`) is read letter by letter until a letter that takes the rest as its value (`-n5`). */
function shortOptionProblem(rule: ProgramRule, word: string): string | undefined {
  for (const letter of word.slice(1)) {
    if (rule.short && Object.hasOwn(rule.short, letter)) {
      const option = `-${letter}`;
      return `\`${option}\`${word === option ? '' : ` (in \`${word}\`)`} ${rule.short[letter]}`;
    }
    if (rule.shortValues?.includes(letter) || rule.shortOptionalValues?.includes(letter)) return undefined;
  }
  return undefined;
}

/** The words that are not options or their values, as getopt would leave them (after `--`, all). */
export function operandsOf(rule: ProgramRule, args: readonly string[]): string[] {
  if (rule.style === 'words') return [...args];
  const operands: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const word = args[index]!;
    if (word === '--') {
      operands.push(...args.slice(index + 1));
      break;
    }
    if (word.startsWith('--')) {
      if (!word.includes('=') && rule.longValues?.includes(word.slice(2))) index++;
      continue;
    }
    if (word.startsWith('-') && word !== '-') {
      for (let position = 1; position < word.length; position++) {
        const letter = word[position]!;
        if (rule.shortOptionalValues?.includes(letter)) break;
        if (rule.shortValues?.includes(letter)) {
          if (position === word.length - 1) index++;
          break;
        }
      }
      continue;
    }
    operands.push(word);
  }
  return operands;
}
