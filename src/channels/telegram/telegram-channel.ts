import { Bot, GrammyError, type Context } from 'grammy';
import type { Message } from 'grammy/types';
import type { ApprovalResolution } from '../../agent/approval-gate.ts';
import type { AgentEvent } from '../../protocol/events.ts';
import type { Logger } from '../../logger.ts';
import type { Sessions } from '../../sessions/sessions.ts';
import type { Channel, ChannelApproval, ChannelContext, ChannelNotification } from '../channel.ts';
import { parseAllowedUsers, StrangerLog } from './allowed-users.ts';
import { ApprovalButtons } from './approval-buttons.ts';
import { approvalHtml, approvalKeyboard, decidedApprovalHtml, decisionOf, staleApprovalAnswer, type ApprovalDecider, type ApprovalView } from './approval-message.ts';
import { buttonPress, refusedPressLog, type ButtonPress } from './button-press.ts';
import { forwardedFrom } from './forwarded-from.ts';
import { describeTelegramFailure, redactToken } from './redact-token.ts';
import { escapeHtml } from './render-html.ts';
import { requestedSession, sessionButtons, SessionListings } from './session-buttons.ts';
import { StreamedAnswer } from './streamed-answer.ts';
import type { ReceivedFile, TelegramSessions } from './telegram-port.ts';
import { sessionServiceSessions } from './telegram-sessions.ts';
import { messageOf } from '../../failure.ts';

export type TelegramChannelState = 'not_configured' | 'connecting' | 'connected' | 'failed';

export interface TelegramChannelStatus {
  state: TelegramChannelState;
  /** Why it failed or is not configured; never holds the token. */
  reason?: string;
  /** When it tries again after a failure (ISO). */
  retryAt?: string;
  /** The bot's @username once Telegram said it. */
  bot?: string;
}

export interface TelegramChannelOptions {
  token: string;
  allowedUsers: string;
  apiRoot: string;
  /** How the channel reaches sessions; by default the session service of its context, adapted. */
  sessionsFor?: (service: Sessions) => TelegramSessions;
  /** Edit interval of streamed answers; about a second. */
  editIntervalMs?: number;
  /** Long-poll timeout of getUpdates, in seconds. */
  pollTimeoutSeconds?: number;
  /** The first wait after a failure; it doubles up to `longestRetryMs`. */
  firstRetryMs?: number;
  longestRetryMs?: number;
}

export const telegramCommands = [
  { command: 'new', description: 'Start a new session, optionally with a profile: /new [profile]' },
  { command: 'stop', description: 'Stop the answer being written' },
  { command: 'profile', description: 'Show or switch the profile: /profile [id]' },
  { command: 'sessions', description: 'Recent sessions, to continue one' },
  { command: 'help', description: 'What this bot does' },
];

const helpText = [
  '<b>Hearth</b> answers here as it does in the page; the page shows this chat as a session too.',
  '/new [profile] — a new session',
  '/stop — stop the answer being written',
  '/profile [id] — show or switch the profile',
  '/sessions — continue a recent session',
  'Photos reach the assistant as images; documents and voice notes are kept in the session\'s files.',
].join('\n');

const maxDownloadBytes = 20 * 1024 * 1024;

interface FollowedSession {
  sessionId: string;
  chatId: number;
  unfollow: () => void;
  answer?: StreamedAnswer;
}

/**
 * The Telegram channel (README: Telegram): long polling with grammY (`deleteWebhook` at start, no
 * inbound port), one session per private chat of an allowed user, answers streamed by edits,
 * approvals as buttons, commands. A bad token or an outage is a `failed` status with the reason
 * and a retry with backoff, never a crash; the token is in no log or status.
 */
export class TelegramChannel implements Channel {
  readonly id = 'telegram';
  private bot: Bot | undefined;
  private sessions!: TelegramSessions;
  private logger!: Logger;
  private reportStatus: ChannelContext['reportStatus'] = () => undefined;
  private allowed: ReadonlySet<number> = new Set();
  private readonly strangers = new StrangerLog((stranger) =>
    this.logger.warn(
      { telegramUserId: stranger.id, username: stranger.username },
      `Telegram: ignoring messages from user ${stranger.id}, who is not in TELEGRAM_ALLOWED_USERS (add the id there to let them in)`,
    ),
  );
  private readonly followed = new Map<string, FollowedSession>();
  private readonly approvals = new ApprovalButtons();
  private readonly listings = new SessionListings();
  private currentStatus: TelegramChannelStatus = { state: 'not_configured' };
  private polling: AbortController | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private wakeRetry: (() => void) | undefined;
  private failedAttempts = 0;
  private closed = false;
  private loop: Promise<void> | undefined;
  /** The next update wanted from getUpdates; asking with it confirms every one before it. */
  private offset = 0;

  constructor(private readonly options: TelegramChannelOptions) {}

  get status(): TelegramChannelStatus {
    return this.currentStatus;
  }

  start(context: ChannelContext): void {
    this.logger = context.logger;
    this.reportStatus = context.reportStatus;
    this.sessions = this.options.sessionsFor?.(context.sessions) ?? sessionServiceSessions(context.sessions);
    if (this.options.token === '') return this.report({ state: 'not_configured', reason: 'TELEGRAM_BOT_TOKEN is not set.' });
    const allowed = parseAllowedUsers(this.options.allowedUsers);
    if (!allowed.ok) return this.report({ state: 'failed', reason: allowed.reason });
    this.allowed = allowed.userIds;
    const bot = new Bot(this.options.token, { client: { apiRoot: this.options.apiRoot.replace(/\/+$/, '') } });
    this.bot = bot;
    this.install(bot);
    this.loop ??= this.run(bot);
  }

  async stop(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.wakeRetry?.();
    this.polling?.abort();
    for (const session of this.followed.values()) {
      session.answer?.close();
      session.unfollow();
    }
    this.followed.clear();
    await this.loop;
    await this.confirmHandled();
  }

  /** Tells Telegram which updates were handled, so that the next start does not get them again (as grammY's own stop does). */
  private async confirmHandled(): Promise<void> {
    if (!this.bot || this.offset === 0 || this.currentStatus.state !== 'connected') return;
    const signal = AbortSignal.timeout(2_000) as unknown as Parameters<Bot['api']['getUpdates']>[1];
    await this.bot.api.getUpdates({ offset: this.offset, limit: 1, timeout: 0 }, signal).catch((error: unknown) => this.logFailure('handled updates not confirmed', error));
  }

  /** A notification (§14) to every allowed user's private chat. */
  async deliverNotification(notification: ChannelNotification): Promise<void> {
    const bot = this.bot;
    if (!bot || this.currentStatus.state !== 'connected') return;
    const body = notification.body.length > 3_500 ? `${notification.body.slice(0, 3_500)}…` : notification.body;
    const html = `🔔 <b>${escapeHtml(notification.title.slice(0, 200))}</b>\n${escapeHtml(body)}`;
    for (const userId of this.allowed) {
      await bot.api.sendMessage(userId, html, { parse_mode: 'HTML' }).catch((error: unknown) => this.logFailure('notification not delivered', error));
    }
  }

  /** A call waits in some session: shown, with its buttons, when the session is one of this channel's chats. */
  async presentApproval(approval: ChannelApproval): Promise<void> {
    const followed = this.followed.get(approval.session_id);
    if (followed) await this.showApproval(approval.session_id, followed.chatId, { ...approval, reason: '' });
  }

  async approvalResolved(approval: ChannelApproval, resolution: ApprovalResolution): Promise<void> {
    await this.resolveApproval(approval.call_id, resolution);
  }

  /** Shows a waiting approval in a chat, once, whichever of the gate and the session's events tells first. */
  private async showApproval(sessionId: string, chatId: number, view: ApprovalView): Promise<void> {
    const bot = this.bot;
    if (!bot || !this.approvals.claim(view.call_id)) return;
    try {
      const message = await bot.api.sendMessage(chatId, approvalHtml(view), { parse_mode: 'HTML', reply_markup: approvalKeyboard(view.call_id) });
      this.approvals.settle(view.call_id, { sessionId, chatId, messageId: message.message_id, view });
    } catch (error) {
      this.approvals.settle(view.call_id, undefined);
      this.logFailure('approval not shown', error);
    }
  }

  /** Edits a presented approval to say what was decided and by whom (a press here, the page, a timeout). */
  private async resolveApproval(
    callId: string,
    resolution: { decision: 'allow' | 'deny'; remember: 'once' | 'session'; by: ApprovalResolution['by'] | 'rule'; via?: string },
  ): Promise<void> {
    const presented = this.approvals.resolve(callId);
    if (!presented || !this.bot) return;
    const { decision, remember, by, via } = resolution;
    const decidedHere = via === 'telegram' || (via === undefined && presented.pressedBy !== undefined);
    const decider: ApprovalDecider =
      by === 'user' ? (decidedHere ? { kind: 'person', name: presented.pressedBy ?? 'Telegram' } : { kind: 'page' }) : { kind: by };
    const html = decidedApprovalHtml(presented.view, { decision, remember, decider });
    await this.bot.api
      .editMessageText(presented.chatId, presented.messageId, html, { parse_mode: 'HTML' })
      .catch((error: unknown) => this.logFailure('approval message not edited', error));
  }

  private report(status: TelegramChannelStatus): void {
    this.currentStatus = status;
    this.reportStatus({
      status: status.state,
      ...(status.reason !== undefined && { message: status.reason }),
      details: { ...(status.bot !== undefined && { bot: status.bot }), ...(status.retryAt !== undefined && { retry_at: status.retryAt }) },
    });
  }

  private logFailure(what: string, error: unknown): void {
    this.logger.warn(`Telegram: ${what}: ${describeTelegramFailure(error, this.options.token)}`);
  }

  /** Polls until closed; every failure becomes a `failed` status and a wait that doubles. */
  private async run(bot: Bot): Promise<void> {
    let ready = false;
    const pollTimeout = this.options.pollTimeoutSeconds ?? 30;
    while (!this.closed) {
      try {
        if (!ready) {
          this.report({ state: 'connecting', ...(this.currentStatus.reason ? { reason: this.currentStatus.reason } : {}) });
          await bot.init();
          await bot.api.deleteWebhook();
          await bot.api.setMyCommands(telegramCommands);
          ready = true;
          this.failedAttempts = 0;
          this.report({ state: 'connected', bot: `@${bot.botInfo.username}` });
          await this.followKnownChats();
        }
        this.polling = new AbortController();
        // grammY types its signal as the abort-controller package's; Node's own works the same.
        const signal = this.polling.signal as unknown as Parameters<Bot['api']['getUpdates']>[1];
        // After a failure, a poll that answers at once says soonest that Telegram is back.
        const timeout = this.currentStatus.state === 'connected' ? pollTimeout : 0;
        const updates = await bot.api.getUpdates({ offset: this.offset, timeout, allowed_updates: ['message', 'callback_query'] }, signal);
        if (this.currentStatus.state !== 'connected') this.report({ state: 'connected', bot: `@${bot.botInfo.username}` });
        this.failedAttempts = 0;
        for (const update of updates) {
          this.offset = update.update_id + 1;
          await bot.handleUpdate(update).catch((error: unknown) => this.logFailure(`update ${update.update_id} failed`, error));
        }
      } catch (error) {
        if (this.closed) break;
        await this.waitAfter(error);
      }
    }
  }

  /** Each allowed person's chat session, as it was before a restart, is followed again at once. */
  private async followKnownChats(): Promise<void> {
    for (const userId of this.allowed) {
      const sessionId = await this.sessions.existingSessionForChat(userId);
      if (sessionId !== undefined && !this.closed) this.followSession(sessionId, userId);
    }
  }

  private async waitAfter(error: unknown): Promise<void> {
    let waitMs: number;
    if (error instanceof GrammyError && error.error_code === 429) {
      waitMs = (error.parameters.retry_after ?? 1) * 1_000;
    } else {
      const first = this.options.firstRetryMs ?? 1_000;
      waitMs = Math.min(first * 2 ** this.failedAttempts++, this.options.longestRetryMs ?? 300_000);
      const reason = describeTelegramFailure(error, this.options.token);
      if (this.currentStatus.reason !== reason) this.logger.warn(`Telegram: ${reason}`);
      this.report({ state: 'failed', reason, retryAt: new Date(Date.now() + waitMs).toISOString() });
    }
    await new Promise<void>((resolve) => {
      this.wakeRetry = resolve;
      this.retryTimer = setTimeout(resolve, waitMs);
    });
  }

  private install(bot: Bot): void {
    bot.use(async (context, next) => {
      const from = context.from;
      if (!from || context.chat?.type !== 'private' || !this.allowed.has(from.id)) {
        // Groups get nothing either; only someone not allowed is worth a line for the owner.
        if (from && !from.is_bot && !this.allowed.has(from.id)) this.strangers.note(from);
        return;
      }
      await next();
    });
    // Telegram sends /start when a person first opens the bot: it is answered as /help, not sent to the model.
    bot.command(['start', 'help'], (context) => context.reply(helpText, { parse_mode: 'HTML' }));
    bot.command('new', async (context) => {
      const created = await this.sessions.newSession(context.chat!.id, context.match.trim() || undefined);
      await context.reply(created.ok ? 'A new session has begun.' : created.reason);
      if (created.ok) this.followSession(created.sessionId, context.chat!.id);
    });
    bot.command('stop', async (context) => {
      const sessionId = await this.sessions.existingSessionForChat(context.chat!.id);
      if (sessionId !== undefined) await this.sessions.stop(sessionId);
    });
    bot.command('profile', async (context) => {
      const sessionId = await this.sessions.sessionForChat(context.chat!.id);
      const requested = context.match.trim();
      const result = await this.sessions.profile(sessionId, requested || undefined);
      if (!result.ok) return void (await context.reply(result.reason));
      if (requested) return void (await context.reply(`Profile: ${result.name}`));
      const others = (await this.sessions.profiles()).map((profile) => profile.id).join(', ');
      await context.reply(`Profile: ${result.name} (${result.id}). Others: ${others}`);
    });
    bot.command('sessions', async (context) => {
      const recent = await this.sessions.recentSessions(context.chat!.id);
      if (recent.length === 0) return void (await context.reply('No sessions yet.'));
      const inline_keyboard = sessionButtons(recent.slice(0, 10));
      const listing = await context.reply('Recent sessions:', { reply_markup: { inline_keyboard } });
      this.listings.listed(listing.chat.id, listing.message_id, inline_keyboard);
    });
    bot.on('callback_query:data', (context) => this.onButton(context));
    bot.on('message', (context) => this.onMessage(context));
  }

  /** A button counts only from the chat and the message it was sent to; anything else is refused and logged. */
  private async onButton(context: Context): Promise<void> {
    const press = buttonPress(context.callbackQuery!);
    if (!press) return void (await context.answerCallbackQuery());
    const sessionId = requestedSession(press);
    if (sessionId !== undefined) {
      if (!this.listings.offered(press, sessionId)) {
        return this.refuse(context, press, 'session switch', 'not a session the last /sessions listing showed on that message', 'That session was not offered here: send /sessions and pick from the new list.');
      }
      const switched = await this.sessions.switchSession(press.chatId, sessionId);
      await context.answerCallbackQuery({ text: switched.ok ? 'Continuing that session.' : switched.reason });
      if (switched.ok) this.followSession(sessionId, press.chatId);
      return;
    }
    const pressed = this.approvals.press(press);
    if (!pressed) return this.refuse(context, press, 'unknown button', 'no button of this bot carries that data', 'This button does nothing.');
    if (pressed.kind === 'stale') return void (await context.answerCallbackQuery({ text: staleApprovalAnswer }));
    if (pressed.kind === 'elsewhere') {
      const why = `the approval was shown as message ${pressed.approval.messageId} in chat ${pressed.approval.chatId}`;
      return this.refuse(context, press, 'approval button', why, 'This button is not on that approval: it can be decided only where it was asked.');
    }
    const { approval } = pressed;
    approval.pressedBy = context.from!.first_name;
    const { decision, remember } = decisionOf(pressed.choice);
    const outcome = await this.sessions.decide(approval.sessionId, approval.view.call_id, decision, remember);
    if (outcome === 'not_found') {
      this.approvals.resolve(approval.view.call_id);
      return void (await context.answerCallbackQuery({ text: staleApprovalAnswer }));
    }
    await context.answerCallbackQuery({ text: decision === 'allow' ? 'Allowed' : 'Denied' });
  }

  private async refuse(context: Context, press: ButtonPress, refused: string, why: string, notice: string): Promise<void> {
    this.logger.warn(refusedPressLog(press, refused), `Telegram: refused a ${refused} press by user ${press.userId} in chat ${press.chatId} (message ${press.messageId}): ${why}`);
    await context.answerCallbackQuery({ text: notice });
  }

  private async onMessage(context: Context): Promise<void> {
    const message = context.message!;
    const chatId = context.chat!.id;
    const sessionId = await this.sessions.sessionForChat(chatId);
    this.followSession(sessionId, chatId);
    let files: ReceivedFile[];
    try {
      files = await this.filesOf(message);
    } catch (error) {
      this.logFailure('file not downloaded', error);
      return void (await context.reply(`That file could not be fetched from Telegram: ${describeTelegramFailure(error, this.options.token)}`));
    }
    const text = message.text ?? message.caption ?? '';
    if (text === '' && files.length === 0) return;
    const sent = await this.sessions.send(sessionId, text, files, forwardedFrom(message));
    if (!sent.ok) await context.reply(sent.reason);
  }

  private async filesOf(message: Message): Promise<ReceivedFile[]> {
    if (message.photo && message.photo.length > 0) {
      const largest = message.photo.at(-1)!;
      return [{ kind: 'photo', name: `photo-${message.message_id}.jpg`, mimeType: 'image/jpeg', data: await this.download(largest.file_id) }];
    }
    if (message.document) {
      const document = message.document;
      return [{ kind: 'document', name: document.file_name ?? `document-${message.message_id}`, mimeType: document.mime_type ?? 'application/octet-stream', data: await this.download(document.file_id) }];
    }
    if (message.voice) {
      return [{ kind: 'voice', name: `voice-${message.message_id}.ogg`, mimeType: message.voice.mime_type ?? 'audio/ogg', data: await this.download(message.voice.file_id) }];
    }
    return [];
  }

  private async download(fileId: string): Promise<Buffer> {
    const file = await this.bot!.api.getFile(fileId);
    if (!file.file_path) throw new Error('Telegram gave no file path (files over 20 MB cannot be fetched by bots)');
    if ((file.file_size ?? 0) > maxDownloadBytes) throw new Error('the file is over 20 MB, more than bots may fetch');
    const root = this.options.apiRoot.replace(/\/+$/, '');
    const response = await fetch(`${root}/file/bot${this.options.token}/${file.file_path}`).catch((error: unknown) => {
      throw new Error(redactToken(`download failed: ${messageOf(error)}`, this.options.token));
    });
    if (!response.ok) throw new Error(`download failed: HTTP ${response.status}`);
    return Buffer.from(await response.arrayBuffer());
  }

  /** Mirrors a session's events into the chat: answers streamed, tool status, approvals. */
  private followSession(sessionId: string, chatId: number): void {
    for (const [followedId, followed] of this.followed) {
      if (followed.chatId === chatId && followedId !== sessionId) {
        followed.answer?.close();
        followed.unfollow();
        this.followed.delete(followedId);
      }
    }
    if (this.followed.has(sessionId)) return;
    const followed: FollowedSession = { sessionId, chatId, unfollow: () => undefined };
    followed.unfollow = this.sessions.follow(sessionId, (event) => this.onSessionEvent(followed, event));
    this.followed.set(sessionId, followed);
  }

  private onSessionEvent(followed: FollowedSession, event: AgentEvent): void {
    const bot = this.bot;
    if (!bot) return;
    const answer = () => {
      if (!followed.answer) {
        followed.answer = new StreamedAnswer({
          api: bot.api,
          chatId: followed.chatId,
          ...(this.options.editIntervalMs !== undefined ? { intervalMs: this.options.editIntervalMs } : {}),
          onFailure: (error) => this.logFailure('answer not updated', error),
        });
        followed.answer.startTyping();
      }
      return followed.answer;
    };
    const finish = (content: string | undefined, note?: string) => {
      const current = followed.answer;
      followed.answer = undefined;
      if (!current) return;
      const final = content ?? current.text;
      void current.finish(note ? `${final}${final ? '\n\n' : ''}_${note}_` : final);
    };
    switch (event.type) {
      case 'stream_start':
        answer();
        break;
      case 'stream_delta':
        answer().append(event.delta);
        break;
      case 'tool_started':
        if (!event.is_subagent) answer().setStatus(`⚙ ${event.tool}…`);
        break;
      case 'approval_required':
        // What follows the decision belongs below the approval, where the chat scrolls to, not in an edit above it.
        finish(undefined);
        void this.showApproval(followed.sessionId, followed.chatId, event);
        break;
      case 'approval_resolved':
        void this.resolveApproval(event.call_id, event);
        break;
      case 'stream_end':
        finish(event.content);
        break;
      case 'stream_stopped':
        finish(event.content, event.reason === 'user' ? 'Stopped.' : 'Stopped: Hearth is shutting down.');
        break;
      case 'error':
        finish(undefined);
        void bot.api.sendMessage(followed.chatId, `⚠ ${event.message}`).catch((error: unknown) => this.logFailure('error not shown', error));
        break;
      default:
        break;
    }
  }
}
