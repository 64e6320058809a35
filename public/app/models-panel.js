import { api } from './api.js';
import { element, replaceContent } from './dom.js';
import { modelBytes } from './model-sizes.js';
import { heading, load } from './panel-frame.js';

const capabilityNames = ['tools', 'thinking', 'vision'];
const fitWords = { fits: 'fits in memory', tight: 'tight fit in memory', too_big: 'too big for this machine’s memory' };
const toolsRefusal = 'cannot call tools: not offered to profiles with tools';

/**
 * The default backend's models (GET /models): each with its size, family, parameters,
 * quantization, context length, what it can do (tools, thinking, vision), whether it is loaded now
 * and until when, and how its size fits the machine's memory. The owner (once people exist) pulls
 * any name, deletes a model (asking first, naming the profiles that use it), and makes one the
 * default or a profile's model. An OpenAI-compatible backend only lists its models.
 */
export class ModelsPanel {
  name = 'Models';
  #reads = 0;

  /** `pulls` is the page's ModelPulls; `mayManage()` whether this person may pull, delete and choose models. */
  constructor(aside, { pulls, mayManage = () => true }) {
    this.aside = aside;
    this.pulls = pulls;
    this.mayManage = mayManage;
    this.dialog = element(
      'dialog',
      { className: 'model-delete-dialog', 'aria-labelledby': 'model-delete-text' },
      element(
        'form',
        { method: 'dialog' },
        element('p', { id: 'model-delete-text' }),
        element('div', { className: 'dialog-buttons' }, element('button', { value: 'cancel' }, 'Cancel'), element('button', { value: 'delete', className: 'danger' }, 'Delete')),
      ),
    );
    document.body.append(this.dialog);
  }

  onEvent(event) {
    if (event.type === 'models_changed' || event.type === 'tools_changed' || event.type === 'reconnected') this.refresh();
  }

  async refresh() {
    const read = ++this.#reads;
    const answer = await load(this.aside, this.name, () => Promise.all([api.models(), api.profiles()]), () => this.refresh());
    if (!answer || read !== this.#reads) return;
    const [listing, { profiles }] = answer;
    const ollama = listing.backend === 'ollama';
    const manage = this.mayManage();
    replaceContent(
      this.aside,
      heading(this.name, () => this.refresh()),
      memoryLine(listing),
      !ollama && element('p', { className: 'muted' }, 'An OpenAI-compatible backend: these are the models it lists. Pulling and deleting models is for Ollama.'),
      ollama && manage && this.#pullForm(),
      element(
        'ul',
        { className: 'model-list', 'aria-label': 'Local models' },
        listing.models.map((model) => this.#model(model, { listing, profiles, ollama, manage })),
      ),
      listing.models.length === 0 && element('p', { className: 'muted' }, ollama ? 'No models on this machine yet: pull one above.' : 'The backend lists no models.'),
    );
  }

  #pullForm() {
    const input = element('input', {
      type: 'text',
      name: 'model',
      required: true,
      maxlength: 200,
      autocomplete: 'off',
      spellcheck: 'false',
      placeholder: 'qwen3:8b, library/name:tag, hf.co/user/repo:quant',
      'aria-label': 'Model to pull',
    });
    const form = element(
      'form',
      { className: 'model-pull-form', 'aria-label': 'Pull a model' },
      element('label', { className: 'model-pull-label' }, 'Pull a model by name', input),
      element('button', { type: 'submit', className: 'primary' }, 'Pull'),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const name = input.value.trim();
      if (!name) return;
      input.value = '';
      void this.pulls.start(name);
    });
    return form;
  }

  #model(model, { listing, profiles, ollama, manage }) {
    const isDefault = model.name === listing.default_model || model.used_by?.includes('default');
    const meta = [
      model.size !== undefined && modelBytes(model.size),
      model.family,
      model.parameters && `${model.parameters} parameters`,
      model.quantization,
      model.context_length && `${model.context_length.toLocaleString('en')} tokens of context`,
    ].filter(Boolean);
    const problem = element('p', { className: 'panel-error', role: 'alert', hidden: true });
    const item = element(
      'li',
      { dataset: { model: model.name, ...(model.fit && { fit: model.fit }) } },
      element('div', { className: 'model-title' }, element('code', {}, model.name), isDefault && element('span', { className: 'model-default' }, 'default')),
      meta.length > 0 && element('div', { className: 'model-meta muted' }, meta.join(' · ')),
      capabilityMarks(model.capabilities),
      model.capabilities?.tools === false && element('p', { className: 'model-refusal', dataset: { role: 'tools-refusal' } }, toolsRefusal),
      fitLine(model, listing.memory),
      loadedLine(model.loaded),
      profileUsers(model, profiles).length > 0 && element('div', { className: 'model-meta muted', dataset: { role: 'used-by' } }, `Used by ${profileUsers(model, profiles).join(', ')}`),
      manage && this.#actions(model, { isDefault, profiles, ollama, problem }),
      problem,
    );
    return item;
  }

  #actions(model, { isDefault, profiles, ollama, problem }) {
    const noTools = model.capabilities?.tools === false;
    const profileSelect = element(
      'select',
      { 'aria-label': `Make ${model.name} a profile’s model` },
      element('option', { value: '' }, 'Use for profile…'),
      profiles.map((profile) => {
        const needsTools = noTools && (profile.enabled_tools?.length ?? 0) > 0;
        return element(
          'option',
          { value: profile.id, disabled: needsTools || profile.model === model.name },
          `${profile.name}${needsTools ? ' (needs tools)' : profile.model === model.name ? ' (uses it)' : ''}`,
        );
      }),
    );
    profileSelect.addEventListener('change', () => {
      const profileId = profileSelect.value;
      if (profileId) void this.#run(problem, profileSelect, () => api.setProfileModel(profileId, model.name));
    });
    return element(
      'div',
      { className: 'model-actions' },
      element(
        'button',
        { type: 'button', disabled: isDefault, onclick: (event) => this.#run(problem, event.currentTarget, () => api.setDefaultModel(model.name)) },
        'Set as default',
        element('span', { className: 'visually-hidden' }, ` (${model.name})`),
      ),
      profileSelect,
      ollama && element('button', { type: 'button', className: 'danger', 'aria-label': `Delete ${model.name}`, onclick: (event) => this.#confirmDelete(model, profiles, problem, event.currentTarget) }, 'Delete'),
    );
  }

  async #confirmDelete(model, profiles, problem, button) {
    const users = profileUsers(model, profiles);
    const isDefault = model.used_by?.includes('default');
    this.dialog.querySelector('p').textContent = [
      `Delete ${model.name} from this machine?`,
      isDefault && 'It is the default model.',
      users.length > 0 ? `${users.join(', ')} ${users.length === 1 ? 'uses' : 'use'} it, and cannot answer until another model is set or it is pulled again.` : !isDefault && 'No profile uses it.',
    ]
      .filter(Boolean)
      .join(' ');
    this.dialog.returnValue = '';
    this.dialog.showModal();
    this.dialog.querySelector('button[value="cancel"]').focus();
    await new Promise((resolve) => this.dialog.addEventListener('close', resolve, { once: true }));
    if (this.dialog.returnValue === 'delete') await this.#run(problem, button, () => api.deleteModel(model.name));
  }

  /** One change of a model; the list is read again after it, and a refusal is shown under the model. */
  async #run(problem, control, change) {
    control.disabled = true;
    try {
      await change();
    } catch (error) {
      problem.textContent = error.message;
      problem.hidden = false;
      control.disabled = false;
      return;
    }
    await this.refresh();
  }
}

function memoryLine({ memory, gpu }) {
  if (!memory) return false;
  return element(
    'p',
    { className: 'model-memory', dataset: { role: 'machine-memory' } },
    `This machine: ${modelBytes(memory.total)} memory, ${modelBytes(memory.available)} free`,
    gpu && `; ${modelBytes(gpu.used)} of GPU memory in use`,
    '.',
  );
}

function capabilityMarks(capabilities = {}) {
  const known = capabilityNames.filter((name) => typeof capabilities[name] === 'boolean');
  if (known.length === 0) return element('div', { className: 'model-capabilities muted' }, 'What it can do is not known');
  return element(
    'ul',
    { className: 'model-capabilities', 'aria-label': 'Capabilities' },
    known.map((name) =>
      element(
        'li',
        { className: 'capability', dataset: { capability: name, supported: String(capabilities[name]) } },
        capabilities[name] ? `✓ ${name}` : `✗ no ${name}`,
      ),
    ),
  );
}

function fitLine(model, memory) {
  if (!model.fit) return false;
  return element(
    'div',
    { className: 'model-fit', dataset: { role: 'fit' } },
    `${fitWords[model.fit] ?? model.fit}${memory && model.size !== undefined ? ` (${modelBytes(model.size)} of ${modelBytes(memory.total)})` : ''}`,
  );
}

function loadedLine(loaded) {
  if (!loaded) return false;
  const where = loaded.size_vram <= 0 ? 'in RAM' : loaded.size_vram >= loaded.size ? 'in VRAM' : `${modelBytes(loaded.size_vram)} in VRAM, the rest in RAM`;
  const until = loaded.expires_at ? new Date(loaded.expires_at) : undefined;
  const untilText = until && !Number.isNaN(until.getTime()) ? ` until ${until.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })}` : '';
  return element('div', { className: 'model-loaded', dataset: { role: 'loaded' } }, `Loaded now, ${modelBytes(loaded.size)} ${where}${untilText}`);
}

/** The names of the profiles whose model it is (`used_by` also says "default" of the default model, which its badge shows). */
function profileUsers(model, profiles) {
  return (model.used_by ?? []).filter((id) => id !== 'default').map((id) => profiles.find((profile) => profile.id === id)?.name ?? id);
}
