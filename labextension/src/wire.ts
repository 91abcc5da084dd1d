/**
 * The wire shapes the page receives, and their normalisers: a kernel report
 * (schema/report.schema.json, docs/report.md), a static finding
 * (schema/finding.schema.json, docs/findings.md) and the rest of the analyze
 * route's answer (code left out, notes; docs/rest.md). Everything from a kernel
 * or the server passes through `normalizeReport` / `normalizeFinding` /
 * `normalizeInputProblem` / `normalizeNotes` first.
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
  | 'shape'
  | 'dtype'
  | 'python_value'
  | 'kind'
  | 'other'
  | 'side_effect'
  | 'stale_value';

export interface IRetraceReason {
  kind: ReasonKind | string;
  argument?: string | null;
  before?: unknown;
  after?: unknown;
  text?: string | null;
}

export interface ITraceInfo {
  function: string;
  defined_at?: string | null;
  new_traces: number;
  total_traces: number;
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

/** A note: advice that is not tied to one trace, variable or error. */
export interface INote {
  text: string;
  course: ICourseRef | null;
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

/**
 * Coerce untrusted JSON (from a kernel or the server) into a report, or null
 * when it is not one. Every string stays a string: callers render text only.
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
    .map(t => ({
      function: asString(t.function) || '(anonymous function)',
      defined_at: t.defined_at === undefined ? null : asString(t.defined_at),
      new_traces: asNumber(t.new_traces),
      total_traces: asNumber(t.total_traces),
      reasons: asArray<unknown>(t.reasons)
        .filter(isObject)
        .map(r => ({
          kind: asString(r.kind) || 'other',
          argument:
            r.argument === null || r.argument === undefined
              ? null
              : asString(r.argument),
          before: r.before,
          after: r.after,
          text: r.text === null || r.text === undefined ? null : asString(r.text)
        })),
      course: asCourse(t.course)
    }));
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
  return {
    schema: asString(value.schema),
    execution_count: typeof count === 'number' ? count : null,
    cell_id:
      typeof value.cell_id === 'string' && value.cell_id ? value.cell_id : null,
    monitor_ms: asNumber(value.monitor_ms, NaN),
    traces,
    variables,
    error,
    notes: asArray<unknown>(value.notes)
      .map(n =>
        isObject(n)
          ? { text: asString(n.text), course: asCourse(n.course) }
          : { text: asString(n), course: null }
      )
      .filter(n => n.text !== '')
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
