import { describe, expect, it } from 'vitest';
import { useHearth } from './support/hearth-server.ts';

const start = useHearth();

const pngSignature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Width and height from a PNG's IHDR chunk. */
function pngSize(bytes: Buffer): { width: number; height: number } {
  expect([...bytes.subarray(0, 8)]).toEqual(pngSignature);
  expect(bytes.subarray(12, 16).toString('ascii')).toBe('IHDR');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

describe('the web app manifest', () => {
  it('is linked from the page, served as application/manifest+json, and names icons that exist at their sizes', async () => {
    // With a token: the browser fetches the manifest and icons without credentials, so they are public like the page.
    const hearth = await start({ env: { AUTH_TOKEN: 'manifest-test-token' } });
    const page = await (await fetch(`${hearth.baseUrl}/`)).text();
    expect(page).toContain('<link rel="manifest" href="/manifest.webmanifest">');
    expect(page).toMatch(/<meta name="theme-color" content="#[0-9a-f]{6}"/);
    const touchIcon = /<link rel="apple-touch-icon" href="([^"]+)">/.exec(page)?.[1];
    expect(touchIcon).toBeDefined();

    const response = await fetch(`${hearth.baseUrl}/manifest.webmanifest`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/manifest\+json/);
    expect(response.headers.get('content-security-policy')).toContain("manifest-src 'self'");
    const manifest = JSON.parse(await response.text());
    expect(manifest).toMatchObject({ name: 'Hearth', short_name: 'Hearth', display: 'standalone', start_url: '/' });
    expect(manifest.theme_color).toMatch(/^#[0-9a-f]{6}$/);
    expect(manifest.icons.map((icon: { sizes: string }) => icon.sizes).sort()).toEqual(['192x192', '512x512']);

    for (const icon of [...manifest.icons, { src: touchIcon, sizes: '180x180', type: 'image/png' }]) {
      const served = await fetch(new URL(icon.src, hearth.baseUrl));
      expect(served.status, icon.src).toBe(200);
      expect(served.headers.get('content-type'), icon.src).toBe(icon.type);
      const [width, height] = icon.sizes.split('x').map(Number);
      expect(pngSize(Buffer.from(await served.arrayBuffer())), icon.src).toEqual({ width, height });
    }
  });
});
