import { AccountSection, copyField } from './account-section.js';
import { api } from './api.js';
import { element, replaceContent } from './dom.js';
import { failure, heading, load } from './panel-frame.js';

const roles = ['owner', 'adult', 'child', 'guest'];
const roleHints = {
  owner: 'everything, people included',
  adult: 'their own sessions and memory, approves their own asks',
  child: 'the profiles granted to children; adults decide their asks',
  guest: 'a kiosk: chosen profiles, no memory, sessions that expire',
};

/**
 * The owner's People panel (docs/people.md): who lives here and their roles, inviting someone
 * (a one-time link to copy), changing a role, setting a new passphrase, removing someone (the
 * dialog asks what becomes of their sessions). The owner's own API tokens and Telegram code are
 * here too, for a one-person Hearth that shows no account menu.
 */
export class PeoplePanel {
  name = 'People';
  #invitation;
  #resetting;
  #account;
  #count;

  /** `me()` gives GET /me's answer; `onChanged()` runs after the household changed (its size decides what the page shows). */
  constructor(aside, { me, dialog, onChanged = () => {} }) {
    this.aside = aside;
    this.me = me;
    this.dialog = dialog;
    this.onChanged = onChanged;
  }

  async refresh() {
    const people = await load(this.aside, this.name, () => api.people(), () => this.refresh());
    if (!people) return;
    // Someone joined or left since: the page's account menu and sharing follow.
    const changed = this.#count !== undefined && this.#count !== people.length;
    this.#count = people.length;
    if (changed) await this.onChanged();
    const me = this.me();
    if (this.#account?.me !== me) this.#account = new AccountSection(me);
    replaceContent(
      this.aside,
      heading(this.name, () => this.refresh()),
      people.length === 1 && element('p', { className: 'muted' }, 'Just you so far. Invite someone and each person gets their own sessions and memory; from then on everyone signs in, you too.'),
      element('ul', { className: 'people-list' }, people.map((person) => this.#person(person, me))),
      this.#inviteSection(me),
      element('section', { 'aria-label': 'Your account' }, element('h3', {}, 'Your account'), this.#account.node),
    );
    void this.#account.refresh();
  }

  #person(person, me) {
    const self = person.id === me.id;
    const roleSelect = element(
      'select',
      { 'aria-label': `Role of ${person.name}`, disabled: self },
      roles.map((role) => element('option', { value: role, selected: role === person.role }, role)),
    );
    roleSelect.addEventListener('change', () => this.#run(roleSelect, () => api.updatePerson(person.id, { role: roleSelect.value })));
    const item = element(
      'li',
      { dataset: { personId: person.id, role: person.role } },
      element('div', { className: 'person-title' }, element('strong', {}, person.name), self && element('span', { className: 'muted' }, ' (you)'), roleSelect),
      element('p', { className: 'muted person-hint' }, roleHints[person.role] ?? ''),
      !self &&
        element(
          'div',
          { className: 'person-actions' },
          element('button', { type: 'button', onclick: () => ((this.#resetting = person.id), this.refresh()) }, 'New passphrase'),
          element('button', { type: 'button', className: 'danger', 'aria-label': `Remove ${person.name}`, onclick: () => this.#confirmRemove(person) }, 'Remove'),
        ),
    );
    if (this.#resetting === person.id) item.append(this.#resetForm(person));
    return item;
  }

  #resetForm(person) {
    const input = element('input', { type: 'password', 'aria-label': `New passphrase for ${person.name}`, autocomplete: 'new-password', minlength: 8, maxlength: 1024, required: true });
    queueMicrotask(() => input.focus());
    const save = (event) => {
      event.preventDefault();
      this.#resetting = undefined;
      return this.#run(input, () => api.updatePerson(person.id, { passphrase: input.value }));
    };
    return element(
      'form',
      { className: 'reset-form', onsubmit: save },
      input,
      element('button', { type: 'submit', className: 'primary' }, 'Set'),
      element('button', { type: 'button', onclick: () => ((this.#resetting = undefined), this.refresh()) }, 'Cancel'),
    );
  }

  #inviteSection(me) {
    // Once someone joins, loopback alone no longer signs the owner in: the owner chooses a passphrase first.
    if (!me.has_passphrase && me.via !== 'auth_token') return this.#passphraseFirst();
    const role = element('select', { 'aria-label': 'Role of the invited person' }, roles.filter((each) => each !== 'owner').concat('owner').map((each) => element('option', { value: each }, each)));
    const invite = async (event) => {
      event.preventDefault();
      try {
        this.#invitation = await api.invite(role.value);
      } catch (error) {
        event.target.append(failure(error));
        return;
      }
      await this.refresh();
    };
    const invitation = this.#invitation;
    return element(
      'section',
      { 'aria-label': 'Invite' },
      element('h3', {}, 'Invite someone'),
      element('form', { className: 'invite-form', onsubmit: invite }, element('label', {}, 'As ', role), element('button', { type: 'submit', className: 'primary' }, 'Invite')),
      invitation &&
        element(
          'div',
          { className: 'invitation', dataset: { role: 'invitation' } },
          element('p', {}, `Send this link to the person you invite; it works once, until ${new Date(invitation.expires_at).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' })}.`),
          copyField('Invitation link', invitation.url),
        ),
    );
  }

  #passphraseFirst() {
    // The owner a Hearth starts with is called "Owner": here they choose the name they will sign in with too.
    const name = element('input', { type: 'text', 'aria-label': 'Your name', autocomplete: 'username', maxlength: 100, required: true, value: this.me().name });
    const input = element('input', { type: 'password', 'aria-label': 'Your passphrase', autocomplete: 'new-password', minlength: 8, maxlength: 1024, required: true });
    const save = async (event) => {
      event.preventDefault();
      const chosen = name.value.trim();
      try {
        await api.updateMe({ ...(chosen !== this.me().name && { name: chosen }), passphrase: input.value });
      } catch (error) {
        event.target.append(failure(error));
        return;
      }
      await this.onChanged();
      await this.refresh();
    };
    return element(
      'section',
      { 'aria-label': 'Invite' },
      element('h3', {}, 'Invite someone'),
      element('p', {}, 'Choose your name and passphrase first: once someone joins, you sign in with them.'),
      element('form', { className: 'reset-form', onsubmit: save }, name, input, element('button', { type: 'submit', className: 'primary' }, 'Save passphrase')),
    );
  }

  #confirmRemove(person) {
    this.dialog.querySelector('p').textContent = `Remove ${person.name} from this Hearth? Their memory and schedules go with them. What becomes of their sessions?`;
    this.dialog.returnValue = '';
    this.dialog.addEventListener(
      'close',
      () => {
        const fate = this.dialog.returnValue;
        if (fate === 'delete' || fate === 'give_to_owner') void this.#run(undefined, () => api.removePerson(person.id, fate));
      },
      { once: true },
    );
    this.dialog.showModal();
  }

  /** A change to the household; the panel is drawn again after it, or shows why it failed. */
  async #run(control, change) {
    try {
      await change();
    } catch (error) {
      (control?.closest('li') ?? this.aside).append(failure(error));
      return;
    }
    await this.onChanged();
    await this.refresh();
  }
}
