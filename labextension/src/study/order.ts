/**
 * What the Memory Deck shows, as pure functions (tested under node, `labextension/test/`).
 */
import type { ICard, IDeck, ITerm } from './api';

/** The order of study: cards due again (soonest first), then new terms in course order. */
export function studyOrder(terms: ITerm[], deck: IDeck): ITerm[] {
  const cards = new Map(deck.cards.map(card => [card.term, card]));
  const due = terms
    .filter(term => {
      const card = cards.get(term.id);
      return card !== undefined && card.state !== 'new' && card.due_now;
    })
    .sort((a, b) => cards.get(a.id)!.due.localeCompare(cards.get(b.id)!.due));
  const fresh = terms.filter(term => (cards.get(term.id)?.state ?? 'new') === 'new');
  return [...due, ...fresh];
}

/** "Due today: 3 · New: 70 · Learning: 2 · Review: 1" for the deck's cards. */
export function deckCounts(deck: IDeck): string {
  const inState = (...states: ICard['state'][]) =>
    deck.cards.filter(card => states.includes(card.state)).length;
  return (
    `Due today: ${deck.due_today} · New: ${deck.new} · ` +
    `Learning: ${inState('learning', 'relearning')} · Review: ${inState('review')}`
  );
}

/** `count` items of `items` in a random order (Fisher-Yates on a copy). */
export function shuffled<T>(items: T[], count = items.length, random = Math.random): T[] {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [copy[index], copy[other]] = [copy[other], copy[index]];
  }
  return copy.slice(0, count);
}

/**
 * A finished board's score: 100 a pair, minus 25 a mismatch and 1 a second, never below 0.
 * Fast and careful both count; the same board always scores the same.
 */
export function matchScore(pairs: number, mismatches: number, seconds: number): number {
  return Math.max(0, 100 * pairs - 25 * mismatches - Math.floor(seconds));
}
