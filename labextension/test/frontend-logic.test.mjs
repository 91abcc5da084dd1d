// Unit tests of the frontend's pure logic (labextension/src/wire.ts, wording.ts,
// summary.ts, timeline.ts, positions.ts, links.ts), run with `jlpm test` (node's
// built-in test runner on the tsc output in lib/, loaded by ../test-support/lib.mjs).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { loadLib } from '../test-support/lib.mjs';

const model = Object.assign(
  {},
  ...(await Promise.all(
    ['wire', 'wording', 'summary', 'timeline', 'positions', 'links'].map(loadLib)
  ))
);

// A report as the wire sends it; `report` normalises it, as every report the page uses is.
// Without the meaning fields (level, summary, counts, ...) it is a report of an older
// monitor: the normaliser computes them by the monitor's rules.
const raw = (fields = {}) => ({
  schema: 'tfcoach.report/1',
  execution_count: 5,
  cell_id: 'cell-a',
  monitor_ms: 1.25,
  traces: [],
  variables: [],
  error: null,
  notes: [],
  ...fields
});
const report = (fields = {}) => model.normalizeReport(raw(fields));

const scaleTrace = {
  function: 'scale',
  defined_at: 'Cell In[5], line 1',
  new_traces: 3,
  total_traces: 3,
  reasons: [
    { kind: 'first_trace', argument: null, before: null, after: null, text: 'First trace.' },
    { kind: 'shape', argument: 't', before: '(2,)', after: '(3,)', text: '...' },
    { kind: 'python_value', argument: 'factor', before: '2.0', after: '3.0', text: '...' }
  ],
  course: { module: 'module-01', section: 'retracing', title: 'Retracing', url: 'file:///x.md#retracing' }
};

test('reasons read in plain words with the argument as code', () => {
  assert.equal(model.reasonText(scaleTrace.reasons[1]), '`t`: shape (2,) \u2192 (3,)');
  assert.equal(model.reasonText(scaleTrace.reasons[2]), '`factor`: Python value 2.0 \u2192 3.0');
  // A first trace is the core's own sentence; 'first trace' only when it sent none.
  assert.equal(model.reasonText(scaleTrace.reasons[0]), 'First trace.');
  assert.equal(model.reasonText({ kind: 'first_trace' }), 'first trace');
  assert.equal(model.hasDataSummary(scaleTrace.reasons[1]), true);
  assert.equal(model.hasDataSummary(scaleTrace.reasons[0]), false);
  assert.deepEqual(model.formatVariable({ name: 'w', change: 'rebound_to_tensor', before: 'tf.Variable', after: 'tf.Tensor' }), [
    { text: 'w', code: true },
    { text: ': tf.Variable \u2192 tf.Tensor' }
  ]);
  assert.equal(
    model.reasonText({ kind: 'dtype', argument: 'x', before: 'int32', after: 'float32' }),
    '`x`: dtype int32 \u2192 float32'
  );
  assert.equal(model.reasonText({ kind: 'other', text: 'something else' }), 'something else');
  assert.deepEqual(model.formatReason(scaleTrace.reasons[1])[0], { text: 't', code: true });
});

test('long or structured values are shortened to one line', () => {
  assert.equal(model.formatValue([1, 2]), '[1,2]');
  assert.equal(model.formatValue('a\n  b'), 'a b');
  assert.equal(model.formatValue('x'.repeat(100)).length, 80);
  assert.equal(model.formatValue(null), '?');
});

test('badges count traces, retraces, variables and errors', () => {
  const r = report({
    traces: [scaleTrace],
    variables: [{ name: 'w', change: 'rebound_to_tensor', before: 'tf.Variable', after: 'tf.Tensor' }],
    error: { type: 'InvalidArgumentError', message: 'm', explanation: 'e' }
  });
  assert.deepEqual(
    model.reportBadges(r).map(b => b.label),
    ['3 traces', '2 retraces', '1 variable', 'error']
  );
  assert.equal(model.cellBadgeText(r), 'InvalidArgumentError \u00b7 2 retraces \u00b7 1 variable');
  assert.equal(model.reportLevel(r), 'error');
  assert.equal(model.cellBadgeText(report({ traces: [{ ...scaleTrace, new_traces: 1, total_traces: 1, reasons: [] }] })), '1 trace');
  // Without reasons, traces beyond a first one are retraces.
  const retracesOf = trace => report({ traces: [trace] }).traces[0].retraces;
  assert.equal(retracesOf({ ...scaleTrace, reasons: [], new_traces: 2, total_traces: 2 }), 1);
  assert.equal(retracesOf({ ...scaleTrace, reasons: [], new_traces: 2, total_traces: 4 }), 2);
});

test('untrusted JSON is normalized, non-reports are rejected', () => {
  assert.equal(model.normalizeReport('nope'), null);
  assert.equal(model.normalizeReport({ foo: 1 }), null);
  const r = model.normalizeReport({ execution_count: 2, traces: [{ function: 7, reasons: 'x' }] });
  assert.equal(r.traces[0].function, '7');
  assert.deepEqual(r.traces[0].reasons, []);
  assert.equal(r.error, null);
  assert.equal(model.normalizeFinding({ code: 1 }), null);
  assert.equal(model.normalizeFinding({ code: 'TFC002', line: 3 }).end_line, 3);
});

test('the timeline keeps one entry per cell, newest first, and drops duplicates', () => {
  const timeline = new model.Timeline();
  let changes = 0;
  timeline.onChange(() => changes++);
  const a = report({ traces: [scaleTrace] });
  assert.ok(timeline.add(a, 'live'));
  assert.equal(timeline.add({ ...a }, 'live'), null, 'the same report via another path');
  const b = report({ cell_id: 'cell-b', execution_count: 6, error: { type: 'E', message: '' } });
  timeline.add(b, 'live');
  assert.deepEqual(timeline.entries.map(e => e.key), ['cell-b', 'cell-a']);
  // History arriving late does not replace a live entry.
  assert.equal(timeline.add(report({ execution_count: 3, monitor_ms: 9, traces: [scaleTrace] }), 'history'), null);
  // Re-running a cell replaces its entry and moves it to the top.
  timeline.add(report({ execution_count: 7, monitor_ms: 2, traces: [scaleTrace] }), 'live');
  assert.deepEqual(timeline.entries.map(e => [e.key, e.executionCount]), [['cell-a', 7], ['cell-b', 6]]);
  // A re-run with nothing to report removes the stale entry.
  timeline.add(report({ cell_id: 'cell-b', execution_count: 8, monitor_ms: 3 }), 'live');
  assert.deepEqual(timeline.entries.map(e => e.key), ['cell-a']);
  // Reports without a cell id are keyed by execution count.
  timeline.add(report({ cell_id: null, execution_count: 9, error: { type: 'E', message: '' } }), 'live');
  assert.equal(timeline.entries[0].key, 'count:9');
  assert.ok(changes >= 5);
});

test('findings group by cell and positions convert to UTF-16 offsets', () => {
  const groups = model.groupFindingsByCell([
    { code: 'TFC002', cell: 2, line: 3, column: 1 },
    { code: 'TFC001', cell: 0, line: 1, column: 5 },
    { code: 'TFC005', cell: 2, line: 1, column: 1 }
  ]);
  assert.deepEqual([...groups.keys()], [0, 2]);
  assert.deepEqual(groups.get(2).map(f => f.code), ['TFC005', 'TFC002']);
  const text = 'ab\n\u{1F600}x = 1\nlast';
  assert.equal(model.offsetOf(text, 1, 1), 0);
  assert.equal(model.offsetOf(text, 2, 2), 5, 'an astral character is two UTF-16 units');
  assert.equal(model.offsetOf(text, 2, 99), text.indexOf('\nlast'), 'clamped to the line');
  assert.equal(model.offsetOf(text, 9, 1), text.length);
});

test('a code cell is named as the CLI and hover cards name it, counted from 1', () => {
  assert.equal(model.cellLabel(0), 'code cell 1');
  assert.equal(model.cellLabel(2), 'code cell 3', 'the finding with "cell": 2');
});

test('backticks become code parts; only http(s) course URLs are external', () => {
  assert.deepEqual(model.inlineCode('use `tf.print` here'), [
    { text: 'use ' },
    { text: 'tf.print', code: true },
    { text: ' here' }
  ]);
  assert.deepEqual(model.inlineCode('a ` b'), [{ text: 'a ` b' }]);
  assert.ok(model.isExternalCourseUrl('https://example.org/course/module-02#retracing'));
  assert.ok(!model.isExternalCourseUrl('file:///x.md#retracing'));
  assert.ok(!model.isExternalCourseUrl('javascript:alert(1)'));
});

test('notes carry their course link; advice reasons are not retraces', () => {
  const course = { module: 'module-01', section: 'side-effects', title: 'Side effects', url: 'file:///x.md#side-effects' };
  const r = model.normalizeReport(
    raw({
      notes: [{ text: 'tape.gradient returned None', course }, 'old plain note', { text: 'tfcoach cannot hook X', course: null }],
      traces: [
        {
          function: 'train_step',
          new_traces: 1,
          total_traces: 1,
          reasons: [
            { kind: 'first_trace', text: 'First trace.' },
            { kind: 'side_effect', argument: 'steps_done', text: 'runs only while tracing: use `steps_done.assign_add(1)`' }
          ],
          course
        }
      ]
    })
  );
  assert.deepEqual(r.notes[0], { text: 'tape.gradient returned None', course, kind: 'coaching' });
  assert.deepEqual(r.notes[1], { text: 'old plain note', course: null, kind: 'information' });
  assert.equal(model.coachingNotes(r).length, 1);
  assert.deepEqual(r.notes.map(n => n.kind), ['coaching', 'information', 'information']);
  assert.equal(r.traces[0].retraces, 0);
  assert.deepEqual(r.traces[0].reasons.map(reason => reason.counts_as), ['first_trace', 'tip']);
  assert.deepEqual(model.reportBadges(r).map(b => b.label), ['1 trace', '2 tips']);
  assert.equal(model.reportLevel(r), 'warning');
  const parts = model.formatReason(r.traces[0].reasons[1]);
  assert.deepEqual(parts.filter(p => p.code).map(p => p.text), ['steps_done', 'steps_done.assign_add(1)']);
  // A report whose only content is a teaching note still gets an entry.
  const onlyNote = report({ notes: [{ text: 'x', course }] });
  assert.equal(model.hasSomethingToReport(onlyNote), true);
  // So does one whose only content is a note about tfcoach itself (as under a cell): the
  // learner is told once what tfcoach did or cannot do; it is information, not a tip.
  const internal = report({ notes: [{ text: 'tfcoach cannot hook X', course: null }] });
  assert.equal(model.hasSomethingToReport(internal), true);
  assert.equal(model.reportLevel(internal), 'info');
  assert.deepEqual(model.reportBadges(internal).map(b => [b.kind, b.label]), [['information', '1 note']]);
  assert.equal(model.cellBadgeText(internal), '1 note');
  assert.equal(model.coachingNotes(internal).length, 0);
});

test('the panel reads what a report means from the report, deciding nothing again', () => {
  // Fields that disagree with the entries on purpose: what shows is what the core sent.
  const sent = report({
    traces: [scaleTrace],
    notes: [{ text: 'tfcoach cannot hook X', course: null, kind: 'coaching' }],
    level: 'info',
    summary: 'as the core says',
    counts: { traces: 9, retraces: 7, variables: 0, errors: 0, tips: 1, information: 0 }
  });
  assert.equal(model.cellBadgeText(sent), 'as the core says');
  assert.equal(model.reportLevel(sent), 'info');
  assert.deepEqual(model.reportBadges(sent).map(b => b.label), ['9 traces', '7 retraces', '1 tip']);
  assert.equal(model.coachingNotes(sent).length, 1);
  const timeline = new model.Timeline();
  const entry = timeline.add(sent, 'live');
  assert.equal(entry.level, 'info');
  assert.deepEqual(entry.badges.map(b => b.label), ['9 traces', '7 retraces', '1 tip']);
  // A function's retraces and a reason's counts_as are kept as sent as well.
  const trace = report({
    traces: [{ ...scaleTrace, retraces: 5, reasons: [{ ...scaleTrace.reasons[1], counts_as: 'tip' }] }]
  }).traces[0];
  assert.equal(trace.retraces, 5);
  assert.equal(trace.reasons[0].counts_as, 'tip');
  // The core said there is nothing to report: no entry, whatever the entries hold.
  const nothing = report({ traces: [scaleTrace], level: 'none', summary: '' });
  assert.equal(model.hasSomethingToReport(nothing), false);
  assert.equal(timeline.add(nothing, 'live'), null);
});

test('a report with only side effects or frozen values is summed up as tips', () => {
  const stale = report({
    traces: [
      {
        function: 'count_above',
        new_traces: 0,
        total_traces: 1,
        reasons: [{ kind: 'stale_value', argument: 'threshold', before: '0.5', after: '1.0', text: '...' }]
      }
    ]
  });
  // Before, the cell badge of such a report was empty: the summary counts its tip.
  assert.equal(model.cellBadgeText(stale), '1 tip');
  assert.equal(model.reportLevel(stale), 'warning');
  assert.deepEqual(model.reportBadges(stale).map(b => b.label), ['1 tip']);
});
