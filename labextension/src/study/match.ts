/**
 * Match the Pairs: 6 terms of a module and their definitions, in two shuffled columns.
 * Choose a term and a definition (click, or Tab and Enter/Space: every tile is a button);
 * a pair locks, a mismatch is shown and counted, and the status line (a live region) names
 * the pair or the mismatch for screen readers and for everyone. A finished board shows its time and score
 * (`matchScore`), is saved (`POST study/match`) and shows the module's best game.
 * "Deal from my due cards" deals the board from the module's terms due in the learner's deck
 * (`GET study/deck`), filled with others of the module when fewer than 6 are due (it says so).
 * Text nodes only. Loaded lazily with the rest of `study/`.
 */
import { Widget } from '@lumino/widgets';

import { el } from '../dom';
import { IMatchGame, ITerm, StudyApi } from './api';
import { counted, dueMatchDeal, matchScore, shuffled } from './order';

export const PAIRS = 6;

type Side = 'term' | 'definition';

interface ITile {
  term: ITerm;
  side: Side;
  button: HTMLButtonElement;
}

function bestText(best: IMatchGame | null): string {
  return best
    ? `Best: ${best.score} points (${Math.round(best.seconds)} s, ${counted(best.mismatches, 'mismatch')})`
    : 'Best: no game yet';
}

export class MatchBoard extends Widget {
  private _terms: ITerm[] = [];
  private _tiles: ITile[] = [];
  private _chosen: ITile | null = null;
  private _matched = 0;
  private _mismatches = 0;
  private _started = 0;
  private _board = el('div', {
    className: 'jp-tfcoach-match-board',
    attrs: { role: 'group', 'aria-label': 'Terms and definitions' }
  });
  private _status = el('p', {
    className: 'jp-tfcoach-match-status',
    attrs: { 'aria-live': 'polite' }
  });
  private _best = el('p', { className: 'jp-tfcoach-match-best' });
  /** Which terms the board was dealt from, when from the learner's due cards. */
  private _source = el('p', { className: 'jp-tfcoach-match-source' });
  private _fromDue = el('input', {
    className: 'jp-tfcoach-match-due',
    attrs: { type: 'checkbox' }
  });
  private _again = el(
    'button',
    { className: 'jp-tfcoach-deck-rate', attrs: { type: 'button' } },
    'New board'
  );

  constructor(
    private readonly _api: StudyApi,
    private readonly _moduleId: string
  ) {
    super();
    this.addClass('jp-tfcoach-deck');
    this.addClass('jp-tfcoach-match');
    this.id = `tfcoach-match-${_moduleId}`;
    this.title.label = `Match the Pairs: ${_moduleId}`;
    this.title.closable = true;
    this.node.setAttribute('aria-label', `TF Coach Match the Pairs, ${_moduleId}`);
    // The focus goes to the new board (the button would keep it, after the last tile).
    this._again.addEventListener('click', () => void this._newBoard().then(() => this.onActivateRequest()));
    this._fromDue.addEventListener('change', () => void this._newBoard());
    this.node.append(
      el('h2', {}, 'Match the Pairs'),
      el(
        'p',
        { className: 'jp-tfcoach-deck-help' },
        'Choose a term, then its definition (or the other way round). ' +
          '100 points a pair, minus 25 a mismatch and 1 a second.'
      ),
      el('label', { className: 'jp-tfcoach-match-due-label' }, this._fromDue, ' Deal from my due cards'),
      this._source,
      this._status,
      this._board,
      this._best,
      this._again
    );
  }

  async load(): Promise<void> {
    try {
      const terms = await this._api.terms();
      this._terms = terms.filter(term => term.module === this._moduleId);
      this._best.textContent = bestText(await this._api.bestMatch(this._moduleId));
    } catch (error) {
      this._status.textContent = `The board could not be loaded: ${String((error as Error).message ?? error)}`;
      return;
    }
    await this._newBoard();
  }

  /** A new board: from the learner's due cards when chosen, else from the module's terms. */
  private async _newBoard(): Promise<void> {
    if (!this._fromDue.checked) {
      this._source.textContent = '';
      this._deal(shuffled(this._terms, PAIRS));
      return;
    }
    try {
      const deck = await this._api.deck(this._terms.map(term => term.id));
      const { picked, note } = dueMatchDeal(this._terms, deck, PAIRS);
      this._source.textContent = note;
      this._deal(picked);
    } catch (error) {
      this._source.textContent = `Your due cards could not be loaded: ${String((error as Error).message ?? error)}`;
      this._deal(shuffled(this._terms, PAIRS));
    }
  }

  protected onCloseRequest(): void {
    this.dispose();
  }

  protected onActivateRequest(): void {
    this._tiles.find(tile => !tile.button.disabled)?.button.focus();
  }

  private _deal(picked: ITerm[]): void {
    const column = (side: Side, terms: ITerm[]) =>
      terms.map(term => {
        const text = side === 'term' ? term.term : term.definition;
        const button = el(
          'button',
          {
            className: `jp-tfcoach-match-tile jp-tfcoach-match-${side}`,
            attrs: { type: 'button', 'data-term': term.id, 'aria-pressed': 'false' }
          },
          text
        );
        const tile = { term, side, button };
        button.addEventListener('click', () => this._choose(tile));
        return tile;
      });
    const terms = column('term', picked);
    const definitions = column('definition', shuffled(picked));
    this._tiles = [...terms, ...definitions];
    this._board.replaceChildren(
      el('div', { className: 'jp-tfcoach-match-column' }, ...terms.map(t => t.button)),
      el('div', { className: 'jp-tfcoach-match-column' }, ...definitions.map(t => t.button))
    );
    this._chosen = null;
    this._matched = 0;
    this._mismatches = 0;
    this._started = Date.now();
    this._status.textContent =
      picked.length < 2 ? 'This module has too few terms for a board.' : this._progress();
  }

  private _progress(): string {
    return `Pairs: ${this._matched} of ${this._tiles.length / 2} · Mismatches: ${this._mismatches}`;
  }

  private _choose(tile: ITile): void {
    for (const other of this._tiles) {
      other.button.classList.remove('jp-mod-mismatch');
    }
    const chosen = this._chosen;
    if (!chosen || chosen.side === tile.side) {
      chosen?.button.setAttribute('aria-pressed', 'false');
      this._chosen = tile === chosen ? null : tile;
      this._chosen?.button.setAttribute('aria-pressed', 'true');
      return;
    }
    this._chosen = null;
    chosen.button.setAttribute('aria-pressed', 'false');
    const term = (chosen.side === 'term' ? chosen : tile).term;
    let outcome: string;
    if (chosen.term.id === tile.term.id) {
      for (const button of [chosen.button, tile.button]) {
        button.disabled = true;
        button.classList.add('jp-mod-matched');
      }
      this._matched += 1;
      outcome = `A pair: ${term.term}.`;
    } else {
      this._mismatches += 1;
      chosen.button.classList.add('jp-mod-mismatch');
      tile.button.classList.add('jp-mod-mismatch');
      outcome = `Not a pair: ${term.term} and the definition you chose.`;
    }
    this._status.textContent = `${outcome} ${this._progress()}`;
    if (this._matched === this._tiles.length / 2) {
      void this._finish();
    } else {
      this.onActivateRequest();
    }
  }

  private async _finish(): Promise<void> {
    const seconds = Math.min((Date.now() - this._started) / 1000, 86400);
    const score = matchScore(this._matched, this._mismatches, seconds);
    const done =
      `Done in ${Math.round(seconds)} s with ${counted(this._mismatches, 'mismatch')}: ` +
      `${score} points.`;
    this._status.textContent = done;
    try {
      const saved = await this._api.recordMatch({
        module: this._moduleId,
        seconds,
        mismatches: this._mismatches,
        score
      });
      this._status.textContent = done + (saved.new_best ? ' A new best!' : '');
      this._best.textContent = bestText(saved.best);
    } catch (error) {
      this._status.textContent = `${done} It could not be saved: ${String((error as Error).message ?? error)}`;
    }
    this._again.focus();
  }
}
