const maximumTerms = 24;

/** Words that say little of what a passage is about; dropped from a query when others remain. */
const stopWords = new Set(
  'a an the is are was were be been am i me my mine you your we our of to in on at for from by with and or not what which who whom where when why how do does did it its this that these those there here about any some can could should would will shall may might must has have had'.split(
    ' ',
  ),
);

/**
 * A question's words as FTS5 phrases, each quoted (so nothing in it is read as FTS5 syntax: AND,
 * NEAR, `*`, `:` or quotes), common words left out when others remain; none when it has no words.
 */
export function ftsTerms(query: string): string[] {
  const words = (query.match(/[\p{L}\p{N}][\p{L}\p{N}'\u2019_-]*/gu) ?? []).slice(0, maximumTerms);
  const meaningful = words.filter((word) => !stopWords.has(word.toLowerCase()));
  const chosen = [...new Set((meaningful.length > 0 ? meaningful : words).map((word) => word.toLowerCase()))];
  return chosen.map((word) => `"${word}"`);
}
