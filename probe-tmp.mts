import { htmlToReadableText, nodeToText } from './src/tools/builtin/http/readable-text.ts';
import { parseHTML } from 'linkedom';
for (const h of ['<p>Gone fishing</p>', '<title>x</title><p>Gone</p>', '<body><p>a</p></body>', '<head><title>t</title></head><body><p>a</p></body>', '<!-- c -->\n<html><body><p>b</p></body></html>']) {
  const { document } = parseHTML(`<html>${h}</html>`);
  console.log(JSON.stringify(h), JSON.stringify(htmlToReadableText(`<html>${h}</html>`)), JSON.stringify(nodeToText(document.body)), document.body.outerHTML);
}
