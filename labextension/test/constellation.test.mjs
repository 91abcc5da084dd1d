// The Concept Constellation's nodes, edges, mastery and search (labextension/src/study/graph.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { loadLib } from '../test-support/lib.mjs';

const graph = await loadLib('study/graph');

const term = (id, module, extra = {}) => ({
  id, module, term: id.replace(/-/g, ' '), definition: `About ${id}.`, section: `s-${id}`,
  prerequisites: [], see_also: [], ...extra
});
const card = (id, state, dueNow) => ({ term: id, state, due: '2026-12-04T10:00:00+00:00', due_now: dueNow, reviews: 1 });

const TERMS = [
  term('tensor', 'module-01'),
  term('shape', 'module-01', { prerequisites: ['tensor'], see_also: ['tensor', 'nowhere'] }),
  term('tracing', 'module-02', { prerequisites: ['tensor', 'tracing'], see_also: ['retracing'] }),
  term('retracing', 'module-02', { prerequisites: ['tracing'], see_also: ['tracing', 'shape'] })
];

test('every term is a node, coloured by its module in course order', () => {
  const built = graph.buildConstellation(TERMS, null);
  assert.deepEqual(built.nodes.map(n => n.id), ['tensor', 'shape', 'tracing', 'retracing']);
  assert.deepEqual(built.modules.map(m => m.id), ['module-01', 'module-02']);
  const [first, second] = built.modules.map(m => m.colour);
  assert.notEqual(first, second);
  assert.deepEqual(built.nodes.map(n => n.colour), [first, first, second, second]);
  assert.equal(built.nodes[1].section, 's-shape');
});

test('edges: prerequisites point to the term that needs them, a pair is joined once', () => {
  const built = graph.buildConstellation(TERMS, null);
  assert.deepEqual(built.links, [
    { source: 'tensor', target: 'shape', kind: 'prerequisite' },
    { source: 'tensor', target: 'tracing', kind: 'prerequisite' },
    { source: 'tracing', target: 'retracing', kind: 'prerequisite' },
    { source: 'retracing', target: 'shape', kind: 'see-also' }
  ]);
  // A link to an unknown id or to itself is left out; degrees count what is drawn.
  assert.deepEqual(built.nodes.map(n => n.degree), [2, 2, 2, 2]);
  assert.deepEqual(graph.neighbours(built, 'tracing'), {
    needs: ['tensor'], neededBy: ['retracing'], related: []
  });
  assert.deepEqual(graph.neighbours(built, 'shape'), {
    needs: ['tensor'], neededBy: [], related: ['retracing']
  });
});

test("a node's mastery comes from the learner's deck", () => {
  const deck = {
    new: 1, due_now: 1, due_today: 1,
    cards: [
      card('tensor', 'review', false),
      card('shape', 'learning', false),
      card('tracing', 'review', true),
      card('retracing', 'new', true)
    ]
  };
  const built = graph.buildConstellation(TERMS, deck);
  assert.deepEqual(built.nodes.map(n => n.mastery), ['review', 'learning', 'due', 'new']);
  assert.equal(graph.masteryOf(undefined), 'new');
  assert.equal(graph.masteryOf(card('x', 'relearning', false)), 'learning');
  assert.equal(graph.MASTERY_LABELS.due, 'due for review now');
});

test('search ranks an exact name, then a prefix, then a word inside, then a definition', () => {
  const nodes = [
    { name: 'Retracing', definition: 'Tracing again.' },
    { name: 'tf.function', definition: 'Makes a graph.' },
    { name: 'Tracing', definition: 'Running Python once.' },
    { name: 'Tracing cost', definition: '' },
    { name: 'Graph', definition: 'What tracing makes.' }
  ];
  const names = query => graph.searchNodes(nodes, query).map(n => n.name);
  assert.deepEqual(names('tracing'), ['Tracing', 'Tracing cost', 'Retracing', 'Graph']);
  assert.deepEqual(names('  TF Function '), ['tf.function']);  // case and punctuation folded
  assert.deepEqual(names(''), []);
  assert.deepEqual(names('nothing like it'), []);
});

test('the 3D camera looks at a star past no other star', () => {
  const target = { x: 10, y: 0, z: 0 };
  // A star right on the outward line of sight: the camera goes another way.
  const blocker = { x: 60, y: 0, z: 0 };
  const camera = graph.clearViewpoint(target, [blocker], 100);
  assert.equal(Math.round(Math.hypot(camera.x - 10, camera.y, camera.z)), 100);
  assert.notDeepEqual(camera, { x: 110, y: 0, z: 0 });
  // With nothing in the way the outward direction is kept.
  const free = graph.clearViewpoint(target, [{ x: -50, y: 0, z: 0 }], 100);
  assert.deepEqual(free, { x: 110, y: 0, z: 0 });
});
