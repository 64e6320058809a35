// Run as a child (as the unprivileged test user, by test/security/speech-jail.test.ts): builds the
// jail Hearth would build for DATA_DIR (argv[2]), decodes a WebM recording with ffmpeg through the
// AudioConverter, asks ffmpeg in the same jail to fetch a URL (argv[3]), and prints what happened as JSON.
import { parseConfig } from '../../src/config.ts';
import { Jail } from '../../src/jail/jail.ts';
import { AudioConverter } from '../../src/speech/audio-convert.ts';
import { runJailedFilter } from '../../src/jail/jailed-filter.ts';
import { encodedTone } from './tone.ts';

const [dataDir, url] = process.argv.slice(2);
const quiet = { warn: () => undefined, info: () => undefined };
const jail = await Jail.create({ config: parseConfig({ DATA_DIR: dataDir }), logger: quiet });
const converter = new AudioConverter({ jail });
const decoded = await converter.toSpeechPcm({ bytes: encodedTone('webm', 1), mimeType: 'audio/webm' }, { maxSeconds: 10 });
const fetched = await runJailedFilter({ executable: 'ffmpeg', args: ['-v', 'error', '-i', url!, '-f', 's16le', 'pipe:1'], input: Buffer.alloc(0), jail, timeoutMs: 10_000, maxOutputBytes: 1_000_000 });
converter.close();
jail.close();
process.stdout.write(
  JSON.stringify({
    uid: process.getuid?.(),
    jail: jail.status.state,
    decoded: decoded.success ? { seconds: decoded.seconds } : decoded,
    fetched: { ok: fetched.ok, stderr: fetched.ok ? '' : fetched.stderr.trim().slice(0, 300) },
  }),
);
