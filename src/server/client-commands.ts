import { Type, type Static } from '@sinclair/typebox';

const Attachment = Type.Object({ name: Type.String({ minLength: 1, maxLength: 1_000 }), path: Type.String({ minLength: 1, maxLength: 4_096 }) });

/** What one message may carry: 1,000,000 characters of text and up to 8 images of 10 MB each. */
export const messageLimits = {
  characters: 1_000_000,
  images: 8,
  imageBytes: 10 * 1024 * 1024,
} as const;
/** An image of `imageBytes` in base64, with room for a `data:` prefix. */
const imageCharacters = Math.ceil(messageLimits.imageBytes / 3) * 4 + 100;
/**
 * The largest body or frame a valid message can be (text escaped at most six-fold, the
 * images, the file list); anything larger is refused before it is read whole or parsed.
 */
export const maxMessageBytes = messageLimits.characters * 6 + messageLimits.images * imageCharacters + 1024 * 1024;

/** The first image of a message larger than `messageLimits.imageBytes`, with the error that names it (`path` as `images.0` or `/images/0`). */
export function oversizedImage(images: readonly string[] | undefined, path: (index: number) => string): string | undefined {
  const index = images?.findIndex((image) => image.length > imageCharacters) ?? -1;
  return index < 0 ? undefined : `${path(index)} must NOT have more than ${imageCharacters} characters`;
}

export const MessageBody = Type.Object(
  {
    content: Type.String({ minLength: 1, maxLength: messageLimits.characters }),
    // Each image's length is checked by oversizedImage(): a schema maxLength counts code points, walking every character of 13 MB.
    images: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: messageLimits.images })),
    files: Type.Optional(Type.Array(Attachment, { maxItems: 64 })),
  },
  { additionalProperties: false },
);

/** An edited message: text only; the images of the message it replaces are kept. */
export const EditBody = Type.Object({ content: Type.String({ minLength: 1, maxLength: messageLimits.characters }) }, { additionalProperties: false });

export const ApprovalBody = Type.Object(
  {
    decision: Type.Union([Type.Literal('allow'), Type.Literal('deny')]),
    remember: Type.Optional(Type.Union([Type.Literal('once'), Type.Literal('session')])),
  },
  { additionalProperties: false },
);

export const MessageCommand = Type.Composite([Type.Object({ type: Type.Literal('message') }), MessageBody], { additionalProperties: false });
export const StopCommand = Type.Object({ type: Type.Literal('stop') }, { additionalProperties: false });
export const RegenerateCommand = Type.Object({ type: Type.Literal('regenerate') }, { additionalProperties: false });
export const EditCommand = Type.Composite([Type.Object({ type: Type.Literal('edit'), message_id: Type.Integer({ minimum: 1 }) }), EditBody], {
  additionalProperties: false,
});
export const ApproveCommand = Type.Composite(
  [Type.Object({ type: Type.Literal('approve'), call_id: Type.String({ minLength: 1 }) }), ApprovalBody],
  { additionalProperties: false },
);

/** What a client may send over a session's WebSocket (docs/protocol.md, "The session WebSocket"). */
export type ClientCommand =
  | Static<typeof MessageCommand>
  | Static<typeof StopCommand>
  | Static<typeof ApproveCommand>
  | Static<typeof RegenerateCommand>
  | Static<typeof EditCommand>;
