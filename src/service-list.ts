import { ownEventLoopTurn } from './event-loop-turns.ts';
import type { Logger } from './logger.ts';

/**
 * Something the app starts and ends: registered where it is created, so its start and its end
 * sit beside each other (docs/architecture.md, *Where to add things*).
 */
export interface Service {
  /** For the log when it fails to end. */
  name: string;
  /** Called once the app is built, in the order the services were added. */
  start?(): void | Promise<void>;
  /**
   * At shutdown, before the sockets close: stop making new work and wait for your own to end.
   * Every service's stop is called at once, in the order added (what is synchronous in each runs
   * in that order), while the agent stops every run.
   */
  stop?(): void | Promise<void>;
  /** After the sockets closed, in the reverse order of adding: what was added first (the database) ends last. */
  close?(): void | Promise<void>;
}

export class ServiceList {
  private readonly services: Service[] = [];

  constructor(private readonly logger: Logger) {}

  add(service: Service): void {
    this.services.push(service);
  }

  /**
   * Each start comes in a turn of the event loop of its own: they run once the server listens
   * (src/app.ts), and what each does synchronously would otherwise add up to one block that
   * holds the first requests back.
   */
  async startAll(): Promise<void> {
    for (const service of this.services) {
      await ownEventLoopTurn();
      await service.start?.();
    }
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.services.map((service) => this.guarded(service, 'stop', () => service.stop?.())));
  }

  /** One that fails to close is logged, and the rest still close. */
  async closeAll(): Promise<void> {
    for (const service of [...this.services].reverse()) await this.guarded(service, 'close', () => service.close?.());
  }

  private async guarded(service: Service, phase: string, call: () => void | Promise<void>): Promise<void> {
    try {
      await call();
    } catch (error) {
      this.logger.error({ err: error, service: service.name }, `${service.name} failed to ${phase}`);
    }
  }
}
