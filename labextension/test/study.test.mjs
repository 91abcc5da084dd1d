// The Memory Deck's order of study and counts (labextension/src/study/order.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { loadLib } from '../test-support/lib.mjs';

const order = await loadLib('study/order');

const term = id => ({ id, module: 'module-01', term: id, definition: '', section: 's', prerequisites: [], see_also: [] });
const card = (id, state, due, dueNow) => ({ term: id, state, due, due_now: dueNow, reviews: 1 });

test('cards due again come first, soonest first, then new terms in course order', () => {
  const terms = ['a', 'b', 'c', 'd', 'e'].map(term);
  const deck = {
    new: 2, due_now: 2, due_today: 3,
    cards: [
      card('a', 'new', '2026-12-04T10:00:00+00:00', true),
      card('b', 'review', '2026-12-04T09:00:00+00:00', true),
      card('c', 'learning', '2026-12-04T12:00:00+00:00', false),
      card('d', 'relearning', '2026-12-04T08:00:00+00:00', true),
      card('e', 'new', '2026-12-04T10:00:00+00:00', true)
    ]
  };
  assert.deepEqual(order.studyOrder(terms, deck).map(t => t.id), ['d', 'b', 'a', 'e']);
  assert.equal(
    order.deckCounts(deck),
    'Due today: 3 · New: 2 · Learning: 2 · Review: 1'
  );
});

test('a term the deck does not list yet is new', () => {
  const deck = { new: 0, due_now: 0, due_today: 0, cards: [] };
  assert.deepEqual(order.studyOrder([term('x')], deck).map(t => t.id), ['x']);
});

test('a board scores 100 a pair, minus 25 a mismatch and 1 a second, never below 0', () => {
  assert.equal(order.matchScore(6, 0, 30.9), 570);
  assert.equal(order.matchScore(6, 2, 30), 520);
  assert.equal(order.matchScore(6, 40, 30), 0);
});

test('shuffled deals the asked number of distinct items, the input untouched', () => {
  const items = [1, 2, 3, 4, 5, 6, 7, 8];
  const dealt = order.shuffled(items, 6, () => 0);
  assert.equal(dealt.length, 6);
  assert.equal(new Set(dealt).size, 6);
  assert.deepEqual(items, [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.deepEqual(order.shuffled(items, 8, () => 0.999).sort(), items);
});

test('counts are worded for one and for many', () => {
  assert.equal(order.counted(1, 'mismatch'), '1 mismatch');
  assert.equal(order.counted(0, 'mismatch'), '0 mismatches');
  assert.equal(order.counted(2, 'question', 'questions'), '2 questions');
});

test('a quiz counts the answers rated right; partly is told apart, not counted', () => {
  assert.deepEqual(order.quizResult(['right', 'partly', 'wrong', 'right']), {
    score: 2, total: 4, text: '2 of 4 right (50%), 1 partly'
  });
  assert.equal(order.quizResult(['right', 'right', 'right']).text, '3 of 3 right (100%)');
  assert.equal(order.bestQuizText(null), 'Best: no quiz taken yet');
  assert.equal(
    order.bestQuizText({ score: 5, total: 6, taken_at: '2026-12-04T14:00:00+00:00' }),
    'Best: 5 of 6 right (83%)'
  );
});

test("a quiz answer's Markdown becomes paragraphs; a long answer is cut to what is kept", () => {
  assert.deepEqual(order.paragraphs('Tensors are\nimmutable.\n\n  Use `w.assign`.\n'), [
    'Tensors are immutable.',
    'Use `w.assign`.'
  ]);
  assert.equal(order.clipped('x'.repeat(1200)).length, 1000);
  assert.equal(order.clipped('short'), 'short');
});

test('a revealed quiz answer is rated with 1/2/3 (right/partly/wrong), never while typing', () => {
  const rate = (key, revealed = true, inText = false, modified = false) =>
    order.quizRatingForKey(key, revealed, inText, modified);
  assert.equal(rate('1'), 'right');
  assert.equal(rate('2'), 'partly');
  assert.equal(rate('3'), 'wrong');
  assert.equal(rate('4'), null); // the deck's "easy" has no quiz counterpart
  assert.equal(rate('1', false), null); // not before the answer is shown
  assert.equal(rate('2', true, true), null); // a digit typed into the answer is text
  assert.equal(rate('3', true, false, true), null); // Ctrl+3 etc. stay shortcuts
  assert.equal(rate('constructor'), null);
});

test('a card shows the term first, or the definition first when the setting says so', () => {
  const relu = { ...term('relu'), term: 'ReLU', definition: 'max(0, x), elementwise' };
  assert.deepEqual(order.cardFaces(relu, false), {
    front: { label: 'Term', text: 'ReLU' },
    back: { label: 'Definition', text: 'max(0, x), elementwise' }
  });
  assert.deepEqual(order.cardFaces(relu, true), {
    front: { label: 'Definition', text: 'max(0, x), elementwise' },
    back: { label: 'Term', text: 'ReLU' }
  });
});

test('Match the Pairs deals from the due cards, filled from the module when too few are due', () => {
  const terms = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].map(term);
  const deckOf = (...due) => ({
    new: 0, due_now: due.length, due_today: due.length,
    cards: terms.map(t => due.includes(t.id)
      ? card(t.id, 'review', '2026-12-04T09:00:00+00:00', true)
      : card(t.id, 'new', '2026-12-04T09:00:00+00:00', true))
  });
  const many = order.dueMatchDeal(terms, deckOf('a', 'b', 'c', 'd', 'e', 'f', 'g'), 6);
  assert.equal(many.picked.length, 6);
  assert.ok(many.picked.every(t => 'abcdefg'.includes(t.id)));
  assert.equal(many.note, 'Dealt from your 7 due cards.');

  const few = order.dueMatchDeal(terms, deckOf('h', 'i'), 6);
  assert.equal(few.picked.length, 6);
  assert.ok(['h', 'i'].every(id => few.picked.some(t => t.id === id)));
  assert.equal(new Set(few.picked.map(t => t.id)).size, 6);
  assert.equal(few.note, "Only 2 cards due (6 needed): dealt with 4 more of the module's terms.");

  // A new card is never due, whatever due_now says; none due: the module's terms.
  const none = order.dueMatchDeal(terms, deckOf(), 6);
  assert.equal(none.picked.length, 6);
  assert.equal(none.note, "None of your cards is due: dealt from the module's terms.");
});
