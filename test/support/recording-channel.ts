import type { ApprovalResolution } from '../../src/agent/approval-gate.ts';
import type { Channel, ChannelApproval, ChannelContext, ChannelNotification } from '../../src/channels/channel.ts';

export type Told =
  | { type: 'notification'; notification: ChannelNotification }
  | { type: 'approval'; approval: ChannelApproval }
  | { type: 'approval_resolved'; approval: ChannelApproval; resolution: ApprovalResolution };

/** A channel that records what Hearth tells it and keeps the context it was started with, so a test can act as the channel. */
export class RecordingChannel implements Channel {
  readonly told: Told[] = [];
  context: ChannelContext | undefined;
  stopped = false;

  constructor(readonly id = 'recorder') {}

  start(context: ChannelContext): void {
    this.context = context;
    context.reportStatus({ status: 'connected', details: { chats: 0 } });
  }

  async stop(): Promise<void> {
    this.stopped = true;
  }

  deliverNotification(notification: ChannelNotification): void {
    this.told.push({ type: 'notification', notification });
  }

  presentApproval(approval: ChannelApproval): void {
    this.told.push({ type: 'approval', approval });
  }

  approvalResolved(approval: ChannelApproval, resolution: ApprovalResolution): void {
    this.told.push({ type: 'approval_resolved', approval, resolution });
  }

  /** What it was told of one kind, in order. */
  of<T extends Told['type']>(type: T): Extract<Told, { type: T }>[] {
    return this.told.filter((told): told is Extract<Told, { type: T }> => told.type === type);
  }
}
