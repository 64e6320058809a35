import { element } from './dom.js';

/**
 * What a conversation without messages shows: one card a profile, with its description and its
 * example prompts. `onExample(profileId, prompt)` runs when an example is clicked. `offer`, when
 * given, is the offer to pull the model the conversation lacks (PullOffer's node), shown first.
 */
export function emptyState(profiles, onExample, offer) {
  const cards = profiles.map((profile) =>
    element(
      'section',
      { className: 'profile-card', dataset: { profileId: profile.id }, 'aria-label': profile.name },
      element('h2', {}, profile.name),
      profile.description && element('p', { className: 'profile-description' }, profile.description),
      element(
        'ul',
        { className: 'profile-examples', 'aria-label': `Examples for ${profile.name}` },
        (profile.examples ?? []).map((prompt) =>
          element('li', {}, element('button', { type: 'button', className: 'example-prompt', onclick: () => onExample(profile.id, prompt) }, prompt)),
        ),
      ),
    ),
  );
  return element(
    'div',
    { className: 'empty-state' },
    offer,
    element('p', { className: 'empty-state-lead' }, 'Start a conversation: type below, or try an example of a profile.'),
    cards.length > 0 && element('div', { className: 'profile-cards' }, cards),
  );
}
