// The worker thread of JsonParser (json-parser.ts): parses the large JSON bodies and
// frames it is sent, with the same prototype-poisoning rules as Fastify's own parser.
import { parentPort } from 'node:worker_threads';
import secureJson from 'secure-json-parse';

const decoder = new TextDecoder();

parentPort.on('message', ({ id, bytes }) => {
  try {
    const value = secureJson.parse(decoder.decode(bytes), { protoAction: 'error', constructorAction: 'error' });
    parentPort.postMessage({ id, ok: true, value });
  } catch (error) {
    parentPort.postMessage({ id, ok: false, message: error instanceof Error ? error.message : String(error) });
  }
});
