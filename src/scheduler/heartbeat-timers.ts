import { EventEmitter } from 'node:events';
import type { HearthEventHub } from '../events/hearth-events.ts';
import { runHeartbeat, type HeartbeatResult, type HeartbeatRunner } from './heartbeat-run.ts';
import type { Logger } from '../logger.ts';
import { isWithinActiveHours } from '../profiles/heartbeat-settings.ts';
import type { Clock } from '../time/clock.ts';

export interface HeartbeatTimersOptions {
  runner: HeartbeatRunner;
  /** Where profile changes are heard. */
  events: HearthEventHub;
  clock: Clock;
  /** The zone active hours are read in (the scheduler's). */
  timezone: () => string;
  logger: Logger;
}

/**
 * Runs each profile's heartbeat every `heartbeat.every` by the clock, counted from start or
 * the last profile change, and only within its active hours (docs/agent.md, "Heartbeat").
 * Each run is runHeartbeat's, which raises what it finds; `heartbeat_finished` follows it.
 */
export class HeartbeatTimers extends EventEmitter<{ heartbeat_finished: [profileId: string, result: HeartbeatResult] }> {
  private readonly cancels = new Map<string, () => void>();
  private readonly running = new Set<Promise<void>>();
  private unsubscribe: (() => void) | undefined;
  private stopped = false;
  constructor(private readonly options: HeartbeatTimersOptions) {
    super();
  }

  /** Arms every profile's heartbeat, and arms them again whenever the profiles change. */
  start(): void {
    this.armAll();
    this.unsubscribe = this.options.events.subscribe((event) => {
      if (event.type === 'profiles_changed') this.armAll();
    });
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    for (const cancel of this.cancels.values()) cancel();
    this.cancels.clear();
  }

  async settled(): Promise<void> {
    await Promise.all(this.running);
  }

  private armAll(): void {
    if (this.stopped) return;
    for (const cancel of this.cancels.values()) cancel();
    this.cancels.clear();
    for (const profile of this.options.runner.profiles.list()) {
      if (profile.heartbeat) this.arm(profile.id, profile.heartbeat.everyMs);
    }
  }

  private arm(profileId: string, everyMs: number): void {
    const { clock } = this.options;
    const at = new Date(clock.now().getTime() + everyMs);
    this.cancels.set(
      profileId,
      clock.setTimer(at, () => {
        this.cancels.delete(profileId);
        if (this.stopped) return;
        this.beat(profileId);
        this.arm(profileId, everyMs);
      }),
    );
  }

  /** One heartbeat run of the profile now, whatever its timing and active hours. */
  runNow(profileId: string): Promise<HeartbeatResult> {
    return runHeartbeat(this.options.runner, profileId);
  }

  private beat(profileId: string): void {
    const { runner, clock, timezone, logger } = this.options;
    const settings = runner.profiles.get(profileId)?.heartbeat;
    if (!settings || !isWithinActiveHours(settings, clock.now(), timezone())) return;
    const run = runHeartbeat(runner, profileId)
      .then((result) => void this.emit('heartbeat_finished', profileId, result))
      .catch((error: unknown) => logger.error({ err: error, profileId }, 'heartbeat run failed'))
      .finally(() => this.running.delete(run));
    this.running.add(run);
  }
}
