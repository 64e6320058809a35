import type { Config } from '../config.ts';
import type { BackendRegistry } from '../llm/backend-registry.ts';
import { inCallLane } from '../llm/call-lane.ts';
import type { LlmBackend } from '../llm/types.ts';
import type { Logger } from '../logger.ts';
import type { Person } from '../people/person.ts';
import { keepsMemory } from '../people/rights.ts';
import type { Db } from '../store/database.ts';
import {
  applyExtraction,
  displayMessagesAfter,
  lastDisplayPosition,
  peopleWithStaleSummaries,
  readSummary,
  recentFacts,
  sessionsDueForExtraction,
  writeSummary,
  type DueSession,
  type MemoryFact,
} from '../store/memory-repository.ts';
import { extractFacts, transcriptBatches } from './extraction.ts';
import { summariseFacts } from './summary.ts';

export interface MemoryServiceOptions {
  db: Db;
  backends: BackendRegistry;
  config: Pick<Config, 'MEMORY_IDLE_MINUTES'>;
  logger: Logger;
  /** A person of the household by id: whose sessions are read, and who keeps memory (guests do not). */
  person: (personId: string) => Promise<Person | undefined>;
}

export interface ExtractionReport {
  /** Sessions whose new messages were read, whose they are, and how many of that person's facts it created or changed. */
  processed: { sessionId: string; personId: string; factsChanged: number }[];
  /** Sessions left for the next run, and why. */
  failed: { sessionId: string; personId: string; message: string }[];
  /** The people whose summary was rewritten (or removed, with their last fact). */
  summariesUpdated: string[];
}

export interface ExtractionOptions {
  /** Also read this person's sessions that are not idle yet (their "remember now"). */
  ignoreIdleOf?: string;
}

type Model = { backend: LlmBackend; model: string; contextWindow: number };
type SessionOutcome = { ok: true; factsChanged: number } | { ok: false; message: string; stopRun: boolean };

const checkEveryMinutes = 5;
const knownFactsForExtraction = 100;
const factsForSummary = 500;

/**
 * Long-term memory in the background: extracts facts from sessions that went idle, filing them
 * under the person whose session it was, keeps each person's narrative summary in step with
 * their facts, and hands it to the LLM calls of their sessions. Guests keep no memory: their
 * sessions are passed over and their calls hear no summary. Runs never overlap, and nothing
 * here is awaited by a turn.
 */
export class MemoryService {
  private readonly db: Db;
  private running: Promise<ExtractionReport> | undefined;
  private followUp: Promise<ExtractionReport> | undefined;
  private followUpIgnoresIdleOf = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private readonly stopping = new AbortController();

  constructor(private readonly options: MemoryServiceOptions) {
    this.db = options.db;
  }

  /** The person's summary, injected after the system prompt of their sessions' calls; undefined while there is none, and for guests. */
  async summary(personId: string): Promise<string | undefined> {
    const person = await this.options.person(personId);
    if (!person || !keepsMemory(person)) return undefined;
    const { content } = await readSummary(this.db, personId);
    return content.trim() === '' ? undefined : content;
  }

  /**
   * Extracts every due session, one at a time, then refreshes the summary if facts changed.
   * A call made while a run is going waits for it and then runs once more (calls made
   * meanwhile share that one follow-up run), so nothing that became due is missed.
   */
  runExtraction(options: ExtractionOptions = {}): Promise<ExtractionReport> {
    const eager = options.ignoreIdleOf === undefined ? [] : [options.ignoreIdleOf];
    if (!this.running) return this.begin(eager);
    for (const personId of eager) this.followUpIgnoresIdleOf.add(personId);
    this.followUp ??= this.running.then(() => {
      const ignoreIdleOf = [...this.followUpIgnoresIdleOf];
      this.followUp = undefined;
      this.followUpIgnoresIdleOf = new Set();
      return this.begin(ignoreIdleOf);
    });
    return this.followUp;
  }

  /** Starts a run without waiting for it (session created, a fact changed by hand). */
  runInBackground(): void {
    void this.runExtraction();
  }

  /** Checks for idle sessions every few minutes (sooner when the idle threshold is shorter). */
  start(): void {
    if (this.timer || this.stopping.signal.aborted) return;
    const minutes = Math.min(checkEveryMinutes, this.options.config.MEMORY_IDLE_MINUTES);
    this.timer = setInterval(() => this.runInBackground(), minutes * 60_000).unref();
  }

  /** Stops the timer, cancels a run's LLM call and waits for the run to end. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.stopping.abort();
    await this.running;
    await this.followUp;
  }

  private begin(ignoreIdleOf: readonly string[]): Promise<ExtractionReport> {
    // A tool that changes a fact mid-run starts this from inside a person's run: its calls still wait as background work.
    const run = inCallLane({ lane: 'background' }, () => this.extractDue(ignoreIdleOf))
      .catch((error: unknown): ExtractionReport => {
        this.options.logger.error({ err: error }, 'memory extraction run failed');
        return { processed: [], failed: [], summariesUpdated: [] };
      })
      .finally(() => {
        this.running = undefined;
      });
    this.running = run;
    return run;
  }

  private async extractDue(ignoreIdleOf: readonly string[]): Promise<ExtractionReport> {
    const report: ExtractionReport = { processed: [], failed: [], summariesUpdated: [] };
    if (this.stopping.signal.aborted) return report;
    const choice = this.options.backends.choose();
    if (!choice.ok) {
      this.options.logger.warn(`long-term memory is paused: ${choice.error.message}`);
      return report;
    }
    const model = { backend: choice.backend, model: choice.model, contextWindow: choice.contextWindow };
    const idleSince = new Date(Date.now() - this.options.config.MEMORY_IDLE_MINUTES * 60_000).toISOString();
    for (const due of await sessionsDueForExtraction(this.db, idleSince, ignoreIdleOf)) {
      const person = await this.options.person(due.personId);
      if (!person || !keepsMemory(person) || due.shared) {
        // Nothing said in a guest's session is ever remembered, not even if they later join for good;
        // nor in a shared one, where what others wrote would be filed as its person's.
        await applyExtraction(this.db, due, await lastDisplayPosition(this.db, due.sessionId), []);
        continue;
      }
      const outcome = await this.extractSession(due, model);
      if (outcome.ok) {
        report.processed.push({ sessionId: due.sessionId, personId: due.personId, factsChanged: outcome.factsChanged });
        continue;
      }
      report.failed.push({ sessionId: due.sessionId, personId: due.personId, message: outcome.message });
      this.options.logger.warn({ sessionId: due.sessionId }, `memory extraction failed, retried next run: ${outcome.message}`);
      if (outcome.stopRun) break;
    }
    for (const personId of await peopleWithStaleSummaries(this.db)) {
      if (this.stopping.signal.aborted) break;
      const person = await this.options.person(personId);
      if (!person || !keepsMemory(person)) continue;
      if (await this.refreshSummary(personId, model)) report.summariesUpdated.push(personId);
    }
    return report;
  }

  /** Reads a session's new messages in batches; each batch's facts and progress are stored together. */
  private async extractSession(due: DueSession, model: Model): Promise<SessionOutcome> {
    const { contextWindow } = model;
    const messages = await displayMessagesAfter(this.db, due.sessionId, due.afterPosition);
    // About half the window for the conversation, at roughly four characters a token.
    const batches = transcriptBatches(messages, Math.min(48_000, Math.max(4_000, contextWindow * 2)));
    let factsChanged = 0;
    for (const batch of batches) {
      let facts: { category: string; key: string; value: string }[] = [];
      if (batch.transcript !== '') {
        const knownFacts = withinCharacters(await recentFacts(this.db, due.personId, knownFactsForExtraction), Math.min(6_000, contextWindow / 2));
        const result = await extractFacts({ ...model, transcript: batch.transcript, knownFacts, signal: this.stopping.signal });
        if (!result.ok) {
          if (result.reason === 'malformed') return { ok: false, message: `malformed reply: ${result.message}`, stopRun: false };
          // An unreachable or cancelled backend would fail the same way for every other session.
          return { ok: false, message: result.error.message, stopRun: result.error.code !== 'llm_error' };
        }
        facts = result.facts;
      }
      factsChanged += (await applyExtraction(this.db, due, batch.throughPosition, facts)).length;
    }
    return { ok: true, factsChanged };
  }

  /** Rewrites the person's summary when their facts changed since it was written; a failure keeps the old one for the next run. */
  private async refreshSummary(personId: string, model: Model): Promise<boolean> {
    const { stale, factsVersion } = await readSummary(this.db, personId);
    if (!stale) return false;
    const { contextWindow } = model;
    const facts = withinCharacters(await recentFacts(this.db, personId, factsForSummary), Math.min(24_000, contextWindow * 2));
    if (facts.length === 0) {
      await writeSummary(this.db, personId, '', factsVersion);
      return true;
    }
    const result = await summariseFacts({ ...model, facts, signal: this.stopping.signal });
    if (!result.ok) {
      this.options.logger.warn(`memory summary not regenerated, retried next run: ${result.error.message}`);
      return false;
    }
    await writeSummary(this.db, personId, result.summary, factsVersion);
    return true;
  }
}

/** The leading facts whose lines fit in about `limit` characters. */
function withinCharacters(facts: MemoryFact[], limit: number): MemoryFact[] {
  let length = 0;
  const kept: MemoryFact[] = [];
  for (const fact of facts) {
    length += fact.category.length + fact.key.length + Math.min(fact.value.length, 300) + 8;
    if (length > limit && kept.length > 0) break;
    kept.push(fact);
  }
  return kept;
}
