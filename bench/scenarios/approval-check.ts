// Scenario 14: what the approval gate adds to a call it allows, in this process: the shipped
// server_admin policy judged for a read-only command (its terminal(readonly) rule parses the
// command line and checks it against the read-only class), the audit row written to a real SQLite file; 14b the same for an http_request call
// whose URL is normalised first, under smart_home's rules.
import path from 'node:path';
import { ApprovalGate } from '../../src/agent/approval-gate.ts';
import { Household } from '../../src/household/household.ts';
import { createLogger } from '../../src/logger.ts';
import { ProfileRegistry } from '../../src/profiles/profile-registry.ts';
import { openDatabase } from '../../src/store/database.ts';
import type { ApprovalPolicy } from '../../src/approvals/policy.ts';
import { createHttpRequestTool } from '../../src/tools/builtin/http-request.ts';
import type { Tool, ToolContext } from '../../src/tools/tool.ts';
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
  return withGate('server_admin', async (gate, policy, context) => {
    const commands = ['df -h', 'systemctl status nginx', 'journalctl -u nginx -n 100 --no-pager', 'ls -la /var/log', 'free -m'];
    const times = await timeAllowedCalls(gate, policy, context, terminalLike, (index) => ({ command: commands[index % commands.length]! }));
    const medianMs = median(times);
    return {
      rows: [
        {
          scenario: '14. Approval check of an allowed call',
          measured: describeTimes(times),
          target: `median < ${budgetMs} ms`,
          passed: medianMs < budgetMs,
        },
      ],
      details: [
        `14. Approval check: ApprovalGate.authorize() for read-only terminal commands under the shipped server_admin policy (${policy.allow.length} allow, ${policy.ask.length} ask, ${policy.deny.length} deny rules), each writing its audit row to a real SQLite file (WAL, synchronous=NORMAL); ${warmUp} warm-up calls discarded.`,
      ],
    };
  });
}

/**
 * Scenario 14b: the same for the real `http_request` tool under smart_home, whose subject's URL is
 * parsed and normalised (src/approvals/normalise-subject.ts) before its rules, HA's service paths
 * among them, are tried; every call passes them all and is allowed by the default.
 */
export async function normalisedApprovalCheckTimes(): Promise<ScenarioResult> {
  return withGate('smart_home', async (gate, policy, context) => {
    const tool = createHttpRequestTool();
    try {
      const urls = [
        'http://homeassistant.local:8123/api/services/light/turn_on',
        'http://HOMEASSISTANT.local.:8123/api/services/./Light/%74urn_off',
        'http://192.168.1.20/api/states/sensor.kitchen_temperature',
        'https://api.example.com/v1/items/../items?q=%41%42&page=2',
        'http://[fd00::20]:1880/hooks\\doorbell',
      ];
      const times = await timeAllowedCalls(gate, policy, context, tool, (index) => ({ method: 'POST' as const, url: urls[index % urls.length]! }));
      const medianMs = median(times);
      return {
        rows: [
          {
            scenario: '14b. Approval check of an allowed call, URL normalised',
            measured: describeTimes(times),
            target: `median < ${budgetMs} ms`,
            passed: medianMs < budgetMs,
          },
        ],
        details: [
          `14b. Normalised approval check: ApprovalGate.authorize() for the real http_request tool (POST to ${urls.length} URLs in turn, with dot segments, escapes, upper case, a trailing dot, backslashes and an IPv6 host) under the shipped smart_home policy (${policy.ask.length} ask rules, default allow): the subject's URL parsed with the WHATWG parser and normalised, every rule tried, the audit row written as in 14; ${warmUp} warm-up calls discarded.`,
        ],
      };
    } finally {
      await tool.dispose?.();
    }
  });
}

async function withGate(
  profileId: string,
  measure: (gate: ApprovalGate, policy: ApprovalPolicy, context: ToolContext) => Promise<ScenarioResult>,
): Promise<ScenarioResult> {
  const directory = await makeTemporaryDirectory('hearth-bench-approvals-');
  const db = await openDatabase(path.join(directory, 'hearth.db'));
  try {
    const profiles = await ProfileRegistry.open(path.join(projectRoot, 'profiles'));
    const policy = profiles.get(profileId)?.approvals;
    if (!policy) throw new Error(`the ${profileId} profile is missing`);
    const gate = new ApprovalGate(db, 600_000, createLogger('silent'), { household: new Household(db), profiles });
    return await measure(gate, policy, toolContext('bench-approvals', new AbortController().signal));
  } finally {
    await db.destroy();
    await removeTemporaryDirectory(directory);
  }
}

async function timeAllowedCalls<Arguments extends Record<string, unknown>>(
  gate: ApprovalGate,
  policy: ApprovalPolicy,
  context: ToolContext,
  tool: Tool<Arguments>,
  argumentsFor: (index: number) => Arguments,
): Promise<number[]> {
  const times: number[] = [];
  for (let index = 0; index < warmUp + calls; index++) {
    const args = argumentsFor(index);
    const started = performance.now();
    const verdict = await gate.authorize({ callId: `call_${index}`, tool, args, policies: [policy], context });
    const elapsed = performance.now() - started;
    if (!verdict.allowed) throw new Error(`${JSON.stringify(args)} was not allowed: ${verdict.message}`);
    if (index >= warmUp) times.push(elapsed);
  }
  return times;
}

function describeTimes(times: number[]): string {
  return `median ${median(times).toFixed(3)} ms (p95 ${percentile(times, 0.95).toFixed(3)} ms, p99 ${percentile(times, 0.99).toFixed(3)} ms); ${calls.toLocaleString('en')} calls`;
}
