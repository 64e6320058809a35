import { api } from './api.js';
import { defaultProfileIn } from './default-profile.js';
import { element, replaceContent } from './dom.js';
import { icon } from './icons.js';
import { heading, load } from './panel-frame.js';
import { describeTiming, formatInZone, timingOf, weekdays } from './schedule-timing.js';

const statusWords = {
  ok: 'succeeded',
  error: 'failed',
  skipped: 'skipped (the previous run was still going)',
  running: 'running',
  queued: 'queued (waiting for a free run slot)',
  stopped: 'stopped before it finished',
};
/** The everyday choices first; a cron expression for the rest. */
const kinds = [
  ['daily', 'Every day at'],
  ['weekdays', 'Weekdays (Mon–Fri) at'],
  ['weekly', 'Every week on'],
  ['every', 'Every N minutes or hours'],
  ['at', 'Once, at'],
  ['cron', 'Custom (cron)'],
];
const units = [
  ['m', 'minutes'],
  ['h', 'hours'],
];
/** The form fields that say when it runs: changing one asks for the next runs again. */
const timingFields = new Set(['time', 'day', 'amount', 'unit', 'at', 'cron', 'timezone']);
/** How long typing must pause before the next runs are asked for. */
const previewDelayMs = 300;

/**
 * The Schedules panel (docs/agent.md, "Schedules, reminders and notifications"; `GET /schedules`): each schedule with when it runs, its next run
 * and last status; pause or resume, run now, delete; and a form that creates one — every day,
 * weekdays or a day of the week at a time, every N minutes or hours, once, or a custom cron — for
 * a profile, previewing its next three runs (`POST /schedules/preview`) while the person types.
 */
export class SchedulesPanel {
  name = 'Schedules';
  #created;
  #kind = 'daily';
  #profiles = [];
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

  /** A notification may be a schedule's run; after a drop, whatever ran meanwhile. */
  onEvent(event) {
    if (event.type === 'notification' || event.type === 'reconnected') this.refresh();
  }

  async refresh() {
    const loaded = await load(this.aside, this.name, () => Promise.all([api.schedules(), api.profiles().catch(() => ({ profiles: [] }))]), () => this.refresh());
    if (!loaded) return;
    const [answer, { profiles }] = loaded;
    this.#profiles = profiles;
    const focused = this.aside.contains(document.activeElement) ? document.activeElement.getAttribute('name') : undefined;
    const form = this.aside.querySelector('form.schedule-form');
    const typed = form ? Object.fromEntries(new FormData(form)) : undefined;
    replaceContent(
      this.aside,
      heading(this.name, () => this.refresh()),
      this.#failure && element('p', { className: 'panel-error', role: 'alert' }, this.#failure),
      answer.schedules.length === 0
        ? element('p', { className: 'muted schedules-empty' }, 'No schedules yet. Create one below, or ask Hearth in a chat: "remind me tomorrow at 9 to call the plumber".')
        : element('ul', { className: 'schedule-list', 'aria-label': 'Schedules' }, answer.schedules.map((schedule) => this.#row(schedule))),
      this.#createdPreview(),
      this.#form(typed),
    );
    if (focused) this.aside.querySelector(`form.schedule-form [name="${focused}"]`)?.focus();
    // The form's defaults (every day at 09:00 here) are a whole timing already: their next runs show before any typing.
    if (this.#preview.state === 'empty') this.#previewSoon(this.aside.querySelector('form.schedule-form'));
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
      kinds.map(([value, label]) => element('option', { value, selected: value === this.#kind }, label)),
    );
    kindSelect.addEventListener('change', () => {
      this.#kind = kindSelect.value;
      const form = kindSelect.form;
      form.querySelector('.schedule-timing').replaceWith(this.#timingInputs());
      this.#previewSoon(form);
    });
    const profileId = typed.profile_id ?? defaultProfileIn(this.#profiles);
    return element(
      'form',
      {
        className: 'schedule-form',
        'aria-label': 'New schedule',
        onsubmit: (event) => this.#create(event),
        oninput: (event) => {
          if (timingFields.has(event.target.name)) this.#previewSoon(event.currentTarget);
        },
      },
      element('h3', {}, 'New schedule'),
      element('label', {}, element('span', {}, 'Name'), element('input', { type: 'text', name: 'name', required: true, maxlength: 200, value: typed.name ?? '' })),
      element('label', {}, element('span', {}, 'Prompt'), element('textarea', { name: 'prompt', required: true, rows: 2 }, typed.prompt ?? '')),
      this.#profiles.length > 0 &&
        element(
          'label',
          {},
          element('span', {}, 'Profile'),
          element(
            'select',
            { name: 'profile_id', 'aria-label': 'Profile', title: 'The profile its runs use' },
            this.#profiles.map((profile) => element('option', { value: profile.id, selected: profile.id === profileId }, profile.name)),
          ),
        ),
      element('label', {}, element('span', {}, 'Repeats'), kindSelect),
      this.#timingInputs(typed),
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

  /** The inputs the chosen kind needs, keeping what was typed. */
  #timingInputs(typed = {}) {
    const labelled = (label, input) => element('label', {}, element('span', {}, label), input);
    const time = () => labelled('Time', element('input', { type: 'time', name: 'time', required: true, 'aria-label': 'Time', value: typed.time ?? '09:00' }));
    const parts = {
      daily: () => [time()],
      weekdays: () => [time()],
      weekly: () => [
        labelled('Day', element('select', { name: 'day', 'aria-label': 'Day' }, weekdays.map(([value, label]) => element('option', { value, selected: value === (typed.day ?? '1') }, label)))),
        time(),
      ],
      every: () => [
        labelled('Every', element('input', { type: 'number', name: 'amount', required: true, min: 1, step: 1, 'aria-label': 'Every how many', value: typed.amount ?? '' })),
        labelled('Unit', element('select', { name: 'unit', 'aria-label': 'Unit' }, units.map(([value, label]) => element('option', { value, selected: value === (typed.unit ?? 'm') }, label)))),
      ],
      at: () => [labelled('At', element('input', { type: 'datetime-local', name: 'at', required: true, 'aria-label': 'Run at (this browser\u2019s time)', value: typed.at ?? '' }))],
      cron: () => [labelled('Cron', element('input', { type: 'text', name: 'cron', required: true, placeholder: '0 9 * * 1-5', 'aria-label': 'Cron expression', value: typed.cron ?? '' }))],
    };
    return element('div', { className: 'schedule-timing', dataset: { kind: this.#kind } }, parts[this.#kind]());
  }

  /** The form's timing and zone as `POST /schedules` and its preview take them; undefined while the timing is incomplete. */
  #when(fields) {
    const timing = timingOf(this.#kind, fields);
    return timing && { timezone: fields.timezone.trim(), ...timing };
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
    section.removeAttribute('aria-busy');
    replaceContent(section, this.#previewContent());
  }

  /** Asks for the next runs once typing pauses; an empty timing shows the hint again at once. */
  #previewSoon(form) {
    clearTimeout(this.#previewTimer);
    const generation = ++this.#previewGeneration;
    const when = this.#when(Object.fromEntries(new FormData(form)));
    if (!when) {
      this.#showPreview({ state: 'empty' });
      return;
    }
    // What is shown is for the timing before this change until the new answer comes.
    const section = form.querySelector('.schedule-next-runs');
    section.dataset.state = 'pending';
    section.setAttribute('aria-busy', 'true');
    this.#previewTimer = setTimeout(async () => {
      let preview;
      try {
        const answer = await api.previewSchedule(when);
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
      const when = this.#when(fields);
      if (!when) throw new Error('say when it runs.');
      const { schedule } = await api.createSchedule({
        name: fields.name.trim(),
        prompt: fields.prompt,
        ...(fields.profile_id && { profile_id: fields.profile_id }),
        ...when,
      });
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
