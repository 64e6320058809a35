// Parent side of the scripted-LLM child process: start it, tell it how to answer,
// read its per-request timings and estimate the offset between its clock and ours.
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { track } from './child-processes.ts';
import { epochNow } from './epoch-time.ts';
import type { LlmCommand, LlmReply, LlmReport, ReplyPlan } from './llm-protocol.ts';
import { projectRoot } from './project-root.ts';

export type TimingReport = Extract<LlmReport, { type: 'timing' }>;
type CommandBody = LlmCommand extends infer Command ? (Command extends LlmCommand ? Omit<Command, 'id'> : never) : never;

export interface ClockOffset {
  /** LLM clock minus our clock. */
  offsetMs: number;
  /** Round trip of the best sample: the offset is exact to within half of it. */
  roundTripMs: number;
}

export class LlmProcess {
  private nextId = 1;
  private readonly replies = new Map<number, (reply: LlmReply) => void>();
  private readonly timings = new Map<string, TimingReport[]>();
  private timingWaiters: (() => void)[] = [];
  private readonly timingListeners = new Set<(report: TimingReport) => void>();

  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {
    child.on('message', (report: LlmReport) => this.receive(report));
  }

  static start(): Promise<LlmProcess> {
    const child = track(
      fork(path.join(projectRoot, 'bench', 'scripted-llm-process.ts'), [], {
        cwd: projectRoot,
        execArgv: ['--import', 'tsx'],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      }),
    );
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`scripted LLM process exited (${code}) before it was ready`));
      child.once('exit', onExit);
      child.once('error', reject);
      child.once('message', (report: LlmReport) => {
        child.off('exit', onExit);
        if (report.type !== 'ready') return reject(new Error(`scripted LLM process sent ${report.type} before ready`));
        resolve(new LlmProcess(child, report.url));
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  async configure(plan: ReplyPlan): Promise<void> {
    await this.request({ type: 'configure', plan });
  }

  /** NTP-style: the sample with the shortest round trip bounds the error best. */
  async measureClockOffset(samples = 50): Promise<ClockOffset> {
    let best: ClockOffset = { offsetMs: 0, roundTripMs: Number.POSITIVE_INFINITY };
    for (let sample = 0; sample < samples; sample++) {
      const sentAt = epochNow();
      const reply = await this.request({ type: 'clock' });
      const receivedAt = epochNow();
      if (reply.type !== 'clock') continue;
      const roundTripMs = receivedAt - sentAt;
      if (roundTripMs < best.roundTripMs) best = { offsetMs: reply.llmTime - (sentAt + receivedAt) / 2, roundTripMs };
    }
    return best;
  }

  /**
   * The LLM's own time in one turn: the turn's answer call, plus the auxiliary calls of
   * the same turn that finished before it (planning). Later background calls of the
   * same turn (a title) are not part of it.
   */
  async llmTimeOfTurn(tag: string, timeoutMs = 5_000): Promise<{ milliseconds: number; calls: number }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const reports = this.timings.get(tag) ?? [];
      const answer = reports.find((report) => report.answer);
      if (answer) {
        this.timings.delete(tag);
        const calls = reports.filter((report) => report.finishedAt <= answer.finishedAt);
        return { milliseconds: calls.reduce((total, report) => total + (report.finishedAt - report.receivedAt), 0), calls: calls.length };
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`the scripted LLM reported no answer call for turn ${tag}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.timingWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Hears every chat request's timing, tagged or not, until the returned function is called. */
  onTiming(listener: (report: TimingReport) => void): () => void {
    this.timingListeners.add(listener);
    return () => this.timingListeners.delete(listener);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    if (this.child.connected) this.child.disconnect();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 3_000);
    await exited;
    clearTimeout(timer);
  }

  private request(command: CommandBody): Promise<LlmReply> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.replies.delete(id);
        reject(new Error(`scripted LLM process did not answer ${command.type}`));
      }, 5_000);
      this.replies.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      this.child.send({ ...command, id } as LlmCommand);
    });
  }

  private receive(report: LlmReport): void {
    if (report.type === 'timing') {
      for (const listener of this.timingListeners) listener(report);
      if (report.tag === undefined) return;
      const reports = this.timings.get(report.tag) ?? [];
      reports.push(report);
      this.timings.set(report.tag, reports);
      const waiters = this.timingWaiters;
      this.timingWaiters = [];
      for (const waiter of waiters) waiter();
      return;
    }
    if ('id' in report) {
      const settle = this.replies.get(report.id);
      this.replies.delete(report.id);
      settle?.(report);
    }
  }
}
