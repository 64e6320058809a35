import { describe, expect, it } from 'vitest';
import { ThinkTagSplitter, type SplitPiece } from '../src/llm/think-tag-splitter.ts';

function split(chunks: string[]): { thinking: string; text: string; pieces: SplitPiece[] } {
  const splitter = new ThinkTagSplitter();
  const pieces = [...chunks.flatMap((chunk) => splitter.push(chunk)), ...splitter.flush()];
  const joined = (kind: SplitPiece['kind']) => pieces.filter((piece) => piece.kind === kind).map((piece) => piece.text).join('');
  return { thinking: joined('thinking'), text: joined('text'), pieces };
}

describe('ThinkTagSplitter', () => {
  it('passes plain text through', () => {
    expect(split(['Hello ', 'world']).pieces).toEqual([
      { kind: 'text', text: 'Hello ' },
      { kind: 'text', text: 'world' },
    ]);
  });

  it('splits a think block in one chunk and drops the blank lines after it', () => {
    expect(split(['<think>Reasoning.</think>\n\nAnswer.']).pieces).toEqual([
      { kind: 'thinking', text: 'Reasoning.' },
      { kind: 'text', text: 'Answer.' },
    ]);
  });

  it('copes with tags cut across chunks', () => {
    expect(split(['<thi', 'nk>Rea', 'soning.</th', 'ink>', '\n', '\nAns', 'wer.'])).toMatchObject({
      thinking: 'Reasoning.',
      text: 'Answer.',
    });
  });

  it('copes with every possible cut, one character at a time', () => {
    const result = split([...'Intro <think>a < b</think> done <not-a-tag>']);
    expect(result).toMatchObject({ thinking: 'a < b', text: 'Intro done <not-a-tag>' });
  });

  it('does not hold back text that only looks like the start of a tag', () => {
    const splitter = new ThinkTagSplitter();
    expect(splitter.push('1 <')).toEqual([{ kind: 'text', text: '1 ' }]);
    expect(splitter.push(' 2')).toEqual([{ kind: 'text', text: '< 2' }]);
    expect(splitter.push('<thin')).toEqual([]);
    expect(splitter.flush()).toEqual([{ kind: 'text', text: '<thin' }]);
  });

  it('keeps an unfinished think block as thinking', () => {
    expect(split(['<think>still going', '</thi'])).toMatchObject({ thinking: 'still going</thi', text: '' });
  });
});
