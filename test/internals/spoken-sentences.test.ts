// The page's cutting of a streamed answer into sentences to read aloud (public/app/spoken-sentences.js).
import { describe, expect, it } from 'vitest';
// @ts-expect-error the page's modules are plain JavaScript without declarations
import { SpokenSentences, speakable } from '../../public/app/spoken-sentences.js';

/** The sentences in the order they became complete, each with how much of the answer had arrived then. */
function spokenWhileStreaming(answer: string, chunkLength: number): Array<{ text: string; after: number }> {
  const sentences = new SpokenSentences();
  const spoken: Array<{ text: string; after: number }> = [];
  for (let at = 0; at < answer.length; at += chunkLength) {
    for (const text of sentences.push(answer.slice(at, at + chunkLength))) spoken.push({ text, after: Math.min(at + chunkLength, answer.length) });
  }
  for (const text of sentences.flush()) spoken.push({ text, after: Infinity });
  return spoken;
}

describe('sentences read aloud from a streamed answer', () => {
  it('gives each sentence as soon as the space after it arrives, whatever the chunks', () => {
    const answer = 'It is sunny today! Expect 21.5 degrees, e.g. warm. Take a hat';
    for (const chunkLength of [1, 3, 7, 100]) {
      const spoken = spokenWhileStreaming(answer, chunkLength);
      expect(spoken.map((sentence) => sentence.text)).toEqual(['It is sunny today!', 'Expect 21.5 degrees, e.g. warm.', 'Take a hat']);
      expect(spoken[0]!.after).toBeLessThanOrEqual(answer.indexOf('Expect') + chunkLength);
    }
  });

  it('speaks no code blocks and no Markdown marks, and ends a sentence at a line end', () => {
    const answer = '# Weather\n\n1. Sunny in the **morning**\n2. Rain at [noon](http://example.com/rain).\n\n```js\nconst warm = true. Not spoken.\n```\n| a | b |\n|---|---|\nDone. See `forecast` at https://example.com now.';
    expect(spokenWhileStreaming(answer, 4).map((sentence) => sentence.text)).toEqual(['Weather', 'Sunny in the morning', 'Rain at noon.', 'a b', 'Done.', 'See forecast at now.']);
  });

  it('cuts a long clause without punctuation at a comma rather than waiting for its end', () => {
    const clause = `${'word '.repeat(30)}, ${'more '.repeat(20)}`;
    const spoken = spokenWhileStreaming(clause, 5);
    expect(spoken.length).toBeGreaterThan(1);
    expect(spoken[0]!.after).toBeLessThan(Infinity);
    expect(spoken[0]!.text.endsWith(',')).toBe(true);
  });

  it('reads a link by its text and an image by its description', () => {
    expect(speakable('See the [map](https://example.com/map) and ![a rain cloud](cloud.png).')).toBe('See the map and a rain cloud.');
  });
});
