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
