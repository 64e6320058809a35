// Scenario 16: what checkpointing a streaming answer costs the event loop, in this process:
// the real DraftCheckpoint fed deltas, writing its pieces to a real SQLite file, set
// against the time scenario 4's 100 streams take.
import path from 'node:path';
import { DraftCheckpoint } from '../../src/agent/draft-checkpoint.ts';
import { openDatabase } from '../../src/store/database.ts';
import { appendDraft } from '../../src/store/runs-repository.ts';
import { createSession } from '../../src/store/sessions-repository.ts';
import type { ScenarioResult } from '../report.ts';
import { median } from '../statistics.ts';
import { makeTemporaryDirectory, removeTemporaryDirectory } from '../temporary-directories.ts';

const sessions = 100;
/** Scenario 4's shape: 100 streams of 50 deltas 20 ms apart, so about one timed checkpoint each. */
const deltasPerSession = 50;
const deltaText = 'A stamped chunk of about forty characters';
const writesPerSession = 2;
const scenarioFourIdealWallMs = 1_000;
const budgetShare = 0.05;
const rounds = 20;

export async function checkpointCost(): Promise<ScenarioResult> {
  const directory = await makeTemporaryDirectory('hearth-bench-checkpoints-');
  const db = await openDatabase(path.join(directory, 'hearth.db'));
  try {
    const sessionIds = await Promise.all(Array.from({ length: sessions }, async () => (await createSession(db, { profileId: 'secretary' })).id));
    const addTimes: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const checkpoints = sessionIds.map(
        (sessionId) =>
          new DraftCheckpoint({
            write: (piece) => appendDraft(db, sessionId, piece),
            onError: (error) => {
              throw error;
            },
          }),
      );
      const started = performance.now();
      for (let delta = 0; delta < deltasPerSession; delta++) for (const checkpoint of checkpoints) checkpoint.add('text', deltaText);
      addTimes.push((performance.now() - started) / (sessions * deltasPerSession));
      await Promise.all(checkpoints.map((checkpoint) => checkpoint.close()));
    }
    // The writes the 1 s timer makes, timed one by one: a piece of half a stream's deltas each.
    const writeTimes: number[] = [];
    for (let index = 0; index < 1_000; index++) {
      const started = performance.now();
      await appendDraft(db, sessionIds[index % sessions]!, { text: deltaText.repeat(deltasPerSession / writesPerSession), thinking: '' });
      writeTimes.push(performance.now() - started);
    }
    const addMs = median(addTimes);
    const writeMs = median(writeTimes);
    const totalMs = sessions * deltasPerSession * addMs + sessions * writesPerSession * writeMs;
    const share = totalMs / scenarioFourIdealWallMs;
    return {
      rows: [
        {
          scenario: '16. Checkpointing cost at scenario 4’s shape',
          measured:
            `${totalMs.toFixed(1)} ms of event loop per 100 streams (${(share * 100).toFixed(2)} % of their 1 s): ` +
            `add() ${(addMs * 1000).toFixed(3)} µs per delta, a draft write ${(writeMs * 1000).toFixed(0)} µs`,
          target: `< ${budgetShare * 100} %`,
          passed: share < budgetShare,
        },
      ],
      details: [
        `16. Checkpoint cost: the real DraftCheckpoint (src/agent/draft-checkpoint.ts) for each of ${sessions} sessions, fed ${deltasPerSession} deltas of ${deltaText.length} characters round-robin ` +
          `(${rounds} rounds; add() time per delta is the median round's), and appendDraft (one insert) timed 1,000 times one after another into a real SQLite file (WAL). ` +
          `Scenario 4 streams ${sessions} × ${deltasPerSession} deltas 20 ms apart, so each stream lasts about 1 s and its draft is written about once by the 1 s timer; ` +
          `${writesPerSession} writes per stream are counted. The share is the event-loop time this adds, over scenario 4's ideal wall time of 1 s.`,
      ],
    };
  } finally {
    await db.destroy();
    await removeTemporaryDirectory(directory);
  }
}
