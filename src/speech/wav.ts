/** The shape of raw PCM: samples a second, bytes a sample, channels. */
export interface PcmFormat {
  rate: number;
  width: number;
  channels: number;
}

/** What speech-to-text servers take: 16 kHz mono 16-bit little-endian. */
export const speechPcm: PcmFormat = { rate: 16_000, width: 2, channels: 1 };

export const pcmMimeType = 'audio/pcm;rate=16000;channels=1';

const headerBytes = 44;

/** A WAV file of the PCM (the canonical 44-byte header, little-endian). */
export function wavFromPcm(pcm: Buffer, format: PcmFormat): Buffer {
  const header = Buffer.alloc(headerBytes);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(headerBytes - 8 + pcm.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(format.channels, 22);
  header.writeUInt32LE(format.rate, 24);
  header.writeUInt32LE(format.rate * format.width * format.channels, 28);
  header.writeUInt16LE(format.width * format.channels, 32);
  header.writeUInt16LE(format.width * 8, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}

/** How long the PCM plays, in seconds. */
export function pcmSeconds(bytes: number, format: PcmFormat): number {
  return bytes / (format.rate * format.width * format.channels);
}
