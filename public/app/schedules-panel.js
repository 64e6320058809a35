import { api } from './api.js';
import { element, replaceContent } from './dom.js';
import { icon } from './icons.js';
import { heading, load } from './panels.js';

const minuteMs = 60_000;
const statusWords = {
  ok: 'succeeded',
  error: 'failed',
  skipped: 'skipped (the previous run was still going)',
  running: 'running',
  queued: 'queued (waiting for a free run slot)',
  stopped: 'stopped before it finished',
};
const timingPlaceholders = { cron: '0 9 * * 1-5', every: '30m, 2h or 1d' };
/** How long typing must pause before the next runs are asked for. */
const previewDelayMs = 300;

/** A duration in words: `every_ms` of 5400000 is "1 h 30 min". */
function describeDuration(milliseconds) {
  const minutes = Math.round(milliseconds / minuteMs);
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const rest = minutes % 60;
  return [days && `${days} d`, hours && `${hours} h`, rest && `${rest} min`].filter(Boolean).join(' ') || `${milliseconds} ms`;
}

/** An instant as the schedule's zone sees it: "Tue, 24 Nov, 09:00". */
export function formatInZone(iso, timezone) {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const options = { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' };
  try {
    return date.toLocaleString(undefined, { ...options, timeZone: timezone });
  } catch {
    return date.toLocaleString(undefined, options);
  }
}

/** When a schedule runs, in words, with its zone. */
function describeTiming(schedule) {
  if (schedule.cron) return [element('code', {}, schedule.cron), ` · ${schedule.timezone}`];
  if (schedule.every_ms) return `every ${describeDuration(schedule.every_ms)}`;
  if (schedule.at) return `once, ${formatInZone(schedule.at, schedule.timezone)} ${schedule.timezone}`;
  return '';
}

/**
 * The Schedules panel (README: Schedules, reminders and notifications; `GET /schedules`): each schedule with when it runs, its next run
 * and last status; pause or resume, run now, delete; and a form that creates one with a cron, an
 * interval or a single time, previewing its next three runs (`POST /schedules/preview`) while the
 * person types.
 */
export class SchedulesPanel {
  #created;
  #kind = 'cron';
  #failure;
  /** What the form's preview shows: `{state: 'empty'}`, `{state: 'shown', nextRuns, timezone}` or `{state: 'refused', message}`. */
  #preview = { state: 'empty' };
  /** Bumped by every change to the timing: an answer to an older request is dropped. */
  #previewGeneration = 0;
  #previewTimer;

  /** `openSession(sessionId)` shows a schedule's session. */
  constructor(aside, { openSession = () => {} } = {}) {
    this.aside = aside;
    this.openSession = openSession;
  }

  async refresh() {
    const answer = await load(this.aside, 'Schedules', () => api.schedules(), () => this.refresh());
    if (!answer) return;
    const focused = this.aside.contains(document.activeElement) ? document.activeElement.getAttribute('name') : undefined;
    const form = this.aside.querySelector('form.schedule-form');
    const typed = form ? Object.fromEntries(new FormData(form)) : undefined;
    replaceContent(
      this.aside,
      heading('Schedules', () => this.refresh()),
      this.#failure && element('p', { className: 'panel-error', role: 'alert' }, this.#failure),
      answer.schedules.length === 0
        ? element('p', { className: 'muted schedules-empty' }, 'No schedules yet. Create one below, or ask Hearth in a chat: "remind me tomorrow at 9 to call the plumber".')
        : element('ul', { className: 'schedule-list', 'aria-label': 'Schedules' }, answer.schedules.map((schedule) => this.#row(schedule))),
      this.#createdPreview(),
      this.#form(typed),
    );
    if (focused) this.aside.querySelector(`form.schedule-form [name="${focused}"]`)?.focus();
  }

  #row(schedule) {
    const lastStatus = schedule.last_status ? statusWords[schedule.last_status] ?? schedule.last_status : 'never run';
    return element(
      'li',
      { dataset: { scheduleId: schedule.id, enabled: String(schedule.enabled) } },
      element(
        'div',
        { className: 'schedule-title' },
        element('span', { className: 'schedule-name' }, schedule.name),
        element('span', { className: 'schedule-state', dataset: { enabled: String(schedule.enabled) } }, schedule.enabled ? 'active' : 'paused'),
      ),
      element('p', { className: 'schedule-when' }, describeTiming(schedule)),
      element(
        'p',
        { className: 'schedule-next' },
        schedule.enabled && schedule.next_run_at ? `Next: ${formatInZone(schedule.next_run_at, schedule.timezone)}` : 'Next: not planned',
      ),
      element(
        'p',
        { className: 'schedule-last', dataset: { status: schedule.last_status ?? 'none' } },
        `Last: ${lastStatus}`,
        schedule.last_run_at && `, ${formatInZone(schedule.last_run_at, schedule.timezone)}`,
      ),
      element(
        'div',
        { className: 'schedule-actions' },
        element(
          'button',
          { type: 'button', className: 'schedule-toggle', onclick: () => this.#change(() => api.updateSchedule(schedule.id, { enabled: !schedule.enabled })) },
          schedule.enabled ? 'Pause' : 'Resume',
        ),
        element('button', { type: 'button', className: 'schedule-run', onclick: () => this.#change(() => api.runSchedule(schedule.id)) }, 'Run now'),
        schedule.session_id && element('button', { type: 'button', className: 'schedule-open', onclick: () => this.openSession(schedule.session_id) }, 'Open session'),
        element(
          'button',
          { type: 'button', className: 'icon-button schedule-delete', 'aria-label': `Delete ${schedule.name}`, title: 'Delete', onclick: () => this.#change(() => api.deleteSchedule(schedule.id)) },
          icon('trash'),
        ),
      ),
    );
  }

  #createdPreview() {
    if (!this.#created) return undefined;
    const schedule = this.#created;
    return element(
      'section',
      { className: 'schedule-preview', dataset: { scheduleId: schedule.id } },
      element('h3', {}, `Created ${schedule.name}: its next runs`),
      schedule.next_runs.length === 0
        ? element('p', { className: 'muted' }, 'None planned.')
        : element('ol', {}, schedule.next_runs.map((iso) => element('li', {}, `${formatInZone(iso, schedule.timezone)} ${schedule.timezone}`))),
    );
  }

  #form(typed = {}) {
    const kindSelect = element(
      'select',
      { name: 'kind', 'aria-label': 'Repeats' },
      [
        ['cron', 'Cron expression'],
        ['every', 'Every interval'],
        ['at', 'Once, at a time'],
      ].map(([value, label]) => element('option', { value, selected: value === this.#kind }, label)),
    );
    kindSelect.addEventListener('change', () => {
      this.#kind = kindSelect.value;
      const form = kindSelect.form;
      form.querySelector('.schedule-timing').replaceWith(this.#timingInput());
      this.#previewSoon(form);
    });
    return element(
      'form',
      {
        className: 'schedule-form',
        'aria-label': 'New schedule',
        onsubmit: (event) => this.#create(event),
        oninput: (event) => {
          if (event.target.name === 'timing' || event.target.name === 'timezone') this.#previewSoon(event.currentTarget);
        },
      },
      element('h3', {}, 'New schedule'),
      element('label', {}, element('span', {}, 'Name'), element('input', { type: 'text', name: 'name', required: true, maxlength: 200, value: typed.name ?? '' })),
      element('label', {}, element('span', {}, 'Prompt'), element('textarea', { name: 'prompt', required: true, rows: 2 }, typed.prompt ?? '')),
      element('label', {}, element('span', {}, 'Repeats'), kindSelect),
      this.#timingInput(typed.timing),
      element(
        'label',
        {},
        element('span', {}, 'Time zone'),
        element('input', { type: 'text', name: 'timezone', value: typed.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone, 'aria-label': 'Time zone' }),
      ),
      element('section', { className: 'schedule-next-runs', 'aria-label': 'Next runs', 'aria-live': 'polite', dataset: { state: this.#preview.state } }, this.#previewContent()),
      element('button', { type: 'submit', className: 'primary' }, 'Create schedule'),
    );
  }

  #timingInput(value = '') {
    const input =
      this.#kind === 'at'
        ? element('input', { type: 'datetime-local', name: 'timing', required: true, 'aria-label': 'Run at (this browser\u2019s time)', value })
        : element('input', { type: 'text', name: 'timing', required: true, placeholder: timingPlaceholders[this.#kind], 'aria-label': this.#kind === 'cron' ? 'Cron expression' : 'Interval', value });
    return element('label', { className: 'schedule-timing' }, element('span', {}, this.#kind === 'at' ? 'At' : this.#kind === 'cron' ? 'Cron' : 'Every'), input);
  }

  /** The form's timing and zone as `POST /schedules` and its preview take them. */
  #when(fields) {
    const timing = this.#kind === 'at' ? { at: new Date(fields.timing).toISOString() } : { [this.#kind]: fields.timing.trim() };
    return { timezone: fields.timezone.trim(), ...timing };
  }

  #previewContent() {
    const preview = this.#preview;
    if (preview.state === 'refused') return element('p', { className: 'panel-error schedule-preview-error' }, preview.message);
    if (preview.state === 'empty') return element('p', { className: 'muted schedule-hint' }, 'Its next three runs show here as you type when it runs.');
    return [
      element('h4', {}, 'Next runs'),
      preview.nextRuns.length === 0
        ? element('p', { className: 'muted' }, 'None planned.')
        : element('ol', {}, preview.nextRuns.map((iso) => element('li', { dataset: { at: iso } }, `${formatInZone(iso, preview.timezone)} ${preview.timezone}`))),
    ];
  }

  #showPreview(preview) {
    this.#preview = preview;
    const section = this.aside.querySelector('form.schedule-form .schedule-next-runs');
    if (!section) return;
    section.dataset.state = preview.state;
    replaceContent(section, this.#previewContent());
  }

  /** Asks for the next runs once typing pauses; an empty timing shows the hint again at once. */
  #previewSoon(form) {
    clearTimeout(this.#previewTimer);
    const generation = ++this.#previewGeneration;
    const fields = Object.fromEntries(new FormData(form));
    if ((fields.timing ?? '').trim() === '') {
      this.#showPreview({ state: 'empty' });
      return;
    }
    this.#previewTimer = setTimeout(async () => {
      let preview;
      try {
        const answer = await api.previewSchedule(this.#when(fields));
        preview = { state: 'shown', nextRuns: answer.next_runs, timezone: answer.timezone };
      } catch (error) {
        preview = { state: 'refused', message: error.message };
      }
      if (generation === this.#previewGeneration) this.#showPreview(preview);
    }, previewDelayMs);
  }

  #resetPreview() {
    clearTimeout(this.#previewTimer);
    this.#previewGeneration += 1;
    this.#preview = { state: 'empty' };
  }

  async #create(event) {
    event.preventDefault();
    const fields = Object.fromEntries(new FormData(event.target));
    try {
      const { schedule } = await api.createSchedule({ name: fields.name.trim(), prompt: fields.prompt, ...this.#when(fields) });
      this.#created = schedule;
      this.#failure = undefined;
      this.#resetPreview();
      event.target.reset();
      this.aside.querySelector('form.schedule-form')?.remove();
    } catch (error) {
      this.#failure = `Could not create the schedule: ${error.message}`;
    }
    await this.refresh();
  }

  async #change(request) {
    try {
      await request();
      this.#failure = undefined;
    } catch (error) {
      this.#failure = error.message;
    }
    await this.refresh();
  }
}
