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

/** A card's two faces, in the order shown: the term first, or the definition first. */
export function cardFaces(
  term: ITerm,
  definitionFirst: boolean
): { front: { label: string; text: string }; back: { label: string; text: string } } {
  const termFace = { label: 'Term', text: term.term };
  const definitionFace = { label: 'Definition', text: term.definition };
  return definitionFirst
    ? { front: definitionFace, back: termFace }
    : { front: termFace, back: definitionFace };
}

/**
 * A Match the Pairs board from the learner's due cards: `pairs` of the terms due now (cards
 * studied before whose time has come); fewer due, those due and others of `terms` to fill the
 * board, and a note that says so.
 */
export function dueMatchDeal(
  terms: ITerm[],
  deck: IDeck,
  pairs: number,
  random = Math.random
): { picked: ITerm[]; note: string } {
  const cards = new Map(deck.cards.map(card => [card.term, card]));
  const isDue = (term: ITerm) => {
    const card = cards.get(term.id);
    return card !== undefined && card.state !== 'new' && card.due_now;
  };
  const due = terms.filter(isDue);
  if (due.length >= pairs) {
    return {
      picked: shuffled(due, pairs, random),
      note: `Dealt from your ${due.length} due cards.`
    };
  }
  const others = shuffled(
    terms.filter(term => !isDue(term)),
    pairs - due.length,
    random
  );
  return {
    picked: shuffled([...due, ...others], undefined, random),
    note:
      due.length === 0
        ? `None of your cards is due: dealt from the module's terms.`
        : `Only ${counted(due.length, 'card', 'cards')} due (${pairs} needed): ` +
          `dealt with ${others.length} more of the module's terms.`
  };
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

/** The keys that rate a revealed answer, as the deck's 1-4: 1 right, 2 partly, 3 wrong. */
export const QUIZ_RATING_KEYS: Record<string, SelfRating> = {
  '1': 'right',
  '2': 'partly',
  '3': 'wrong'
};

/**
 * The rating a key press gives, or null: only once the answer is shown, never while the
 * learner types in a text field, never with a modifier (those are shortcuts).
 */
export function quizRatingForKey(
  key: string,
  revealed: boolean,
  inTextField: boolean,
  modified: boolean
): SelfRating | null {
  if (!revealed || inTextField || modified) {
    return null;
  }
  return Object.prototype.hasOwnProperty.call(QUIZ_RATING_KEYS, key) ? QUIZ_RATING_KEYS[key] : null;
}

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
