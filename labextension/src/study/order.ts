/**
 * What the Memory Deck shows, as pure functions (tested under node, `labextension/test/`).
 */
import type { ICard, IDeck, IQuizBest, ITerm } from './api';

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

/** "1 mismatch", "2 mismatches", "0 mismatches". */
export function counted(count: number, singular: string, plural = `${singular}es`): string {
  return `${count} ${count === 1 ? singular : plural}`;
}

/** How the learner rates their own answer, once they have seen the model answer. */
export type SelfRating = 'right' | 'partly' | 'wrong';

/**
 * A finished quiz: `score` counts the answers rated right (what `POST study/quiz` keeps,
 * its best being the highest share right); a partly right answer is told apart in the text,
 * not counted right.
 */
export function quizResult(ratings: SelfRating[]): {
  score: number;
  total: number;
  text: string;
} {
  const score = ratings.filter(rating => rating === 'right').length;
  const partly = ratings.filter(rating => rating === 'partly').length;
  const total = ratings.length;
  return {
    score,
    total,
    text:
      `${score} of ${total} right (${total ? Math.round((100 * score) / total) : 0}%)` +
      (partly ? `, ${partly} partly` : '')
  };
}

/** "Best: 5 of 6 right (83%)", or that no quiz of the module was taken yet. */
export function bestQuizText(best: IQuizBest | null): string {
  return best
    ? `Best: ${best.score} of ${best.total} right (${Math.round((100 * best.score) / best.total)}%)`
    : 'Best: no quiz taken yet';
}

/** A text cut to `limit` characters (what the store keeps of an answer), marked when cut. */
export function clipped(text: string, limit = 1000): string {
  return text.length <= limit ? text : text.slice(0, limit - 1) + '\u2026';
}

/** Markdown prose as paragraphs of plain lines (blank lines part them; lines join). */
export function paragraphs(markdown: string): string[] {
  return markdown
    .split(/\n\s*\n/)
    .map(paragraph => paragraph.split('\n').map(line => line.trim()).join(' ').trim())
    .filter(paragraph => paragraph !== '');
}
