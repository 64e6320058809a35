import type { ApprovalDetails, ApprovalGate, ApprovalResolution } from '../agent/approval-gate.ts';
import type { HearthEventHub, PendingApprovalSummary } from '../events/hearth-events.ts';
import type { ChannelLinks } from '../household/channel-links.ts';
import type { IntegrationRegistry } from '../integrations/integration-registry.ts';
import type { Logger } from '../logger.ts';
import type { Sessions } from '../sessions/sessions.ts';
import type { DocumentLibrary } from '../documents/document-types.ts';
import type { Channel, ChannelContext, ChannelSpeech } from './channel.ts';
import { messageOf } from '../failure.ts';

export interface ChannelsOptions {
  channels: readonly Channel[];
  sessions: Sessions;
  /** Chat accounts linked to people; each channel gets its own view. */
  links: Pick<ChannelLinks, 'forChannel'>;
  events: HearthEventHub;
  approvals: ApprovalGate;
  integrations: IntegrationRegistry;
  logger: Logger;
  speech: ChannelSpeech;
  /** The libraries of documents, handed to each channel (ChannelContext.documents). */
  documents?: DocumentLibrary;
}

/** Every registered channel: started and stopped together, and told of each notification and approval. */
export class Channels {
  private readonly unsubscribes: (() => void)[] = [];

  constructor(private readonly options: ChannelsOptions) {
    const ids = new Set<string>();
    for (const channel of options.channels) {
      if (ids.has(channel.id)) throw new Error(`two channels have the id "${channel.id}"`);
      ids.add(channel.id);
    }
  }

  list(): readonly Channel[] {
    return this.options.channels;
  }

  async start(): Promise<void> {
    const { channels, sessions, links, events, approvals, integrations, logger, speech, documents } = this.options;
    if (channels.length === 0) return;
    this.unsubscribes.push(
      events.subscribe((event, audience) => {
        if (event.type !== 'notification') return;
        const { type: _type, ...notification } = event;
        this.tellEach('deliverNotification', (channel) => channel.deliverNotification(notification, audience));
      }),
    );
    const onRequired = (approval: PendingApprovalSummary, details: ApprovalDetails) =>
      this.tellEach('presentApproval', (channel) => channel.presentApproval(approval, details));
    const onResolved = (approval: PendingApprovalSummary, resolution: ApprovalResolution) =>
      this.tellEach('approvalResolved', (channel) => channel.approvalResolved(approval, resolution));
    approvals.on('required', onRequired);
    approvals.on('resolved', onResolved);
    this.unsubscribes.push(
      () => approvals.off('required', onRequired),
      () => approvals.off('resolved', onResolved),
    );
    for (const channel of channels) {
      const context: ChannelContext = {
        sessions,
        people: links.forChannel(channel.id),
        reportStatus: (status) => integrations.report({ ...status, name: channel.id }),
        logger: logger.child({ channel: channel.id }),
        speech,
        ...(documents && { documents }),
      };
      try {
        await channel.start(context);
      } catch (error) {
        logger.error({ err: error, channel: channel.id }, 'channel failed to start');
        integrations.report({ name: channel.id, status: 'failed', message: `did not start: ${messageOf(error)}`, details: {} });
      }
    }
  }

  /** Stops every channel at once; runs are being stopped at the same time. */
  async stop(): Promise<void> {
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    await Promise.all(
      this.options.channels.map((channel) =>
        channel.stop().catch((error: unknown) => this.options.logger.error({ err: error, channel: channel.id }, 'channel failed to stop')),
      ),
    );
  }

  private tellEach(what: string, call: (channel: Channel) => void | Promise<void>): void {
    for (const channel of this.options.channels) {
      try {
        void Promise.resolve(call(channel)).catch((error: unknown) => this.options.logger.error({ err: error, channel: channel.id }, `channel ${what} failed`));
      } catch (error) {
        this.options.logger.error({ err: error, channel: channel.id }, `channel ${what} failed`);
      }
    }
  }
}
