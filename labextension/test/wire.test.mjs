// The page's normalisers (labextension/src/wire.ts) against the JSON Schemas of the
// wire shapes (schema/report.schema.json, schema/finding.schema.json), run with
// `jlpm test`. Every example of a schema must come through its normaliser with every
// field the schema marks required, at every depth, unchanged; values the schema rejects
// at the top level (not an object, a required key missing or of the wrong type) that the
// normalisers can tell apart must come out as null. No JSON Schema library: the little
// the test needs of the schemas ($ref, oneOf, required, type, const) is read here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { URL } from 'node:url';

import { loadLib } from '../test-support/lib.mjs';

const wire = await loadLib('wire');

const readSchema = name =>
  JSON.parse(readFileSync(new URL(`../../schema/${name}.schema.json`, import.meta.url), 'utf8'));
const reportSchema = readSchema('report');
const findingSchema = readSchema('finding');

// Required fields the page does not keep, on purpose (it shows no related locations).
const NOT_KEPT = { finding: new Set(['related']), report: new Set() };
// Known differences, top-level key -> (example value, normalised value) => tolerated.
const TOLERATED = { finding: {}, report: {} };

const jsonType = value => {
  if (value === null) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return 'array';
  }
  if (typeof value === 'number') {
    return Number.isInteger(value) ? 'integer' : 'number';
  }
  return typeof value;
};

const typeMatches = (types, value) => {
  const actual = jsonType(value);
  const wanted = Array.isArray(types) ? types : [types];
  return wanted.includes(actual) || (actual === 'integer' && wanted.includes('number'));
};

function resolve(root, node) {
  let current = node;
  while (current && current.$ref) {
    const path = current.$ref.replace(/^#\//, '').split('/');
    current = path.reduce((at, key) => at[key], root);
  }
  return current;
}

/** The branch of a oneOf that the example's own JSON type selects. */
function branch(root, node, value) {
  const resolved = resolve(root, node);
  if (!resolved || !resolved.oneOf) {
    return resolved;
  }
  const matching = resolved.oneOf
    .map(option => resolve(root, option))
    .filter(option => option.type === undefined || typeMatches(option.type, value));
  assert.equal(matching.length, 1, `one branch of oneOf for ${JSON.stringify(value)}`);
  return matching[0];
}

/** Every field `node` marks required is in `normalized`, recursively, as in `example`. */
function assertKept(root, node, example, normalized, where, notKept = new Set(), tolerated = {}) {
  const schema = branch(root, node, example);
  if (schema && jsonType(example) === 'object' && schema.required) {
    assert.equal(jsonType(normalized), 'object', `${where} is kept as an object`);
    for (const key of schema.required) {
      if (notKept.has(key)) {
        continue;
      }
      assert.ok(key in normalized, `${where}.${key} is kept`);
      if (tolerated[key]?.(example[key], normalized[key])) {
        continue;
      }
      assertKept(root, schema.properties[key], example[key], normalized[key], `${where}.${key}`);
    }
  } else if (schema && jsonType(example) === 'array' && schema.items) {
    assert.equal(jsonType(normalized), 'array', `${where} is kept as an array`);
    assert.equal(normalized.length, example.length, `${where} keeps every entry`);
    example.forEach((item, index) =>
      assertKept(root, schema.items, item, normalized[index], `${where}[${index}]`)
    );
  } else {
    assert.deepEqual(normalized, example, `${where} keeps its value`);
  }
}

/** Whether the schema rejects `value` on its top level alone. */
function rejectedAtTopLevel(schema, value) {
  if (jsonType(value) !== 'object') {
    return true;
  }
  return schema.required.some(key => {
    if (!(key in value)) {
      return true;
    }
    const property = resolve(schema, schema.properties[key]);
    if ('const' in property && value[key] !== property.const) {
      return true;
    }
    return property.type !== undefined && !typeMatches(property.type, value[key]);
  });
}

test('the schemas hold examples of both producers', () => {
  assert.ok(reportSchema.examples.length >= 5);
  assert.ok(findingSchema.examples.length >= 4);
  assert.deepEqual(reportSchema.required, [
    'schema',
    'execution_count',
    'cell_id',
    'monitor_ms',
    'traces',
    'variables',
    'error',
    'notes'
  ]);
});

test('normalizeReport keeps every required field of every report example', () => {
  reportSchema.examples.forEach((example, index) => {
    const normalized = wire.normalizeReport(JSON.parse(JSON.stringify(example)));
    assert.notEqual(normalized, null, `example ${index}`);
    assertKept(
      reportSchema,
      reportSchema,
      example,
      normalized,
      `report[${index}]`,
      NOT_KEPT.report,
      TOLERATED.report
    );
  });
});

// What the monitor computes from a report's entries (docs/report.md, "What a report means"):
// optional in the schema, absent from the reports of older monitors.
const MEANING = { report: ['level', 'summary', 'counts'], trace: ['retraces'], reason: ['counts_as'], note: ['kind'] };

/** The example as an older monitor would have sent it: no meaning fields, at any depth. */
function withoutMeaning(example) {
  const copy = JSON.parse(JSON.stringify(example));
  const drop = (object, keys) => keys.forEach(key => delete object[key]);
  drop(copy, MEANING.report);
  for (const trace of copy.traces) {
    drop(trace, MEANING.trace);
    trace.reasons.forEach(reason => drop(reason, MEANING.reason));
  }
  copy.notes.filter(note => typeof note === 'object').forEach(note => drop(note, MEANING.note));
  return copy;
}

test('normalizeReport keeps what the monitor says a report means, as sent', () => {
  reportSchema.examples.forEach((example, index) => {
    const where = `report[${index}]`;
    const normalized = wire.normalizeReport(JSON.parse(JSON.stringify(example)));
    for (const key of MEANING.report) {
      assert.ok(key in example, `${where} holds ${key}`);
      assert.deepEqual(normalized[key], example[key], `${where}.${key}`);
    }
    example.traces.forEach((trace, t) => {
      assert.equal(normalized.traces[t].retraces, trace.retraces, `${where}.traces[${t}]`);
      trace.reasons.forEach((reason, r) =>
        assert.equal(normalized.traces[t].reasons[r].counts_as, reason.counts_as, `${where} reason ${r}`)
      );
    });
    example.notes.forEach((note, n) => assert.equal(normalized.notes[n].kind, note.kind, `${where}.notes[${n}]`));
  });
});

test('a report of an older monitor gets the meaning the monitor would have sent', () => {
  // The fallback follows the monitor's rules: on every example, the same as what it sent.
  reportSchema.examples.forEach((example, index) => {
    const old = withoutMeaning(example);
    assert.ok(!('summary' in old) && !('counts_as' in (old.traces[0]?.reasons[0] ?? {})));
    assert.deepEqual(
      wire.normalizeReport(old),
      wire.normalizeReport(JSON.parse(JSON.stringify(example))),
      `report[${index}]`
    );
  });
  // Plain-string notes of the oldest monitors are information.
  const oldest = wire.normalizeReport({ ...withoutMeaning(reportSchema.examples[0]), notes: ['a plain note'] });
  assert.deepEqual(oldest.notes, [{ text: 'a plain note', course: null, kind: 'information' }]);
  assert.equal(oldest.counts.information, 1);
});

test('a reason that sums up repeats of one cause counts all its retraces', () => {
  const merged = reportSchema.examples.find(e => e.traces.some(t => t.reasons.some(r => r.count > 1)));
  assert.ok(merged, 'an example has a reason with a count');
  const trace = wire.normalizeReport(JSON.parse(JSON.stringify(merged))).traces[0];
  assert.deepEqual(trace.reasons.map(r => r.count), [1, 3]);
  // An older monitor sent neither retraces nor counts_as: the count is still summed.
  const old = wire.normalizeReport(withoutMeaning(merged));
  assert.equal(old.traces[0].retraces, 3);
  assert.equal(old.counts.retraces, 3);
  assert.equal(old.summary, '3 retraces');
  // A reason without a count (older monitors) stands for one trace.
  const noCount = withoutMeaning(merged);
  noCount.traces[0].reasons.forEach(r => delete r.count);
  assert.equal(wire.normalizeReport(noCount).traces[0].retraces, 1);
  assert.deepEqual(wire.normalizeReport(noCount).traces[0].reasons.map(r => r.count), [1, 1]);
});

test('a second argument that changed in the same trace counts no second retrace', () => {
  // A batch (x, y) of a new size: one trace, a reason for each argument, one retrace.
  const batch = withoutMeaning(reportSchema.examples[0]);
  batch.traces = [
    {
      function: 'fit_step',
      defined_at: null,
      new_traces: 1,
      total_traces: 2,
      course: null,
      reasons: [
        { kind: 'shape', argument: 'x', before: '(4, 3)', after: '(6, 3)', text: 'x', count: 1 },
        { kind: 'shape', argument: 'y', before: '(4,)', after: '(6,)', text: 'y', count: 0 }
      ]
    }
  ];
  const normalized = wire.normalizeReport(batch);
  assert.deepEqual(normalized.traces[0].reasons.map(r => r.count), [1, 0]);
  assert.equal(normalized.traces[0].retraces, 1);
  assert.equal(normalized.counts.retraces, 1);
});

test('normalizeFinding keeps every required field of every finding example', () => {
  findingSchema.examples.forEach((example, index) => {
    const normalized = wire.normalizeFinding(JSON.parse(JSON.stringify(example)));
    assert.notEqual(normalized, null, `example ${index}`);
    assertKept(
      findingSchema,
      findingSchema,
      example,
      normalized,
      `finding[${index}]`,
      NOT_KEPT.finding,
      TOLERATED.finding
    );
  });
});

test('values the report schema rejects at the top level are not reports', () => {
  const example = reportSchema.examples[0];
  const rejected = [
    null,
    'a string',
    42,
    ['a', 'list'],
    [example],
    {},
    { foo: 1 },
    { schema: 'tfcoach.report/1', cell_id: 'missing-keys' }
  ];
  for (const value of rejected) {
    assert.ok(rejectedAtTopLevel(reportSchema, value), JSON.stringify(value));
    assert.equal(wire.normalizeReport(value), null, JSON.stringify(value));
  }
  // The checker itself: the examples pass it.
  for (const good of reportSchema.examples) {
    assert.equal(rejectedAtTopLevel(reportSchema, good), false);
  }
});

test('values the finding schema rejects at the top level are not findings', () => {
  const example = findingSchema.examples[0];
  const withoutCode = { ...example };
  delete withoutCode.code;
  const rejected = [
    null,
    'TFC001',
    7,
    [example],
    {},
    withoutCode,
    { ...example, code: 1 },
    { ...example, code: null },
    { ...example, code: ['TFC001'] }
  ];
  for (const value of rejected) {
    assert.ok(rejectedAtTopLevel(findingSchema, value), JSON.stringify(value));
    assert.equal(wire.normalizeFinding(value), null, JSON.stringify(value));
  }
  for (const good of findingSchema.examples) {
    assert.equal(rejectedAtTopLevel(findingSchema, good), false);
  }
});
