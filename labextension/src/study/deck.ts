/**
 * The Memory Deck: the course's terms as flash cards, one at a time, scheduled by the
 * server (FSRS, `POST study/review`). Term first; a click or Space shows the definition;
 * 1-4 (or the buttons) rate it Again/Hard/Good/Easy. Cards due again come first, then new
 * terms in course order. Text nodes only; the card keeps one size on both faces, so
 * flipping moves nothing.
 *
 * Loaded lazily (`import('./study/deck')` in index.ts): the panel and the course tab do
 * not pay for it until the deck opens.
 *
 * The setting `deckDefinitionFirst` turns the cards round (the definition first, the term on
 * flip). A row of buttons exports the learner's progress as a file (`GET study/export`),
 * imports one (`POST study/import`, after a confirmation: it replaces all progress) and resets
 * it (`POST study/reset`, after a confirmation).
 *
 * For screen readers: the card's face shown (after a flip, a rating or a load), the counts,
 * the session's score and what export, import and reset did are live regions.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { el } from '../dom';
import { ICard, IDeck, ITerm, Rating, StudyApi } from './api';
import { metParts } from './met';
import { cardFaces, deckCounts, studyOrder } from './order';

export const RATINGS: { rating: Rating; label: string }[] = [
  { rating: 1, label: 'Again' },
  { rating: 2, label: 'Hard' },
  { rating: 3, label: 'Good' },
  { rating: 4, label: 'Easy' }
];

/** Opens a course section (in the course tab). */
export type SectionOpener = (moduleId: string, sectionId: string) => void;

export class MemoryDeck extends Widget {
  private _terms: ITerm[] = [];
  private _cards = new Map<string, ICard>();
  private _queue: ITerm[] = [];
  private _flipped = false;
  private _busy = false;
  private _rated = 0;
  private _goodOrEasy = 0;
  private readonly _counts = el('p', {
    className: 'jp-tfcoach-deck-counts',
    attrs: { 'aria-live': 'polite' }
  });
  private readonly _session = el('p', {
    className: 'jp-tfcoach-deck-session',
    attrs: { 'aria-live': 'polite' }
  });
  /** The face just shown, told to screen readers (the card itself is a button: its
   * contents are not read out when they change). */
  private readonly _shown = el('p', {
    className: 'jp-tfcoach-sr-only jp-tfcoach-deck-shown',
    attrs: { 'aria-live': 'polite' }
  });
  private readonly _card = el('div', {
    className: 'jp-tfcoach-deck-card',
    attrs: { role: 'button', tabindex: '0', 'aria-keyshortcuts': 'Space' }
  });
  /** Why the card is due: where the coach met its pitfall in the learner's code. */
  private readonly _met = el('p', { className: 'jp-tfcoach-deck-met' });
  private readonly _section = el(
    'button',
    { className: 'jp-tfcoach-deck-section jp-tfcoach-linkbutton', attrs: { type: 'button' } },
    'Read its course section'
  );
  private readonly _ratings: HTMLButtonElement[];
  /** What export, import and reset last did (or why they could not). */
  private readonly _progressStatus = el('p', {
    className: 'jp-tfcoach-deck-progress-status',
    attrs: { 'aria-live': 'polite' }
  });
  private readonly _importInput = el('input', {
    className: 'jp-tfcoach-deck-import-file',
    attrs: { type: 'file', accept: '.json,application/json', 'aria-label': 'Import progress' }
  });

  constructor(
    private readonly _api: StudyApi,
    private readonly _openSection: SectionOpener,
    private readonly _moduleId: string | null = null,
    private readonly _definitionFirst: () => boolean = () => false
  ) {
    super();
    this.addClass('jp-tfcoach-deck');
    this.id = `tfcoach-memory-deck${_moduleId ? '-' + _moduleId : ''}`;
    this.title.label = _moduleId ? `Memory Deck: ${_moduleId}` : 'Memory Deck';
    this.title.closable = true;
    this.node.setAttribute('aria-label', 'TF Coach Memory Deck');
    this._ratings = RATINGS.map(({ rating, label }) => {
      const button = el(
        'button',
        {
          className: 'jp-tfcoach-deck-rate',
          attrs: {
            type: 'button',
            'aria-keyshortcuts': String(rating),
            'aria-label': `${label} (key ${rating})`,
            'data-rating': String(rating)
          }
        },
        el('kbd', {}, String(rating)),
        ` ${label}`
      );
      button.addEventListener('click', () => void this._rate(rating));
      return button;
    });
    this._card.addEventListener('click', () => this._flip());
    this._section.addEventListener('click', () => {
      const term = this._queue[0];
      if (term) {
        this._openSection(term.module, term.section);
      }
    });
    this.node.addEventListener('keydown', event => this._onKey(event));
    const progressButton = (label: string, className: string, onClick: () => void) => {
      const button = el(
        'button',
        { className: `jp-tfcoach-linkbutton ${className}`, attrs: { type: 'button' } },
        label
      );
      button.addEventListener('click', onClick);
      return button;
    };
    this._importInput.style.display = 'none';
    this._importInput.addEventListener('change', () => void this._importChosen());
    this.node.append(
      el('h2', {}, 'Memory Deck'),
      this._counts,
      this._card,
      this._shown,
      this._met,
      el('div', { className: 'jp-tfcoach-deck-actions' }, this._section),
      el(
        'div',
        {
          className: 'jp-tfcoach-deck-ratings',
          attrs: { role: 'group', 'aria-label': 'How well did you remember it?' }
        },
        ...this._ratings
      ),
      this._session,
      el(
        'p',
        { className: 'jp-tfcoach-deck-help' },
        'Space or a click turns the card; keys 1 to 4 rate it.'
      ),
      el(
        'div',
        {
          className: 'jp-tfcoach-deck-progress',
          attrs: { role: 'group', 'aria-label': 'Your study progress' }
        },
        progressButton('Export progress', 'jp-tfcoach-deck-export', () => void this._export()),
        progressButton('Import progress', 'jp-tfcoach-deck-import', () =>
          this._importInput.click()
        ),
        progressButton('Reset progress', 'jp-tfcoach-deck-reset', () => void this._reset()),
        this._importInput
      ),
      this._progressStatus
    );
    this._showSession();
    this._render();
  }

  /** Fetch the terms and the learner's cards, and show the first card. */
  async load(): Promise<void> {
    try {
      const terms = await this._api.terms();
      this._terms = this._moduleId ? terms.filter(term => term.module === this._moduleId) : terms;
      const deck = await this._api.deck(this._terms.map(term => term.id));
      this._queue = studyOrder(this._terms, deck);
      this._keepCards(deck);
      this._counts.textContent = deckCounts(deck);
    } catch (error) {
      this._counts.textContent = `The deck could not be loaded: ${String((error as Error).message ?? error)}`;
    }
    this._flipped = false;
    this._render();
  }

  /** A closed deck is done with (as a document tab): opening it again starts a new one. */
  protected onCloseRequest(): void {
    this.dispose();
  }

  protected onActivateRequest(): void {
    this._card.focus();
  }

  private _onKey(event: KeyboardEvent): void {
    if (event.altKey || event.ctrlKey || event.metaKey) {
      return;
    }
    const onButton = (event.target as HTMLElement).tagName === 'BUTTON';
    if ((event.key === ' ' || event.key === 'Enter') && !onButton) {
      event.preventDefault();
      this._flip();
    } else if (['1', '2', '3', '4'].includes(event.key) && this._flipped) {
      event.preventDefault();
      void this._rate(Number(event.key) as Rating);
    }
  }

  private _flip(): void {
    if (this._queue.length === 0 || this._busy) {
      return;
    }
    this._flipped = !this._flipped;
    this._render();
  }

  private async _rate(rating: Rating): Promise<void> {
    const term = this._queue[0];
    if (!term || !this._flipped || this._busy) {
      return;
    }
    this._busy = true;
    try {
      await this._api.review(term.id, rating);
      this._rated += 1;
      this._goodOrEasy += rating >= 3 ? 1 : 0;
      this._queue.shift();
      const deck = await this._api.deck(this._terms.map(t => t.id));
      this._keepCards(deck);
      this._counts.textContent = deckCounts(deck);
    } catch (error) {
      this._counts.textContent = `The rating could not be saved: ${String((error as Error).message ?? error)}`;
    } finally {
      this._busy = false;
    }
    this._flipped = false;
    this._showSession();
    this._render();
    this._card.focus();
  }

  /** Download the whole progress (`GET study/export`) as a JSON file. */
  private async _export(): Promise<void> {
    try {
      const progress = await this._api.exportProgress();
      const blob = new Blob([JSON.stringify(progress, null, 2)], { type: 'application/json' });
      const url = URL.createObjectURL(blob);
      const link = el('a', { attrs: { href: url, download: 'tfcoach-study-progress.json' } });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 0);
      this._progressStatus.textContent = 'Progress exported to tfcoach-study-progress.json.';
    } catch (error) {
      this._progressStatus.textContent = `The progress could not be exported: ${message(error)}`;
    }
  }

  /** Read the chosen file and, once confirmed, replace all progress with it. */
  private async _importChosen(): Promise<void> {
    const file = this._importInput.files?.[0];
    this._importInput.value = '';
    if (!file) {
      return;
    }
    let progress: unknown;
    try {
      progress = JSON.parse(await file.text());
    } catch (error) {
      this._progressStatus.textContent = `${file.name} is not a JSON file: ${message(error)}`;
      return;
    }
    const answer = await showDialog({
      title: 'Import progress?',
      body: `This replaces all your study progress (cards, reviews, scores) with ${file.name}'s.`,
      buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Import' })]
    });
    if (!answer.button.accept) {
      return;
    }
    try {
      await this._api.importProgress(progress);
      this._progressStatus.textContent = `Progress imported from ${file.name}.`;
    } catch (error) {
      this._progressStatus.textContent = `The file was refused: ${message(error)}`;
      return;
    }
    await this.load();
  }

  /** Once confirmed, delete all progress (`POST study/reset`). */
  private async _reset(): Promise<void> {
    const answer = await showDialog({
      title: 'Reset progress?',
      body: 'This deletes all your study progress: every card becomes new again. Export it first to keep a copy.',
      buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Reset' })]
    });
    if (!answer.button.accept) {
      return;
    }
    try {
      await this._api.resetProgress();
      this._progressStatus.textContent = 'Progress reset: every card is new.';
    } catch (error) {
      this._progressStatus.textContent = `The progress could not be reset: ${message(error)}`;
      return;
    }
    await this.load();
  }

  private _keepCards(deck: IDeck): void {
    this._cards = new Map(deck.cards.map(card => [card.term, card]));
  }

  /** "You met this in `train.ipynb`, code cell 4." (text nodes only), or nothing. */
  private _showMet(term: ITerm | undefined): void {
    const parts = term ? metParts(this._cards.get(term.id)) : null;
    if (!parts) {
      this._met.replaceChildren();
      this._met.style.visibility = 'hidden';
      return;
    }
    this._met.replaceChildren(parts.before, el('code', {}, parts.source), parts.after);
    this._met.style.visibility = 'visible';
  }

  private _showSession(): void {
    this._session.textContent =
      `This session: ${this._rated} rated, ${this._goodOrEasy} good or easy` +
      (this._rated ? ` (${Math.round((100 * this._goodOrEasy) / this._rated)}%)` : '');
  }

  private _render(): void {
    const term = this._queue[0];
    this._card.replaceChildren();
    this._card.classList.toggle('jp-mod-flipped', this._flipped);
    for (const button of this._ratings) {
      button.disabled = !term || !this._flipped;
    }
    // Hidden, not removed: the layout stays the same on both faces.
    this._section.style.visibility = term && this._flipped ? 'visible' : 'hidden';
    this._showMet(term);
    if (!term) {
      this._card.append(
        el('span', { className: 'jp-tfcoach-deck-term' }, 'Nothing left to study now.'),
        el('span', { className: 'jp-tfcoach-deck-face' }, 'Come back when cards are due.')
      );
      this._card.setAttribute('aria-label', 'No card to study now');
      this._shown.textContent = 'Nothing left to study now.';
      return;
    }
    const definitionFirst = this._definitionFirst();
    const { front, back } = cardFaces(term, definitionFirst);
    const mainClass = (text: string) =>
      text === term.term ? 'jp-tfcoach-deck-term' : 'jp-tfcoach-deck-definition';
    if (this._flipped) {
      this._card.append(
        el('span', { className: 'jp-tfcoach-deck-face' }, front.text),
        el('span', { className: mainClass(back.text) }, back.text)
      );
      this._card.setAttribute('aria-label', `${front.text}: ${back.text} Rate it with keys 1 to 4.`);
      this._shown.textContent = `${back.label}: ${back.text}`;
      this._section.title = `Open the section "${term.section}" in the course tab`;
    } else {
      this._card.append(
        el('span', { className: 'jp-tfcoach-deck-face' }, front.label),
        el('span', { className: mainClass(front.text) }, front.text)
      );
      this._card.setAttribute(
        'aria-label',
        `Card: ${front.text}. Press Space to show the ${back.label.toLowerCase()}.`
      );
      this._shown.textContent = `${front.label}: ${front.text}`;
    }
  }
}

function message(error: unknown): string {
  return String((error as Error)?.message ?? error);
}
