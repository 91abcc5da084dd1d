// The analyze route's answer beyond its findings (docs/rest.md): `syntax_errors` (code
// the analysis left out: it does not parse, or nests too deeply to check) and `notes`,
// through their normalisers in labextension/src/wire.ts. Run with `jlpm test`.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { URL } from 'node:url';

import { loadLib } from '../test-support/lib.mjs';

const wire = await loadLib('wire');
const positions = await loadLib('positions');

const readRepo = path => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

// As the server answers them (jupyterlab_tfcoach/server/work.py, analysis/errors.py).
const DEPTH_MESSAGE =
  'too deeply nested to check: an expression nests more than 200 levels deep (lambda: ' +
  'lambda: ..., or a chain of over 200 operators, calls or subscripts); it was left out ' +
  'of the analysis, the code around it was checked';
const RECURSION_MESSAGE =
  "too deeply nested to check: the model of the code exceeded Python's recursion limit " +
  'or memory, so its findings are missing';

test('a depth problem is told by the message the server and docs/rest.md give it', () => {
  // The wire has no `kind`: the prefix is the contract, on both sides.
  const errors = readRepo('jupyterlab_tfcoach/analysis/errors.py');
  const constant = errors.match(/TOO_DEEP_TO_CHECK = \(\s*f?"([^"]*)/);
  assert.ok(constant, 'errors.py defines TOO_DEEP_TO_CHECK');
  assert.ok(constant[1].startsWith(wire.TOO_DEEP_TO_CHECK));
  assert.ok(readRepo('docs/rest.md').includes(`\`${wire.TOO_DEEP_TO_CHECK}\``));

  assert.deepEqual(
    wire.normalizeInputProblem({ cell: 1, line: 1, column: 218, message: DEPTH_MESSAGE }),
    { cell: 1, line: 1, column: 218, message: DEPTH_MESSAGE, kind: 'depth' }
  );
  assert.deepEqual(
    wire.normalizeInputProblem({ cell: null, line: null, column: null, message: RECURSION_MESSAGE }),
    { cell: null, line: null, column: null, message: RECURSION_MESSAGE, kind: 'depth' }
  );
  assert.deepEqual(
    wire.normalizeInputProblem({ cell: 2, line: 1, column: 205, message: 'too many nested parentheses' }),
    { cell: 2, line: 1, column: 205, message: 'too many nested parentheses', kind: 'syntax' }
  );
  // "too deeply nested to parse": Python's parser refuses it, a syntax error like any other.
  assert.equal(
    wire.normalizeInputProblem({ cell: 0, line: 1, column: 1, message: 'too deeply nested to parse: ...' })
      .kind,
    'syntax'
  );
  // A kind the server may send one day wins over the message.
  assert.equal(wire.normalizeInputProblem({ cell: 0, line: 1, column: 1, message: 'x', kind: 'depth' }).kind, 'depth');
  assert.equal(wire.normalizeInputProblem({ cell: 0, message: DEPTH_MESSAGE, kind: 'other' }).kind, 'depth');
});

test('untrusted problems are coerced or rejected', () => {
  for (const junk of [null, 'invalid syntax', [], { cell: 0 }, { message: '' }, { message: 7 }]) {
    assert.equal(wire.normalizeInputProblem(junk), null, JSON.stringify(junk));
  }
  // A cell index that is not one places the problem nowhere (it is notified, not lost).
  for (const cell of [-1, 1.5, '2', true, undefined]) {
    assert.equal(wire.normalizeInputProblem({ cell, line: 1, column: 1, message: 'm' }).cell, null);
  }
  // No line: no column either. A line without a usable column: the line's start.
  assert.deepEqual(
    wire.normalizeInputProblem({ cell: 0, line: 0, column: 5, message: 'm' }),
    { cell: 0, line: null, column: null, message: 'm', kind: 'syntax' }
  );
  assert.equal(wire.normalizeInputProblem({ cell: 0, line: 3, column: 'x', message: 'm' }).column, 1);
  // Text stays text: markup in a message is kept as characters, for text nodes.
  assert.equal(
    wire.normalizeInputProblem({ cell: 0, line: 1, column: 1, message: '<img src=x onerror=alert(1)>' })
      .message,
    '<img src=x onerror=alert(1)>'
  );
});

test('notes are the non-empty strings, each once', () => {
  const stopped =
    'analysis stopped after 10012 ms (its time budget is 10000 ms): findings past that point are missing';
  assert.deepEqual(wire.normalizeNotes([stopped, '', 3, null, { text: 'x' }, stopped]), [stopped]);
  assert.deepEqual(wire.normalizeNotes(undefined), []);
  assert.deepEqual(wire.normalizeNotes('analysis stopped'), []);
});

test("a problem's code-point column lands on the right UTF-16 offset", () => {
  // The browser test's cell: an emoji (two UTF-16 units) before the expression cut.
  const cell = 'label = "\u{1F600}"; x = ' + '-'.repeat(300) + '1';
  const offset = positions.offsetOf(cell, 1, 218);
  assert.equal(cell.slice(offset), '-'.repeat(100) + '1');
});
