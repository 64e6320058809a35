import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { handWrittenMarker, table, writeResults, type ReportRow } from '../../bench/report.ts';

// bench/RESULTS.md holds a run's table and, below a marker, results written by hand over many sessions.

let folder: string;
let file: string;
beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'hearth-bench-report-'));
  file = path.join(folder, 'RESULTS.md');
});
afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

const row = (scenario: string, measured: string): ReportRow => ({ scenario, measured, target: '< 1', passed: true });
const reported = (scenario: string, measured: string): ReportRow => ({ scenario, measured, target: 'report only', passed: undefined });

describe("the bench's RESULTS.md", () => {
  it('keeps what was written by hand below the marker, and a partial run keeps the rows of the scenarios it did not run', async () => {
    const handWritten = `${handWrittenMarker}\n\n## Issue 99, by hand\n\nA table measured by hand.\n`;
    await writeFile(file, `# Hearth benchmark results\n\n${table([row('1. Turn', 'old 1'), row('5a. Start', 'old 5a'), row('29. Search', 'old 29'), reported('30. RSS', 'old 30')])}\n\n## Method\n\nm\n\n## Details\n\n- d\n\n${handWritten}`);

    // As `--only=29` runs it: 5 always, 29 writing 30 too.
    await writeResults(file, '- Date: now', [row('5a. Start', 'new 5a'), row('29. Search', 'new 29'), reported('30. RSS', 'new 30')], 'method', ['detail'], (scenario) => [5, 29, 30].includes(Number.parseInt(scenario, 10)));

    const written = await readFile(file, 'utf8');
    expect(written).toContain('| 1. Turn | old 1 | < 1 | pass |');
    expect(written).toContain('| 5a. Start | new 5a | < 1 | pass |');
    expect(written).toContain('| 30. RSS | new 30 | report only | — |');
    expect(written).not.toMatch(/old 5a|old 29|old 30/);
    expect(written.indexOf('1. Turn')).toBeLessThan(written.indexOf('5a. Start'));
    expect(written).toContain('- Rows kept from the previous run (not run this time): 1');
    // The kept rows' details come with them.
    expect(written).toMatch(/- detail\n\n### Details of the rows kept from earlier runs\n\n- d\n/);
    expect(written.endsWith(`${handWritten.trimEnd()}\n`)).toBe(true);
  });

  it('a whole run replaces every row and still keeps the hand-written part', async () => {
    await writeFile(file, `# Hearth benchmark results\n\n${table([row('1. Turn', 'old 1')])}\n\n${handWrittenMarker}\n\n## By hand\n`);
    await writeResults(file, '- Date: now', [row('2. Other', 'new 2')], 'method', []);
    const written = await readFile(file, 'utf8');
    expect(written).not.toContain('old 1');
    expect(written).not.toContain('Rows kept');
    expect(written).not.toContain('kept from earlier runs');
    expect(written).toContain(`${handWrittenMarker}\n\n## By hand`);
  });
});
