import { api } from './api.js';

/** The image types a model is sent inline; any other file goes to the session's folder. */
const modelImageTypes = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
const contentForAttachmentsOnly = '(see attachments)';

/** Files already in a session's folder, so that sending again after a failed upload does not upload them twice. */
const uploads = new WeakMap();

function readAsDataUrl(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(new Error(`Could not read ${file.name}.`));
    reader.readAsDataURL(file);
  });
}

async function upload(sessionId, file) {
  const known = uploads.get(file);
  if (known?.sessionId === sessionId) return known.file;
  const { name, path } = await api.upload(sessionId, file);
  uploads.set(file, { sessionId, file: { name, path } });
  return { name, path };
}

/**
 * The composer's message as a session's `send` takes it: images inline as data URLs, other files
 * uploaded to the session's folder first and named by path.
 */
export async function outgoingMessage(sessionId, { content, attachments }) {
  const images = [];
  const files = [];
  for (const file of attachments) {
    if (modelImageTypes.has(file.type)) images.push(await readAsDataUrl(file));
    else files.push(await upload(sessionId, file));
  }
  return {
    content: content || contentForAttachmentsOnly,
    ...(images.length > 0 && { images }),
    ...(files.length > 0 && { files }),
  };
}
