/**
 * The coach's data model: report (docs/report.md) and finding shapes and the
 * per-notebook timeline. Pure TypeScript: no DOM, no JupyterLab imports, so
 * the logic can be tested on its own.
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

/** Reason kinds that are advice about a trace, not a retrace. */
const NOT_RETRACES = new Set(['first_trace', 'side_effect', 'stale_value']);

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

/** One piece of text with optional inline-code spans: rendered as text nodes. */
export type TextPart = { text: string; code?: boolean };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const asString = (value: unknown): string => {
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
    path: value.path === undefined ? null : asString(value.path),
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

/** How a reason's value looks in prose: short and on one line. */
export function formatValue(value: unknown, limit = 80): string {
  let text = asString(value).replace(/\s+/g, ' ').trim();
  if (text.length > limit) {
    text = text.slice(0, limit - 1) + '\u2026';
  }
  return text || '?';
}

const KIND_WORDS: Record<string, string> = {
  shape: 'shape',
  dtype: 'dtype',
  python_value: 'Python value',
  kind: 'kind of value'
};

/**
 * One retrace reason in plain words, e.g. `x`: shape (3,) -> (4,).
 * Returned as parts so the argument name renders as code, still as text.
 */
export function formatReason(reason: IRetraceReason): TextPart[] {
  const kind = reason.kind;
  if (kind === 'first_trace') {
    return [{ text: 'first trace' }];
  }
  const words = KIND_WORDS[kind];
  const hasValues =
    reason.before !== undefined &&
    reason.before !== null &&
    reason.after !== undefined &&
    reason.after !== null;
  const parts: TextPart[] = [];
  if (reason.argument) {
    parts.push({ text: reason.argument, code: true }, { text: ': ' });
  }
  if (words && hasValues) {
    parts.push({
      text: `${words} ${formatValue(reason.before)} \u2192 ${formatValue(
        reason.after
      )}`
    });
    return parts;
  }
  if (words) {
    parts.push({ text: `new ${words}` });
    if (reason.text) {
      parts.push({ text: ` (${reason.text})` });
    }
    return parts;
  }
  parts.push(...(reason.text ? inlineCode(reason.text) : [{ text: 'a new input signature' }]));
  return parts;
}

/** Plain-text version of `formatReason`, with the argument in backticks. */
export function reasonText(reason: IRetraceReason): string {
  return formatReason(reason)
    .map(p => (p.code ? `\`${p.text}\`` : p.text))
    .join('');
}

/** Retraces of one function during one cell (traces beyond the first). */
export function retraceCount(trace: ITraceInfo): number {
  const nonFirst = trace.reasons.filter(r => !NOT_RETRACES.has(r.kind)).length;
  if (trace.reasons.length > 0) {
    return nonFirst;
  }
  // No reasons: every trace but a first one is a retrace.
  const firstHere = trace.total_traces > 0 && trace.total_traces === trace.new_traces;
  return Math.max(0, trace.new_traces - (firstHere ? 1 : 0));
}

const VARIABLE_WORDS: Record<string, string> = {
  rebound_to_tensor: 'was a tf.Variable, now a plain tensor: it no longer trains',
  attribute_rebound: 'attribute rebound: the variable left the model',
  trainable_flag: 'trainable flag changed',
  trainable_count: 'number of trainable weights changed',
  stopped_learning: 'did not learn while the other weights trained'
};

/** A variable change in plain words. */
export function formatVariable(change: IVariableChange): TextPart[] {
  const parts: TextPart[] = [{ text: change.name || '?', code: true }, { text: ': ' }];
  const words = VARIABLE_WORDS[change.change] ?? change.change.replace(/_/g, ' ');
  const hasValues =
    change.before !== undefined &&
    change.before !== null &&
    change.after !== undefined &&
    change.after !== null;
  if (change.change === 'rebound_to_tensor') {
    parts.push({ text: words });
  } else if (hasValues) {
    parts.push({
      text: `${words} (${formatValue(change.before)} \u2192 ${formatValue(
        change.after
      )})`
    });
  } else {
    parts.push({ text: words });
  }
  return parts;
}

export interface IBadge {
  kind: 'traces' | 'retraces' | 'variables' | 'error' | 'notes';
  count: number;
  label: string;
}

const plural = (n: number, one: string, many: string): string =>
  `${n} ${n === 1 ? one : many}`;

/** The badges of one report, in display order. */
export function reportBadges(report: IReport): IBadge[] {
  const badges: IBadge[] = [];
  const traces = report.traces.reduce((n, t) => n + Math.max(0, t.new_traces), 0);
  const retraces = report.traces.reduce((n, t) => n + retraceCount(t), 0);
  if (traces > 0) {
    badges.push({ kind: 'traces', count: traces, label: plural(traces, 'trace', 'traces') });
  }
  if (retraces > 0) {
    badges.push({
      kind: 'retraces',
      count: retraces,
      label: plural(retraces, 'retrace', 'retraces')
    });
  }
  if (report.variables.length > 0) {
    badges.push({
      kind: 'variables',
      count: report.variables.length,
      label: plural(report.variables.length, 'variable', 'variables')
    });
  }
  if (report.error) {
    badges.push({ kind: 'error', count: 1, label: 'error' });
  }
  const advice = coachingNotes(report).length + adviceReasons(report);
  if (advice > 0) {
    badges.push({ kind: 'notes', count: advice, label: plural(advice, 'tip', 'tips') });
  }
  return badges;
}

/** Notes that teach something (a course link); notes about tfcoach itself have none. */
export function coachingNotes(report: IReport): INote[] {
  return report.notes.filter(n => n.course !== null);
}

/** Side effects and stale values: advice attached to a function's entry. */
function adviceReasons(report: IReport): number {
  return report.traces.reduce(
    (n, t) => n + t.reasons.filter(r => r.kind === 'side_effect' || r.kind === 'stale_value').length,
    0
  );
}

/** Whether a report has anything worth an entry. */
export function hasSomethingToReport(report: IReport): boolean {
  return (
    report.error !== null ||
    report.variables.length > 0 ||
    report.traces.some(t => t.new_traces > 0 || t.reasons.length > 0) ||
    coachingNotes(report).length > 0
  );
}

/** The short text of the badge on a cell, most important first. */
export function cellBadgeText(report: IReport): string {
  const badges = reportBadges(report);
  const pick = (kind: IBadge['kind']) => badges.find(b => b.kind === kind);
  const parts: string[] = [];
  const error = pick('error');
  if (error) {
    parts.push(report.error?.type || 'error');
  }
  const retraces = pick('retraces');
  if (retraces) {
    parts.push(retraces.label);
  }
  const variables = pick('variables');
  if (variables) {
    parts.push(variables.label);
  }
  if (parts.length === 0) {
    const traces = pick('traces');
    if (traces) {
      parts.push(traces.label);
    }
  }
  return parts.join(' \u00b7 ');
}

/** The severity of an entry, for styling. */
export function reportLevel(report: IReport): 'error' | 'warning' | 'info' {
  if (report.error) {
    return 'error';
  }
  if (
    report.variables.length > 0 ||
    report.traces.some(t => retraceCount(t) > 0) ||
    adviceReasons(report) > 0 ||
    coachingNotes(report).length > 0
  ) {
    return 'warning';
  }
  return 'info';
}

/** A key identifying one report across delivery paths (iopub, events, REST). */
export function reportFingerprint(report: IReport): string {
  return [
    report.cell_id ?? '',
    report.execution_count ?? '',
    Number.isFinite(report.monitor_ms) ? report.monitor_ms : '',
    report.traces.map(t => `${t.function}:${t.total_traces}`).join(','),
    report.variables.map(v => v.name).join(','),
    report.error ? report.error.type : '',
    report.notes.length
  ].join('|');
}

/** One timeline entry: the latest report of one cell. */
export interface IEntry {
  /** The cell model id, or `count:<n>` when the report had no cell id. */
  key: string;
  cellId: string | null;
  executionCount: number | null;
  report: IReport;
  badges: IBadge[];
  level: 'error' | 'warning' | 'info';
  /** Monotonic arrival order: higher is newer. */
  order: number;
  /** Where it came from: history (REST) or live (iopub / event bus). */
  origin: 'live' | 'history';
  /** `Date.now()` when the entry was created or updated. */
  receivedAt: number;
}

/**
 * The reports of one notebook, newest first, one entry per cell (its latest
 * report). Feeding the same report twice (iopub and the event bus, or a live
 * report and the REST history) is harmless.
 */
export class Timeline {
  private _entries = new Map<string, IEntry>();
  private _seen = new Set<string>();
  private _order = 0;
  private _listeners = new Set<() => void>();

  /** Entries, newest first. */
  get entries(): IEntry[] {
    return [...this._entries.values()].sort((a, b) => b.order - a.order);
  }

  get size(): number {
    return this._entries.size;
  }

  entry(key: string): IEntry | undefined {
    return this._entries.get(key);
  }

  onChange(listener: () => void): () => void {
    this._listeners.add(listener);
    return () => this._listeners.delete(listener);
  }

  /**
   * Add a report. Returns the entry it created or updated, null if the report
   * was a duplicate, stale, or had nothing to report.
   */
  add(report: IReport, origin: 'live' | 'history', now = Date.now()): IEntry | null {
    const fingerprint = reportFingerprint(report);
    if (this._seen.has(fingerprint)) {
      return null;
    }
    this._seen.add(fingerprint);
    const key = report.cell_id
      ? report.cell_id
      : `count:${report.execution_count ?? 'none'}`;
    const existing = this._entries.get(key);
    // History is older than anything live already shown for this cell.
    if (existing && existing.origin === 'live' && origin === 'history') {
      return null;
    }
    if (!hasSomethingToReport(report)) {
      // The cell ran again with nothing to say: its old entry is stale.
      if (existing) {
        this._entries.delete(key);
        this._emit();
      }
      return null;
    }
    const entry: IEntry = {
      key,
      cellId: report.cell_id ?? null,
      executionCount: report.execution_count,
      report,
      badges: reportBadges(report),
      level: reportLevel(report),
      order: ++this._order,
      origin,
      receivedAt: now
    };
    this._entries.set(key, entry);
    this._emit();
    return entry;
  }

  clear(): void {
    this._entries.clear();
    this._seen.clear();
    this._emit();
  }

  private _emit(): void {
    for (const listener of [...this._listeners]) {
      listener();
    }
  }
}

/** Group findings by code cell index (null: not in a cell), in cell order. */
export function groupFindingsByCell(findings: IFinding[]): Map<number | null, IFinding[]> {
  const sorted = [...findings].sort(
    (a, b) =>
      (a.cell ?? -1) - (b.cell ?? -1) || a.line - b.line || a.column - b.column
  );
  const groups = new Map<number | null, IFinding[]>();
  for (const finding of sorted) {
    const list = groups.get(finding.cell) ?? [];
    list.push(finding);
    groups.set(finding.cell, list);
  }
  return groups;
}

/**
 * Convert a 1-based line and code-point column into a UTF-16 offset within
 * `text` (what CodeMirror counts), clamped to the text.
 */
export function offsetOf(text: string, line: number, column: number): number {
  let offset = 0;
  let currentLine = 1;
  while (currentLine < line) {
    const next = text.indexOf('\n', offset);
    if (next < 0) {
      return text.length;
    }
    offset = next + 1;
    currentLine++;
  }
  let lineEnd = text.indexOf('\n', offset);
  if (lineEnd < 0) {
    lineEnd = text.length;
  }
  let remaining = Math.max(0, column - 1);
  let position = offset;
  while (remaining > 0 && position < lineEnd) {
    const code = text.charCodeAt(position);
    position += code >= 0xd800 && code <= 0xdbff ? 2 : 1;
    remaining--;
  }
  return Math.min(position, lineEnd);
}

/** Whether a course URL should open in the browser (http/https only). */
export function isExternalCourseUrl(url: string): boolean {
  return /^https?:\/\//i.test(url);
}

/**
 * Split prose that marks code with backticks (as the monitor and the rules
 * write it) into text parts; unpaired backticks stay as they are.
 */
export function inlineCode(text: string): TextPart[] {
  const parts: TextPart[] = [];
  const pattern = /`([^`\n]+)`/g;
  let last = 0;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(text)) !== null) {
    if (match.index > last) {
      parts.push({ text: text.slice(last, match.index) });
    }
    parts.push({ text: match[1], code: true });
    last = match.index + match[0].length;
  }
  if (last < text.length) {
    parts.push({ text: text.slice(last) });
  }
  return parts;
}
