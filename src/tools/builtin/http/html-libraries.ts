// linkedom and Readability weigh ~25 MB and ~170 modules: they load on the first web
// tool call, not at start.
export type HtmlLibraries = {
  parseHTML: (typeof import('linkedom'))['parseHTML'];
  Readability: (typeof import('@mozilla/readability'))['Readability'];
};

let loading: Promise<HtmlLibraries> | undefined;

export function loadHtmlLibraries(): Promise<HtmlLibraries> {
  loading ??= Promise.all([import('linkedom'), import('@mozilla/readability')]).then(([linkedom, readability]) => ({
    parseHTML: linkedom.parseHTML,
    Readability: readability.Readability,
  }));
  return loading;
}
