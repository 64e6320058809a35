import { describe, expect, it } from 'vitest';
import { spokenCharacterLimit, spokenText } from '../../src/channels/telegram/spoken-text.ts';

describe('spokenText', () => {
  it('says the words of Markdown without its marks: headings and list items as sentences, links by their text, code and tables named', () => {
    const markdown = [
      '# Today',
      '',
      'You have **two** meetings and _one_ [reminder](https://example.com) — see `calendar`.',
      '',
      '1. The dentist at 10',
      '2. Lunch with Bob?',
      '',
      '> Bring the card',
      '',
      '```sh',
      'rm -rf /',
      '```',
      '',
      '| a | b |',
      '|---|---|',
      '| 1 | 2 |',
      '',
      '---',
      '<b>raw</b> stays out',
    ].join('\n');
    expect(spokenText(markdown)).toBe(
      'Today. You have two meetings and one reminder — see calendar. The dentist at 10. Lunch with Bob? Bring the card. The code is in the text. The table is in the text. raw stays out.',
    );
  });

  it('cuts a long answer at the last sentence end before the limit and says the rest is in the text', () => {
    const sentences = Array.from({ length: 60 }, (_, index) => `Sentence number ${index} is here.`);
    const spoken = spokenText(sentences.join(' '));
    expect(spoken.length).toBeLessThanOrEqual(spokenCharacterLimit);
    expect(spoken).toMatch(/^Sentence number 0 is here\. .* is here\. The rest is in the text\.$/);
    expect(spokenText(sentences.slice(0, 3).join(' '))).toBe(sentences.slice(0, 3).join(' '));
  });

  it('cuts at a word end when one sentence runs past the limit; an answer of code alone is named, an empty one is nothing', () => {
    const spoken = spokenText(`${'word '.repeat(400)}end`, 100);
    expect(spoken).toMatch(/^(word ){10,}The rest is in the text\.$/);
    expect(spoken.length).toBeLessThanOrEqual(100);
    expect(spokenText('```\nx\n```')).toBe('The code is in the text.');
    expect(spokenText('')).toBe('');
  });
});
