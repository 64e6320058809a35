/**
 * The download sizes of a few well-known Ollama models (as ollama.com lists them), so an offer to
 * pull one can say what it costs before Ollama knows; any other name is offered without a size.
 */
const gigabyte = 1_000_000_000;
const knownSizes = {
  'qwen3:8b': 5.2,
  'qwen3:4b': 2.5,
  'qwen3:14b': 9.3,
  'llama3.1:8b': 4.9,
  'llama3.2:3b': 2.0,
  'llama3.2:1b': 1.3,
  'gemma3:4b': 3.3,
  'gemma3:12b': 8.1,
  'qwen2.5:7b': 4.7,
  'gpt-oss:20b': 14,
};

/** The download size in bytes of a well-known model, or undefined. */
function knownModelSize(name) {
  const gigabytes = knownSizes[name];
  return gigabytes === undefined ? undefined : gigabytes * gigabyte;
}

/** "Pull qwen3:8b (5.2 GB)", or "Pull <name>" when its size is not known. */
export function pullLabel(name) {
  const size = knownModelSize(name);
  return size === undefined ? `Pull ${name}` : `Pull ${name} (${modelBytes(size)})`;
}

/** A model's size as Ollama's own pages write it: decimal gigabytes, megabytes below one. */
export function modelBytes(size) {
  if (size >= gigabyte) return `${(size / gigabyte).toFixed(1).replace(/\.0$/, '')} GB`;
  if (size >= 1_000_000) return `${Math.round(size / 1_000_000)} MB`;
  return `${Math.max(0, Math.round(size / 1000))} KB`;
}
