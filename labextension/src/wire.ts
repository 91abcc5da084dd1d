/**
 * The wire shapes the page receives, and their normalisers: a kernel report
 * (schema/report.schema.json, docs/report.md) and a static finding
 * (schema/finding.schema.json, docs/findings.md). Everything from a kernel or
 * the server passes through `normalizeReport` / `normalizeFinding` first.
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
