/**
 * What a report amounts to: retrace counts, badges, the cell badge text and
 * the entry's level.
 */

import { INote, IReport, ITraceInfo } from './wire';

/** Reason kinds that are advice about a trace, not a retrace. */
const NOT_RETRACES = new Set(['first_trace', 'side_effect', 'stale_value']);

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
