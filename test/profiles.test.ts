import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadProfiles, parseProfile } from '../src/profiles/load-profiles.ts';
import { ProfileRegistry } from '../src/profiles/profile-registry.ts';

const shippedProfilesDirectory = fileURLToPath(new URL('../profiles/', import.meta.url));

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), 'hearth-profiles-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

function profileText(frontMatter: string, body = 'You help with things.'): string {
  return `---\n${frontMatter}\n---\n${body}\n`;
}

async function writeProfile(fileName: string, text: string): Promise<string> {
  const file = path.join(directory, fileName);
  await writeFile(file, text);
  return file;
}

describe('loadProfiles', () => {
  it('loads a minimal profile and applies the defaults', async () => {
    const file = await writeProfile('helper.md', profileText('id: helper\nname: Helper', '\n  Be helpful.\n\n'));

    const { profiles, errors } = await loadProfiles(directory);

    expect(errors).toEqual([]);
    expect(profiles).toEqual([
      {
        id: 'helper',
        name: 'Helper',
        description: '',
        examples: [],
        temperature: 0.7,
        max_iterations: 25,
        planning_enabled: false,
        tools: [],
        user_tools: true,
        mcp_tools: true,
        people: ['owner', 'adult'],
        approvers: ['owner', 'adult'],
        scratchpad_sections: [],
        approvals: { default: 'allow', deny: [], allow: [], ask: [] },
        jail: {},
        untrusted: { allow: [] },
        prompt: 'Be helpful.',
        file,
      },
    ]);
    expect(profiles[0]).not.toHaveProperty('model');
    expect(profiles[0]).not.toHaveProperty('backend');
  });

  it('keeps every field a complete front matter sets, and treats an empty value as unset', async () => {
    await writeProfile(
      'full.md',
      profileText(
        [
          'id: full',
          'name: Full',
          'description: Everything set.',
          'examples: ["Plan my week", "Summarise this file"]',
          'model: qwen3:14b',
          'backend: openai',
          'temperature: 0',
          'max_iterations: 3',
          'planning_enabled: true',
          'tools: [todo, scratchpad]',
          'scratchpad_sections: [notes]',
        ].join('\n'),
      ),
    );
    await writeProfile('blank_model.md', profileText('id: blank_model\nname: Blank\nmodel:\ntemperature:'));

    const { profiles, errors } = await loadProfiles(directory);

    expect(errors).toEqual([]);
    expect(profiles.map((profile) => profile.id)).toEqual(['blank_model', 'full']);
    expect(profiles[1]).toMatchObject({
      description: 'Everything set.',
      examples: ['Plan my week', 'Summarise this file'],
      model: 'qwen3:14b',
      backend: 'openai',
      temperature: 0,
      max_iterations: 3,
      planning_enabled: true,
      tools: ['todo', 'scratchpad'],
      scratchpad_sections: ['notes'],
    });
    expect(profiles[0]).not.toHaveProperty('model');
    expect(profiles[0]?.temperature).toBe(0.7);
  });

  it('reports each bad file with what is wrong, without hiding the good ones', async () => {
    const cases: [fileName: string, text: string, message: string][] = [
      ['no_front_matter.md', 'Just a prompt.\n', 'missing front matter: the file must start with a "---" line'],
      ['unclosed.md', '---\nid: unclosed\nname: Unclosed\nA prompt.\n', 'the front matter is not closed by a "---" line'],
      [
        'bad_yaml.md',
        profileText('id: bad_yaml\nname: Bad\n  extra: indented'),
        'invalid front matter: bad indentation of a mapping entry at line 4, column 8',
      ],
      ['not_mapping.md', profileText('- just\n- a list'), 'the front matter must be a YAML mapping of "key: value" lines'],
      ['too_hot.md', profileText('id: too_hot\nname: Hot\ntemperature: 3'), 'temperature must be <= 2'],
      [
        'wrong_types.md',
        profileText('id: wrong_types\nname: Types\ntemperature: warm\nplanning_enabled: sometimes'),
        'temperature must be a number, not "warm"; planning_enabled must be a boolean, not "sometimes"',
      ],
      ['fractional.md', profileText('id: fractional\nname: F\nmax_iterations: 2.5'), 'max_iterations must be an integer, not 2.5'],
      ['zero_rounds.md', profileText('id: zero_rounds\nname: Z\nmax_iterations: 0'), 'max_iterations must be >= 1'],
      ['nameless.md', profileText('id: nameless'), 'missing required field "name"'],
      ['typo.md', profileText('id: typo\nname: Typo\nplaning_enabled: true'), 'unknown field "planing_enabled"'],
      ['bad_backend.md', profileText('id: bad_backend\nname: B\nbackend: claude'), 'backend must be one of: ollama, openai'],
      ['bad_tool.md', profileText('id: bad_tool\nname: T\ntools: [todo, "web search"]'), 'tools[1] "web search" must be a tool name (letters, digits, _ or -, at most 64 characters), mcp:<server> or *'],
      ['twice.md', profileText('id: twice\nname: T\ntools: [todo, todo]'), 'tools lists an item twice'],
      ['example_text.md', profileText('id: example_text\nname: E\nexamples: Plan my week'), 'examples must be a list, not "Plan my week"'],
      ['empty_example.md', profileText('id: empty_example\nname: E\nexamples: ["Plan my week", ""]'), 'examples[1] must NOT have fewer than 1 characters'],
      [
        'Bad_Id.md',
        profileText('id: Bad_Id\nname: B'),
        'id "Bad_Id" must be lowercase letters, digits and underscores, starting with a letter (at most 64 characters)',
      ],
      ['empty_prompt.md', profileText('id: empty_prompt\nname: Empty', '   \n\n'), 'the prompt is empty: write the system prompt below the front matter'],
    ];
    await writeProfile('good.md', profileText('id: good\nname: Good'));
    for (const [fileName, text] of cases) await writeProfile(fileName, text);

    const { profiles, errors } = await loadProfiles(directory);

    expect(profiles.map((profile) => profile.id)).toEqual(['good']);
    expect(errors).toHaveLength(cases.length);
    for (const [fileName, , message] of cases) {
      const error = errors.find((entry) => entry.file === path.join(directory, fileName));
      expect(error, fileName).toBeDefined();
      expect(error?.message).toBe(message);
    }
  });

  it('lists several problems of one file together', async () => {
    await writeProfile('many.md', profileText('id: many\ntemperature: -1\nmax_iterations: 1000'));

    const { errors } = await loadProfiles(directory);

    expect(errors[0]?.message).toBe(
      'missing required field "name"; temperature must be >= 0; max_iterations must be <= 500',
    );
  });

  it('rejects an id that does not match the file name', async () => {
    await writeProfile('assistant.md', profileText('id: helper\nname: Helper'));

    const { profiles, errors } = await loadProfiles(directory);

    expect(profiles).toEqual([]);
    expect(errors).toEqual([
      { file: path.join(directory, 'assistant.md'), message: 'id "helper" does not match the file name "assistant"' },
    ]);
  });

  it('never evaluates JavaScript front matter', async () => {
    await writeProfile('script.md', '---js\n{ id: (globalThis.profileCodeRan = "script"), name: "S" }\n---\nPrompt.\n');

    const { errors } = await loadProfiles(directory);

    expect(errors[0]?.message).toBe('invalid front matter: front matter must be YAML');
    expect((globalThis as Record<string, unknown>).profileCodeRan).toBeUndefined();
  });

  it('reads only visible *.md files, sorted by name, and accepts CRLF line endings', async () => {
    await writeProfile('b_profile.md', profileText('id: b_profile\nname: B').replaceAll('\n', '\r\n'));
    await writeProfile('a_profile.md', '\uFEFF' + profileText('id: a_profile\nname: A'));
    await writeProfile('notes.txt', 'not a profile');
    await writeProfile('.draft.md', 'not a profile either');

    const { profiles, errors } = await loadProfiles(directory);

    expect(errors).toEqual([]);
    expect(profiles.map((profile) => [profile.id, profile.prompt])).toEqual([
      ['a_profile', 'You help with things.'],
      ['b_profile', 'You help with things.'],
    ]);
  });
});

describe('parseProfile', () => {
  it('parses text without touching the disk', () => {
    const result = parseProfile('/anywhere/writer.md', profileText('id: writer\nname: Writer\ntools: [todo]'));

    expect(result).toMatchObject({ ok: true, profile: { id: 'writer', tools: ['todo'], file: '/anywhere/writer.md' } });
  });

  it('returns the error naming the file', () => {
    expect(parseProfile('/anywhere/writer.md', profileText('id: writer\nname: W\ntemperature: 5'))).toEqual({
      ok: false,
      error: { file: '/anywhere/writer.md', message: 'temperature must be <= 2' },
    });
  });
});

describe('ProfileRegistry', () => {
  it('keeps the last good version of a profile whose edit breaks it, and reports the error', async () => {
    const file = await writeProfile('helper.md', profileText('id: helper\nname: Helper', 'First prompt.'));
    const registry = await ProfileRegistry.open(directory);
    expect(registry.get('helper')?.prompt).toBe('First prompt.');

    await writeFile(file, profileText('id: helper\nname: Helper\ntemperature: 9', 'Second prompt.'));
    await registry.reload();

    expect(registry.get('helper')?.prompt).toBe('First prompt.');
    expect(registry.errors()).toEqual([
      { file, message: 'temperature must be <= 2 (still using the last version that loaded)' },
    ]);

    await writeFile(file, profileText('id: helper\nname: Helper\ntemperature: 0.1', 'Third prompt.'));
    await registry.reload();

    expect(registry.get('helper')).toMatchObject({ prompt: 'Third prompt.', temperature: 0.1 });
    expect(registry.errors()).toEqual([]);
  });

  it('does not invent a profile for a new file that is broken from the start', async () => {
    const registry = await ProfileRegistry.open(directory);
    const file = await writeProfile('fresh.md', profileText('id: fresh'));

    await registry.reload();

    expect(registry.has('fresh')).toBe(false);
    expect(registry.errors()).toEqual([{ file, message: 'missing required field "name"' }]);
  });

  it('drops a profile whose file was deleted, and picks up new files', async () => {
    const doomed = await writeProfile('doomed.md', profileText('id: doomed\nname: Doomed'));
    await writeProfile('stays.md', profileText('id: stays\nname: Stays'));
    const registry = await ProfileRegistry.open(directory);
    expect(registry.list().map((profile) => profile.id)).toEqual(['doomed', 'stays']);

    await unlink(doomed);
    await writeProfile('arrives.md', profileText('id: arrives\nname: Arrives'));
    await registry.reload();

    expect(registry.has('doomed')).toBe(false);
    expect(registry.get('doomed')).toBeUndefined();
    expect(registry.list().map((profile) => profile.id)).toEqual(['arrives', 'stays']);
  });

  it('drops a kept profile once its broken file is deleted', async () => {
    const file = await writeProfile('helper.md', profileText('id: helper\nname: Helper'));
    const registry = await ProfileRegistry.open(directory);
    await writeFile(file, 'broken');
    await registry.reload();
    expect(registry.has('helper')).toBe(true);

    await unlink(file);
    await registry.reload();

    expect(registry.has('helper')).toBe(false);
    expect(registry.errors()).toEqual([]);
  });

  it('applies overlapping reloads in order, so the newest read wins', async () => {
    const file = await writeProfile('helper.md', profileText('id: helper\nname: Helper', 'One.'));
    const registry = await ProfileRegistry.open(directory);

    const first = registry.reload();
    await writeFile(file, profileText('id: helper\nname: Helper', 'Two.'));
    const second = registry.reload();
    await Promise.all([first, second]);

    expect(registry.get('helper')?.prompt).toBe('Two.');
  });

  it('rejects when the folder does not exist', async () => {
    await expect(ProfileRegistry.open(path.join(directory, 'missing'))).rejects.toThrow(/ENOENT/);
  });
});

describe('profile overrides (a same-named file in DATA_DIR/profiles)', () => {
  let overrides: string;
  beforeEach(async () => {
    overrides = await mkdtemp(path.join(os.tmpdir(), 'hearth-profile-overrides-'));
  });
  afterEach(async () => {
    await rm(overrides, { recursive: true, force: true });
  });

  it('replaces the shipped profile and its heartbeat checklist, adds the person\'s own, and leaves the rest shipped', async () => {
    await writeProfile('helper.md', profileText('id: helper\nname: Helper', 'Shipped prompt.'));
    await writeProfile('other.md', profileText('id: other\nname: Other', 'Shipped other.'));
    await writeProfile('helper.heartbeat.md', 'Shipped checklist.');
    await writeFile(path.join(overrides, 'helper.md'), profileText('id: helper\nname: Helper', 'My prompt.'));
    await writeFile(path.join(overrides, 'helper.heartbeat.md'), 'My checklist.');
    await writeFile(path.join(overrides, 'gardener.md'), profileText('id: gardener\nname: Gardener'));

    const { profiles, errors } = await loadProfiles(directory, overrides);

    expect(errors).toEqual([]);
    expect(profiles.map((profile) => [profile.id, profile.prompt, profile.heartbeat_checklist, profile.file])).toEqual([
      ['gardener', 'You help with things.', undefined, path.join(overrides, 'gardener.md')],
      ['helper', 'My prompt.', 'My checklist.', path.join(overrides, 'helper.md')],
      ['other', 'Shipped other.', undefined, path.join(directory, 'other.md')],
    ]);
  });

  it('reads no overrides from a folder that is not there yet', async () => {
    await writeProfile('helper.md', profileText('id: helper\nname: Helper'));
    expect((await loadProfiles(directory, path.join(overrides, 'missing'))).profiles.map((profile) => profile.id)).toEqual(['helper']);
  });

  it('keeps the shipped version while an override does not parse, and goes back to it once the override is removed', async () => {
    await writeProfile('helper.md', profileText('id: helper\nname: Helper', 'Shipped prompt.'));
    const registry = await ProfileRegistry.open(directory, overrides);
    const override = path.join(overrides, 'helper.md');
    await writeFile(override, profileText('id: helper\nname: Helper\ntemperature: 9', 'My prompt.'));
    await registry.reload();

    expect(registry.get('helper')?.prompt).toBe('Shipped prompt.');
    expect(registry.errors()).toEqual([{ file: override, message: 'temperature must be <= 2 (still using the last version that loaded)' }]);

    await writeFile(override, profileText('id: helper\nname: Helper', 'My prompt.'));
    await registry.reload();
    expect(registry.get('helper')?.prompt).toBe('My prompt.');

    await unlink(override);
    await registry.reload();
    expect(registry.get('helper')?.prompt).toBe('Shipped prompt.');
  });
});

describe('shipped profiles', () => {
  it('all load without errors, with their documented settings', async () => {
    const { profiles, errors } = await loadProfiles(shippedProfilesDirectory);

    expect(errors).toEqual([]);
    const settings = profiles.map((profile) => ({
      id: profile.id,
      temperature: profile.temperature,
      max_iterations: profile.max_iterations,
      planning_enabled: profile.planning_enabled,
      scratchpad_sections: profile.scratchpad_sections,
      model: profile.model,
      backend: profile.backend,
    }));
    expect(settings).toEqual([
      { id: 'secretary', temperature: 0.7, max_iterations: 25, planning_enabled: true, scratchpad_sections: ['findings', 'sources', 'drafts'], model: undefined, backend: undefined },
      { id: 'server_admin', temperature: 0.2, max_iterations: 40, planning_enabled: true, scratchpad_sections: ['status', 'logs', 'errors', 'hypothesis', 'actions'], model: undefined, backend: undefined },
      { id: 'smart_home', temperature: 0.3, max_iterations: 20, planning_enabled: true, scratchpad_sections: ['state', 'config', 'errors'], model: undefined, backend: undefined },
    ]);
  });

  it('stay under 2,500 characters and name only tools their own profile lists', async () => {
    const { profiles } = await loadProfiles(shippedProfilesDirectory);
    const allTools = new Set(profiles.flatMap((profile) => profile.tools));

    for (const profile of profiles) {
      expect(profile.description, profile.id).not.toBe('');
      expect(profile.examples, `${profile.id} offers two example prompts`).toHaveLength(2);
      expect(profile.prompt.length, profile.id).toBeLessThan(2_500);
      for (const tool of ['scratchpad', 'todo', 'switch_profile', 'spawn_agent', 'write_tool', 'memory_search']) {
        expect(profile.tools, profile.id).toContain(tool);
        expect(profile.prompt, `${profile.id} explains ${tool}`).toContain(`\`${tool}`);
      }
      const mentionedTools = [...profile.prompt.matchAll(/`([a-z_]+)/g)]
        .map((match) => match[1] ?? '')
        .filter((word) => allTools.has(word));
      for (const tool of mentionedTools) expect(profile.tools, `${profile.id} mentions ${tool}`).toContain(tool);
      for (const section of profile.scratchpad_sections) {
        expect(profile.prompt, `${profile.id} explains section ${section}`).toContain(`\`${section}\``);
      }
    }
  });
});
