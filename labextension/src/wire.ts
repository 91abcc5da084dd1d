/**
 * The wire shapes the page receives, and their normalisers: a kernel report
 * (schema/report.schema.json, docs/report.md), a static finding
 * (schema/finding.schema.json, docs/findings.md) and the rest of the analyze
 * route's answer (code left out, notes; docs/rest.md). Everything from a kernel
 * or the server passes through `normalizeReport` / `normalizeFinding` /
 * `normalizeInputProblem` / `normalizeNotes` first.
 *
 * What a report means (a reason's `counts_as`, a note's `kind`, a function's
 * `retraces`, the report's `level`, `summary` and `counts`) is the kernel
 * monitor's decision, carried in the report and kept here as sent. Only a
 * report of an older monitor, without those fields, gets them computed here,
 * by the monitor's rules (docs/report.md, "What a report means"):
 * labextension/test/wire.test.mjs keeps that fallback equal to the monitor's
 * on every example of the schema.
 * Pure TypeScript: no DOM, no JupyterLab imports.
 */

/** A course reference as produced by the knowledge core. */
export interface ICourseRef {
  module: string;
  section: string;
  title: string;
  url: string;
}

export type ReasonKind =
  | 'first_trace'
  | 'last_batch'
  | 'shape'
  | 'dtype'
  | 'python_value'
  | 'kind'
  | 'other'
  | 'side_effect'
  | 'stale_value';

/** What a reason counts as: information (a first trace), a retrace, or a tip. */
export type CountsAs = 'first_trace' | 'retrace' | 'tip';

export interface IRetraceReason {
  kind: ReasonKind | string;
  argument?: string | null;
  before?: unknown;
  after?: unknown;
  text?: string | null;
  counts_as: CountsAs;
  /** How many traces the reason stands for (1 unless it sums up repeats of one cause). */
  count: number;
}

export interface ITraceInfo {
  function: string;
  defined_at?: string | null;
  new_traces: number;
  total_traces: number;
  /** Of this cell's traces, the retraces. */
  retraces: number;
  reasons: IRetraceReason[];
  course?: ICourseRef | null;
}

export interface IVariableChange {
  name: string;
  change: string;
  before?: unknown;
  after?: unknown;
  text?: string | null;
  course?: ICourseRef | null;
}

export interface IErrorInfo {
  type: string;
  message: string;
  explanation?: string | null;
  course?: ICourseRef | null;
}

/** Whether a note teaches something or informs about tfcoach itself. */
export type NoteKind = 'coaching' | 'information';

/** A note: advice that is not tied to one trace, variable or error. */
export interface INote {
  text: string;
  course: ICourseRef | null;
  kind: NoteKind;
}

/** What a report amounts to: an explained error, coaching, information, nothing. */
export type ReportLevel = 'error' | 'warning' | 'info' | 'none';

/** The counts behind a report's level, summary and badges. */
export interface IReportCounts {
  traces: number;
  retraces: number;
  variables: number;
  errors: number;
  tips: number;
  information: number;
}

/** A kernel report, schema `tfcoach.report/1`. */
export interface IReport {
  schema?: string;
  execution_count: number | null;
  cell_id?: string | null;
  monitor_ms?: number;
  traces: ITraceInfo[];
  variables: IVariableChange[];
  error: IErrorInfo | null;
  notes: INote[];
  level: ReportLevel;
  /** One line for people, most important first; '' when there is nothing to report. */
  summary: string;
  counts: IReportCounts;
}

export interface IFixEdit {
  line: number;
  column: number;
  end_line: number;
  end_column: number;
  new_text: string;
}

/** A static finding (CLI JSON, docs/findings.md). */
export interface IFinding {
  path?: string | null;
  code: string;
  name: string;
  severity: 'error' | 'warning' | 'information' | 'hint' | string;
  message: string;
  line: number;
  column: number;
  end_line: number;
  end_column: number;
  cell: number | null;
  course?: ICourseRef | null;
  fix?: { description: string; edits: IFixEdit[] } | null;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const asString = (value: unknown): string => {
  if (value === null || value === undefined) {
    return '';
  }
  if (typeof value === 'string') {
    return value;
  }
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
};

const asArray = <T>(value: unknown): T[] =>
  Array.isArray(value) ? (value as T[]) : [];

const asNumber = (value: unknown, fallback = 0): number =>
  typeof value === 'number' && Number.isFinite(value) ? value : fallback;

export const asCourse = (value: unknown): ICourseRef | null => {
  if (!isObject(value)) {
    return null;
  }
  return {
    module: asString(value.module),
    section: asString(value.section),
    title: asString(value.title),
    url: asString(value.url)
  };
};

const COUNTS_AS: readonly CountsAs[] = ['first_trace', 'retrace', 'tip'];
const NOTE_KINDS: readonly NoteKind[] = ['coaching', 'information'];
const LEVELS: readonly ReportLevel[] = ['error', 'warning', 'info', 'none'];
const COUNT_KEYS: readonly (keyof IReportCounts)[] = [
  'traces',
  'retraces',
  'variables',
  'errors',
  'tips',
  'information'
];

const oneOf = <T extends string>(values: readonly T[], value: unknown): T | null =>
  values.includes(value as T) ? (value as T) : null;

const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0;

// ---- Reports of older monitors only: the monitor's rules (monitor/report.py).

/** Reason kinds that are not retraces; every other kind is one. */
const NOT_RETRACES = new Map<string, CountsAs>([
  ['first_trace', 'first_trace'],
  ['last_batch', 'first_trace'],
  ['side_effect', 'tip'],
  ['stale_value', 'tip']
]);

function legacyRetraces(trace: Omit<ITraceInfo, 'retraces'>): number {
  if (trace.reasons.length > 0) {
    return trace.reasons
      .filter(r => r.counts_as === 'retrace')
      .reduce((n, r) => n + r.count, 0);
  }
  // No reasons: every trace but a first one is a retrace.
  const firstHere = trace.total_traces > 0 && trace.total_traces === trace.new_traces;
  return Math.max(0, trace.new_traces - (firstHere ? 1 : 0));
}

function legacyCounts(
  traces: ITraceInfo[],
  variables: IVariableChange[],
  error: IErrorInfo | null,
  notes: INote[]
): IReportCounts {
  const coaching = notes.filter(n => n.kind === 'coaching').length;
  const tipReasons = traces.reduce(
    (n, t) => n + t.reasons.filter(r => r.counts_as === 'tip').length,
    0
  );
  return {
    traces: traces.reduce((n, t) => n + Math.max(0, t.new_traces), 0),
    retraces: traces.reduce((n, t) => n + t.retraces, 0),
    variables: variables.length,
    errors: error ? 1 : 0,
    tips: tipReasons + coaching,
    information: notes.length - coaching
  };
}

function legacyLevel(counts: IReportCounts): ReportLevel {
  if (counts.errors > 0) {
    return 'error';
  }
  if (counts.retraces > 0 || counts.variables > 0 || counts.tips > 0) {
    return 'warning';
  }
  return counts.traces > 0 || counts.information > 0 ? 'info' : 'none';
}

const plural = (n: number, one: string, many: string): string =>
  `${n} ${n === 1 ? one : many}`;

function legacySummary(counts: IReportCounts, error: IErrorInfo | null): string {
  const parts: string[] = error ? [error.type || 'error'] : [];
  if (counts.retraces > 0) {
    parts.push(plural(counts.retraces, 'retrace', 'retraces'));
  }
  if (counts.variables > 0) {
    parts.push(plural(counts.variables, 'variable', 'variables'));
  }
  if (counts.tips > 0) {
    parts.push(plural(counts.tips, 'tip', 'tips'));
  }
  if (parts.length === 0 && counts.traces > 0) {
    parts.push(plural(counts.traces, 'trace', 'traces'));
  }
  if (parts.length === 0 && counts.information > 0) {
    parts.push(plural(counts.information, 'note', 'notes'));
  }
  return parts.join(' \u00b7 ');
}

// ---- Normalisers.

/** The report's counts as sent, or null when they are missing or malformed. */
function sentCounts(value: unknown): IReportCounts | null {
  if (!isObject(value) || !COUNT_KEYS.every(key => isCount(value[key]))) {
    return null;
  }
  const counts = {} as IReportCounts;
  for (const key of COUNT_KEYS) {
    counts[key] = value[key] as number;
  }
  return counts;
}

/**
 * Coerce untrusted JSON (from a kernel or the server) into a report, or null
 * when it is not one. Every string stays a string: callers render text only.
 * The meaning fields are kept as sent; a report without them (an older
 * monitor) gets them computed by the monitor's rules.
 */
export function normalizeReport(value: unknown): IReport | null {
  if (!isObject(value)) {
    return null;
  }
  if (
    !('traces' in value) &&
    !('variables' in value) &&
    !('error' in value) &&
    !('execution_count' in value)
  ) {
    return null;
  }
  const traces = asArray<unknown>(value.traces)
    .filter(isObject)
    .map(t => {
      const trace = {
        function: asString(t.function) || '(anonymous function)',
        defined_at: t.defined_at === undefined ? null : asString(t.defined_at),
        new_traces: asNumber(t.new_traces),
        total_traces: asNumber(t.total_traces),
        reasons: asArray<unknown>(t.reasons)
          .filter(isObject)
          .map(r => {
            const kind = asString(r.kind) || 'other';
            return {
              kind,
              argument:
                r.argument === null || r.argument === undefined
                  ? null
                  : asString(r.argument),
              before: r.before,
              after: r.after,
              text: r.text === null || r.text === undefined ? null : asString(r.text),
              counts_as: oneOf(COUNTS_AS, r.counts_as) ?? NOT_RETRACES.get(kind) ?? 'retrace',
              // 0: a further argument that changed in a trace an earlier reason counts.
              count: isCount(r.count) ? r.count : 1
            };
          }),
        course: asCourse(t.course)
      };
      return {
        ...trace,
        retraces: isCount(t.retraces) ? t.retraces : legacyRetraces(trace)
      };
    });
  const variables = asArray<unknown>(value.variables)
    .filter(isObject)
    .map(v => ({
      name: asString(v.name),
      change: asString(v.change),
      before: v.before,
      after: v.after,
      text: v.text === null || v.text === undefined ? null : asString(v.text),
      course: asCourse(v.course)
    }));
  const error = isObject(value.error)
    ? {
        type: asString(value.error.type) || 'Error',
        message: asString(value.error.message),
        explanation:
          value.error.explanation === null ||
          value.error.explanation === undefined
            ? null
            : asString(value.error.explanation),
        course: asCourse(value.error.course)
      }
    : null;
  const count = value.execution_count;
  const notes = asArray<unknown>(value.notes)
    .map(n => {
      const note = isObject(n)
        ? { text: asString(n.text), course: asCourse(n.course) }
        : { text: asString(n), course: null };
      const sent = isObject(n) ? oneOf(NOTE_KINDS, n.kind) : null;
      const kind: NoteKind = sent ?? (note.course !== null ? 'coaching' : 'information');
      return { ...note, kind };
    })
    .filter(n => n.text !== '');
  const counts = sentCounts(value.counts) ?? legacyCounts(traces, variables, error, notes);
  return {
    schema: asString(value.schema),
    execution_count: typeof count === 'number' ? count : null,
    cell_id:
      typeof value.cell_id === 'string' && value.cell_id ? value.cell_id : null,
    monitor_ms: asNumber(value.monitor_ms, NaN),
    traces,
    variables,
    error,
    notes,
    level: oneOf(LEVELS, value.level) ?? legacyLevel(counts),
    summary:
      typeof value.summary === 'string' ? value.summary : legacySummary(counts, error),
    counts
  };
}

/** Coerce untrusted JSON into a finding, or null. */
export function normalizeFinding(value: unknown): IFinding | null {
  if (!isObject(value) || typeof value.code !== 'string') {
    return null;
  }
  const line = asNumber(value.line, 1);
  const column = asNumber(value.column, 1);
  return {
    path: typeof value.path === 'string' ? value.path : null,
    code: value.code,
    name: asString(value.name),
    severity: asString(value.severity) || 'warning',
    message: asString(value.message),
    line,
    column,
    end_line: asNumber(value.end_line, line),
    end_column: asNumber(value.end_column, column + 1),
    cell: typeof value.cell === 'number' ? value.cell : null,
    course: asCourse(value.course),
    fix: isObject(value.fix)
      ? {
          description: asString(value.fix.description),
          edits: asArray<unknown>(value.fix.edits)
            .filter(isObject)
            .map(e => ({
              line: asNumber(e.line, 1),
              column: asNumber(e.column, 1),
              end_line: asNumber(e.end_line, 1),
              end_column: asNumber(e.end_column, 1),
              new_text: asString(e.new_text)
            }))
        }
      : null
  };
}

/**
 * Code the analysis left out (`syntax_errors` of `POST tfcoach/api/analyze`,
 * docs/rest.md): `syntax`, code that does not parse (Python says so too when it
 * runs), or `depth`, valid code nested too deeply to check (nothing else says so).
 */
export interface IInputProblem {
  /** The 0-based code cell index, null when the problem has no cell. */
  cell: number | null;
  /** 1-based line within the cell, null when the problem has no position. */
  line: number | null;
  /** 1-based column in code points (as finding columns), null without a position. */
  column: number | null;
  message: string;
  kind: 'syntax' | 'depth';
}

/** How the server's message for an expression nested too deeply to check starts. */
export const TOO_DEEP_TO_CHECK = 'too deeply nested to check';

const positiveInteger = (value: unknown): number | null =>
  typeof value === 'number' && Number.isInteger(value) && value >= 1 ? value : null;

/**
 * Coerce untrusted JSON into an input problem, or null. The answer has no `kind`
 * field: a depth problem is told by its documented message (an explicit `kind`
 * wins, should the server send one).
 */
export function normalizeInputProblem(value: unknown): IInputProblem | null {
  if (!isObject(value) || typeof value.message !== 'string' || !value.message) {
    return null;
  }
  const cell =
    typeof value.cell === 'number' && Number.isInteger(value.cell) && value.cell >= 0
      ? value.cell
      : null;
  const line = positiveInteger(value.line);
  const kind =
    value.kind === 'depth' || value.kind === 'syntax'
      ? value.kind
      : value.message.startsWith(TOO_DEEP_TO_CHECK)
        ? 'depth'
        : 'syntax';
  return {
    cell,
    line,
    column: line === null ? null : (positiveInteger(value.column) ?? 1),
    message: value.message,
    kind
  };
}

/** Coerce untrusted JSON into the analysis's notes: non-empty strings, each once. */
export function normalizeNotes(value: unknown): string[] {
  const notes = asArray<unknown>(value).filter(
    (note): note is string => typeof note === 'string' && note !== ''
  );
  return [...new Set(notes)];
}
