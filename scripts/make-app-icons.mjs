// Draws the web app manifest's icons (public/icons/): a light flame on the accent colour, as PNGs
// written with node:zlib only. Run: node scripts/make-app-icons.mjs
import { writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';

const background = [0xa8, 0x48, 0x0f];
const flame = [0xff, 0xf6, 0xee];
const samples = 4;

const crcTable = Array.from({ length: 256 }, (_, byte) => {
  let value = byte;
  for (let bit = 0; bit < 8; bit += 1) value = value & 1 ? 0xedb88320 ^ (value >>> 1) : value >>> 1;
  return value >>> 0;
});
const crc32 = (bytes) => {
  let value = 0xffffffff;
  for (const byte of bytes) value = crcTable[(value ^ byte) & 0xff] ^ (value >>> 8);
  return (value ^ 0xffffffff) >>> 0;
};

function chunk(type, data) {
  const typed = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const checksum = Buffer.alloc(4);
  checksum.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, checksum]);
}

/** Inside the flame: a round body with a tip drawn up from its tangents, leaning a little. (x, y in 0..1.) */
function inFlame(x, y) {
  const centreX = 0.5;
  const centreY = 0.62;
  const radius = 0.2;
  if ((x - centreX) ** 2 + (y - centreY) ** 2 <= radius ** 2) return true;
  const tipX = 0.54;
  const tipY = 0.16;
  if (y < tipY || y > centreY) return false;
  // The tip narrows linearly from the body's width at its centre to nothing at the top.
  const share = (y - tipY) / (centreY - tipY);
  const middle = tipX + (centreX - tipX) * share;
  const halfWidth = radius * Math.sqrt(share) * 0.98;
  return Math.abs(x - middle) <= halfWidth;
}

function png(size) {
  const rows = [];
  for (let row = 0; row < size; row += 1) {
    const line = Buffer.alloc(1 + size * 3);
    for (let column = 0; column < size; column += 1) {
      let covered = 0;
      for (let sampleY = 0; sampleY < samples; sampleY += 1) {
        for (let sampleX = 0; sampleX < samples; sampleX += 1) {
          if (inFlame((column + (sampleX + 0.5) / samples) / size, (row + (sampleY + 0.5) / samples) / size)) covered += 1;
        }
      }
      const share = covered / samples ** 2;
      for (let channel = 0; channel < 3; channel += 1) line[1 + column * 3 + channel] = Math.round(background[channel] * (1 - share) + flame[channel] * share);
    }
    rows.push(line);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // truecolour
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.concat(rows), { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}

const folder = new URL('../public/icons/', import.meta.url);
for (const [name, size] of [['icon-192.png', 192], ['icon-512.png', 512], ['apple-touch-icon.png', 180]]) writeFileSync(new URL(name, folder), png(size));
