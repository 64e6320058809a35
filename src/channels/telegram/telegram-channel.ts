import { Bot, GrammyError } from 'grammy';
import type { ApprovalDetails, ApprovalResolution } from '../../agent/approval-gate.ts';
import type { Audience } from '../../events/hearth-events.ts';
import type { ChannelPeople } from '../../household/channel-links.ts';
import type { Logger } from '../../logger.ts';
import type { Person } from '../../people/person.ts';
import type { Channel, ChannelApproval, ChannelContext, ChannelNotification } from '../channel.ts';
import { allowedUsersOnly, parseAllowedUsers, StrangerLog } from './allowed-users.ts';
import { approvalButtons } from './approval-buttons.ts';
import { ApprovalCards } from './approval-cards.ts';
import { unknownButtons } from './button-press.ts';
import { commands, telegramCommands } from './commands.ts';
import { chatPeople, type TelegramContext } from './chat-people.ts';
import { botDownloads } from './downloads.ts';
import { LibraryOffers } from './library-offers.ts';
import { messages } from './messages.ts';
import { notificationHtml } from './notification-message.ts';
import { describeTelegramFailure } from './redact-token.ts';
import { SessionListings, sessionButtons } from './session-buttons.ts';
import { SessionMirror } from './session-mirror.ts';
import { SpokenAnswers } from './spoken-answers.ts';
import type { TelegramSessions } from './telegram-port.ts';
import { sessionServiceSessions } from './telegram-sessions.ts';
import { defaultVoiceLimits, type VoiceLimits } from './voice-notes.ts';

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
  sessionsFor?: (service: ChannelContext['sessions']) => TelegramSessions;
  /** Edit interval of streamed answers; about a second. */
  editIntervalMs?: number;
  /** Long-poll timeout of getUpdates, in seconds. */
  pollTimeoutSeconds?: number;
  /** The first wait after a failure; it doubles up to `longestRetryMs`. */
  firstRetryMs?: number;
  longestRetryMs?: number;
  /** The longest and largest voice note or audio file transcribed; 120 s and 20 MB (what bots may fetch) by default. */
  voiceLimits?: VoiceLimits;
}

/** What exists once the channel has a bot to talk through. */
interface Running {
  bot: Bot<TelegramContext>;
  mirror: SessionMirror;
  cards: ApprovalCards;
  spoken: SpokenAnswers;
  offers: LibraryOffers | undefined;
}

/**
 * The Telegram channel (docs/integrations.md, "Telegram"): long polling with grammY (`deleteWebhook` at start, no
 * inbound port), one session per private chat of an allowed user, answers streamed by edits,
 * approvals as buttons, commands. Each chat acts as the person it is linked to (`/start <code>`;
 * docs/people.md, *Telegram in a household*) and reaches only their sessions; approvals go to the
 * chats of those who may decide them, notifications to their person's. Voice notes are transcribed
 * through Hearth's speech and answered in writing and aloud (messages.ts, spoken-answers.ts). A bad token or an outage is a `failed` status with the reason
 * and a retry with backoff, never a crash; the token is in no log or status. What it does with an
 * update is in its composers (commands, session and approval buttons, messages); this class keeps
 * the connection, the status and what Hearth tells every channel.
 */
export class TelegramChannel implements Channel {
  readonly id = 'telegram';
  private running: Running | undefined;
  private sessions!: TelegramSessions;
  private people!: ChannelPeople;
  private logger!: Logger;
  private reportStatus: ChannelContext['reportStatus'] = () => undefined;
  private allowed: ReadonlySet<number> = new Set();
  private readonly strangers = new StrangerLog((stranger) =>
    this.logger.warn(
      { telegramUserId: stranger.id, username: stranger.username },
      `Telegram: ignoring messages from user ${stranger.id}, who is not in TELEGRAM_ALLOWED_USERS (add the id there to let them in)`,
    ),
  );
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
    this.people = context.people;
    if (this.options.token === '') return this.report({ state: 'not_configured', reason: 'TELEGRAM_BOT_TOKEN is not set.' });
    const allowed = parseAllowedUsers(this.options.allowedUsers);
    if (!allowed.ok) return this.report({ state: 'failed', reason: allowed.reason });
    this.allowed = allowed.userIds;
    const apiRoot = this.options.apiRoot.replace(/\/+$/, '');
    const bot = new Bot<TelegramContext>(this.options.token, { client: { apiRoot } });
    const logFailure = (what: string, error: unknown) => this.logFailure(what, error);
    const stillReaches = async (sessionId: string, chatId: number) => {
      const chat = await this.people.whoIs(String(chatId));
      return chat !== undefined && (await this.sessions.existingSessionForChat(chatId, chat)) === sessionId;
    };
    const spoken = new SpokenAnswers({ api: bot.api, speech: context.speech, onFailure: logFailure });
    const mirror = new SessionMirror({ api: bot.api, sessions: this.sessions, editIntervalMs: this.options.editIntervalMs, onFailure: logFailure, stillReaches, spoken });
    const cards = new ApprovalCards(bot.api, logFailure);
    const download = botDownloads(bot.api, apiRoot, this.options.token);
    const downloadFailed = (error: unknown) => {
      logFailure('file not downloaded', error);
      return describeTelegramFailure(error, this.options.token);
    };
    const offers = context.documents && new LibraryOffers({ api: bot.api, documents: context.documents, download, downloadFailed, logger: context.logger });
    this.running = { bot, mirror, cards, spoken, offers };
    const { sessions, logger } = this;
    const listings = new SessionListings();
    const follow = (sessionId: string, chatId: number) => this.follow(sessionId, chatId);
    bot.use(
      allowedUsersOnly(this.allowed, this.strangers),
      chatPeople(this.people),
      commands({ sessions, follow, listings }),
      sessionButtons({ sessions, listings, follow, logger }),
      approvalButtons({ cards, sessions, logger }),
      ...(offers ? [offers.composer()] : []),
      unknownButtons(logger),
      messages({
        sessions,
        follow,
        download,
        downloadFailed,
        speech: context.speech,
        spoken,
        voiceLimits: this.options.voiceLimits ?? defaultVoiceLimits,
      }),
    );
    bot.catch((error) => logFailure(`update ${error.ctx.update.update_id} failed`, error.error));
    this.loop ??= this.run(bot);
  }

  async stop(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.wakeRetry?.();
    this.polling?.abort();
    this.running?.mirror.close();
    this.running?.spoken.close();
    this.running?.offers?.close();
    await this.loop;
    await this.confirmHandled();
  }

  /** A notification to the private chat of each allowed user whose person it is for. */
  async deliverNotification(notification: ChannelNotification, audience?: Audience): Promise<void> {
    const bot = this.running?.bot;
    if (!bot || this.currentStatus.state !== 'connected') return;
    const html = notificationHtml(notification);
    for (const { chatId } of await this.chatsOf(audience ?? (() => true))) {
      await bot.api.sendMessage(chatId, html, { parse_mode: 'HTML' }).catch((error: unknown) => this.logFailure('notification not delivered', error));
    }
  }

  /**
   * A call waits in some session: a card with buttons goes at once to the linked chat of each person
   * who may decide it, naming the asker when it is someone else; the chat the session is mirrored
   * into (or is, once it is) gets the card below the answer so far, without buttons when its person
   * may not decide (a child's run: it says who may).
   */
  async presentApproval(approval: ChannelApproval, details: ApprovalDetails): Promise<void> {
    if (!this.running) return;
    const { cards } = this.running;
    cards.add(approval.session_id, { ...approval, ...details });
    const deciders = new Set(approval.deciders.map((person) => person.id));
    const askedBy = approval.asked_by;
    // An unlinked chat (a household of one) gets the cards of the session it mirrors only, as before people.
    const chats = await this.chatsOf((person) => deciders.has(person.id), { linkedOnly: true });
    await this.showWaitingCalls(approval.session_id);
    await Promise.all(
      chats
        .filter(({ chatId }) => this.running?.mirror.chatOf(approval.session_id) !== chatId)
        .map(({ chatId, person }) => cards.show(approval.call_id, chatId, { ...(askedBy && askedBy.id !== person.id && { askedBy: askedBy.name }) })),
    );
  }

  async approvalResolved(approval: ChannelApproval, resolution: ApprovalResolution): Promise<void> {
    await this.running?.cards.resolve(approval.call_id, resolution);
  }

  /** Mirrors a session the chat now uses into it, with the calls that wait in it. */
  private follow(sessionId: string, chatId: number): void {
    if (this.running?.mirror.follow(sessionId, chatId)) void this.showWaitingCalls(sessionId);
  }

  /** The session's waiting calls without a card in its chat, shown there below the answer written so far. */
  private async showWaitingCalls(sessionId: string): Promise<void> {
    if (!this.running) return;
    const { mirror, cards } = this.running;
    const chatId = mirror.chatOf(sessionId);
    if (chatId === undefined || cards.unshownIn(sessionId, chatId).length === 0) return;
    const chat = await this.people.whoIs(String(chatId));
    const callIds = cards.unshownIn(sessionId, chatId);
    if (!chat || callIds.length === 0) return;
    mirror.breakAnswer(sessionId);
    await Promise.all(
      callIds.map((callId) => {
        const decides = cards.viewOf(callId)?.deciders?.some((person) => person.id === chat.person.id) ?? false;
        return cards.show(callId, chatId, { decides });
      }),
    );
  }

  /**
   * The allowed chats whose person `admits`: the linked ones, and in a household of one also the
   * unlinked (each acts as the owner) unless `linkedOnly`. A chat linked but no longer in
   * TELEGRAM_ALLOWED_USERS gets nothing.
   */
  private async chatsOf(admits: (person: Person) => boolean | Promise<boolean>, { linkedOnly = false } = {}): Promise<Array<{ chatId: number; person: Person }>> {
    const chats: Array<{ chatId: number; person: Person }> = [];
    for (const chatId of this.allowed) {
      const chat = await this.people.whoIs(String(chatId));
      if (chat && (chat.linked || !linkedOnly) && (await admits(chat.person))) chats.push({ chatId, person: chat.person });
    }
    return chats;
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
  private async run(bot: Bot<TelegramContext>): Promise<void> {
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
          // handleUpdate rejects with a BotError when a handler throws; the handler bot.catch set logs it.
          await bot.handleUpdate(update).catch(bot.errorHandler);
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
      const chat = await this.people.whoIs(String(userId));
      const sessionId = chat && (await this.sessions.existingSessionForChat(userId, chat));
      if (sessionId !== undefined && !this.closed) this.follow(sessionId, userId);
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

  /** Tells Telegram which updates were handled, so that the next start does not get them again (as grammY's own stop does). */
  private async confirmHandled(): Promise<void> {
    const bot = this.running?.bot;
    if (!bot || this.offset === 0 || this.currentStatus.state !== 'connected') return;
    const signal = AbortSignal.timeout(2_000) as unknown as Parameters<Bot['api']['getUpdates']>[1];
    await bot.api.getUpdates({ offset: this.offset, limit: 1, timeout: 0 }, signal).catch((error: unknown) => this.logFailure('handled updates not confirmed', error));
  }
}
