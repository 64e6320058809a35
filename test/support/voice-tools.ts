import { describe } from 'vitest';
import { installedProgram } from '../../src/speech/installed-program.ts';

/**
 * The Debian voice tools (espeak-ng, ffmpeg, sox). `.ci/run` installs them and sets
 * HEARTH_REQUIRE_VOICE_TOOLS=1, so there a missing one fails the tests instead of skipping them.
 */
export const voiceToolsRequired = process.env.HEARTH_REQUIRE_VOICE_TOOLS === '1';
export const missingVoiceTools = ['espeak-ng', 'ffmpeg', 'ffprobe', 'sox'].filter((program) => !installedProgram(program));

/** `describe`, skipped only where the voice tools are missing and not required. */
export const describeWithVoiceTools = missingVoiceTools.length > 0 && !voiceToolsRequired ? describe.skip : describe;
