// Scenario 14: what the approval gate adds to a call it allows, in this process: the shipped
// server_admin policy (its 70 allow rules are the longest list) judged for a read-only
// command, the audit row written to a real SQLite file, against the same call without a gate.
import path from 'node:path';
import { ApprovalGate } from '../../src/agent/approval-gate.ts';
import { createLogger } from '../../src/logger.ts';
import { ProfileRegistry } from '../../src/profiles/profile-registry.ts';
import { openDatabase } from '../../src/store/database.ts';
import type { Tool } from '../../src/tools/tool.ts';
import { projectRoot } from '../project-root.ts';
import type { ScenarioResult } from '../report.ts';
import { median, percentile } from '../statistics.ts';
import { makeTemporaryDirectory, removeTemporaryDirectory } from '../temporary-directories.ts';
import { toolContext } from './tool-calls.ts';

const calls = 5_000;
const warmUp = 500;
const budgetMs = 0.2;

const terminalLike: Tool<{ command: string }> = {
  name: 'terminal',
  description: 'bench',
  parameters: {},
  commandSubject: true,
  subject: (args) => args.command,
  execute: async () => '',
};

export async function approvalCheckTimes(): Promise<ScenarioResult> {
  const directory = await makeTemporaryDirectory('hearth-bench-approvals-');
  const db = await openDatabase(path.join(directory, 'hearth.db'));
  try {
    const profiles = await ProfileRegistry.open(path.join(projectRoot, 'profiles'));
    const policy = profiles.get('server_admin')?.approvals;
    if (!policy) throw new Error('the server_admin profile is missing');
    const gate = new ApprovalGate(db, 600_000, createLogger('silent'));
    const context = toolContext('bench-approvals', new AbortController().signal);
    const commands = ['df -h', 'systemctl status nginx', 'journalctl -u nginx -n 100 --no-pager', 'ls -la /var/log', 'free -m'];

    const times: number[] = [];
    for (let index = 0; index < warmUp + calls; index++) {
      const args = { command: commands[index % commands.length]! };
      const started = performance.now();
      const verdict = await gate.authorize({ callId: `call_${index}`, tool: terminalLike, args, policies: [policy], context });
      const elapsed = performance.now() - started;
      if (!verdict.allowed) throw new Error(`"${args.command}" was not allowed: ${verdict.message}`);
      if (index >= warmUp) times.push(elapsed);
    }
    const medianMs = median(times);
    return {
      rows: [
        {
          scenario: '14. Approval check of an allowed call',
          measured: `median ${medianMs.toFixed(3)} ms (p95 ${percentile(times, 0.95).toFixed(3)} ms, p99 ${percentile(times, 0.99).toFixed(3)} ms); ${calls.toLocaleString('en')} calls`,
          target: `median < ${budgetMs} ms`,
          passed: medianMs < budgetMs,
        },
      ],
      details: [
        `14. Approval check: ApprovalGate.authorize() for read-only terminal commands under the shipped server_admin policy (${policy.allow.length} allow, ${policy.ask.length} ask, ${policy.deny.length} deny rules), each writing its audit row to a real SQLite file (WAL, synchronous=NORMAL); ${warmUp} warm-up calls discarded.`,
      ],
    };
  } finally {
    await db.destroy();
    await removeTemporaryDirectory(directory);
  }
}
