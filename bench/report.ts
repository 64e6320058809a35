import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { projectRoot } from './project-root.ts';

export interface ReportRow {
  scenario: string;
  measured: string;
  target: string;
  /** undefined: reported only, no target. */
  passed: boolean | undefined;
}

export interface ScenarioResult {
  rows: ReportRow[];
  /** Extra lines for the details section of RESULTS.md. */
  details: string[];
}

function verdict(passed: boolean | undefined): string {
  if (passed === undefined) return '—';
  return passed ? 'pass' : '**FAIL**';
}

export function table(rows: readonly ReportRow[]): string {
  const lines = ['| scenario | measured | target | pass/fail |', '|---|---|---|---|'];
  for (const row of rows) lines.push(`| ${row.scenario} | ${row.measured} | ${row.target} | ${verdict(row.passed)} |`);
  return lines.join('\n');
}

/** Other work on the machine skews every number here, so the report says how busy it was. */
export function loadAverage(): string {
  return os.loadavg().map((load) => load.toFixed(2)).join(' / ');
}

function codeVersion(): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: projectRoot, encoding: 'utf8' }).trim();
    const changed = git('status', '--porcelain', '--', 'src', 'profiles') !== '';
    return `commit ${git('rev-parse', '--short', 'HEAD')}${changed ? ' plus uncommitted changes in src/ or profiles/' : ''}`;
  } catch {
    return 'unknown (no git)';
  }
}

export function machineDescription(): string {
  const cpus = os.cpus();
  return [
    `- Date: ${new Date().toISOString()}`,
    `- Cores (os.cpus().length): ${cpus.length}`,
    `- CPU: ${cpus[0]?.model.trim() ?? 'unknown'}`,
    `- Node: ${process.version} on ${os.platform()} ${os.release()}`,
    `- Code: ${codeVersion()}`,
    `- Load average (1 / 5 / 15 min) at start: ${loadAverage()}`,
  ].join('\n');
}

/** Where the hand-written results begin: everything from this line on is kept by each run. */
export const handWrittenMarker = '<!-- Written by hand below this line: `npm run bench` keeps it. -->';

/**
 * Writes RESULTS.md: the machine, the table, the method and the details of this run, then the
 * hand-written sections the file already had. A run of some scenarios (`--only`) keeps the rows of
 * the others from the file, and says so.
 */
export async function writeResults(
  file: string,
  machine: string,
  rows: readonly ReportRow[],
  method: string,
  details: readonly string[],
  ran: (scenario: string) => boolean = () => true,
): Promise<void> {
  const previous = await readFile(file, 'utf8').catch(() => '');
  const markerAt = previous.indexOf(handWrittenMarker);
  const handWritten = markerAt === -1 ? handWrittenMarker : previous.slice(markerAt).trimEnd();
  const kept = previousRows(previous).filter((row) => !ran(row.scenario));
  const order = (row: { scenario: string }) => Number.parseInt(row.scenario, 10) || Number.POSITIVE_INFINITY;
  const allRows = [...rows, ...kept].sort((left, right) => order(left) - order(right));
  const text = [
    '# Hearth benchmark results',
    '',
    'Written by `npm run bench` (bench/run.ts); budgets from docs/architecture.md (Budgets).',
    '',
    machine,
    ...(kept.length > 0 ? [`- Rows kept from the previous run (not run this time): ${[...new Set(kept.map((row) => Number.parseInt(row.scenario, 10)))].join(', ')}`] : []),
    '',
    table(allRows),
    '',
    '## Method',
    '',
    method,
    '',
    '## Details',
    '',
    ...details.map((line) => `- ${line}`),
    '',
    ...(kept.length > 0 ? [earlierDetailsHeading, '', ...previousDetails(previous), ''] : []),
    handWritten,
    '',
  ].join('\n');
  await writeFile(file, text);
}

const earlierDetailsHeading = '### Details of the rows kept from earlier runs';

/** The detail lines of an earlier RESULTS.md (its own and those it kept), for the rows it hands on. */
function previousDetails(text: string): string[] {
  const start = text.indexOf('\n## Details\n');
  if (start === -1) return [];
  const markerAt = text.indexOf(handWrittenMarker, start);
  return text
    .slice(start, markerAt === -1 ? undefined : markerAt)
    .split('\n')
    .filter((line) => line.startsWith('- '));
}

/** The rows of the table at the top of an earlier RESULTS.md, as written. */
function previousRows(text: string): ReportRow[] {
  const tableEnd = text.indexOf('\n## ');
  const lines = (tableEnd === -1 ? text : text.slice(0, tableEnd)).split('\n');
  const rows: ReportRow[] = [];
  for (const line of lines) {
    const cells = /^\| (.+) \| (.*) \| (.*) \| (pass|\*\*FAIL\*\*|—) \|$/.exec(line);
    if (!cells || cells[1] === 'scenario') continue;
    rows.push({ scenario: cells[1]!, measured: cells[2]!, target: cells[3]!, passed: cells[4] === '—' ? undefined : cells[4] === 'pass' });
  }
  return rows;
}
