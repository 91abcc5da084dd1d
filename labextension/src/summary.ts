/**
 * What a report amounts to, as the panel shows it: its badges, the text of the
 * badge on its cell and the level of its entry. All of it is read from the
 * report's own fields (`counts`, `summary`, `level`, a note's `kind`), which
 * the kernel monitor computes (docs/report.md, "What a report means"); nothing
 * here decides again what counts as a retrace, a tip or information.
 */

import { INote, IReport } from './wire';

export interface IBadge {
  kind: 'traces' | 'retraces' | 'variables' | 'error' | 'tips' | 'information';
  count: number;
  label: string;
}

const plural = (n: number, one: string, many: string): string =>
  `${n} ${n === 1 ? one : many}`;

/** The badges of one report, in display order. */
export function reportBadges(report: IReport): IBadge[] {
  const counts = report.counts;
  const badges: IBadge[] = [];
  if (counts.traces > 0) {
    badges.push({
      kind: 'traces',
      count: counts.traces,
      label: plural(counts.traces, 'trace', 'traces')
    });
  }
  if (counts.retraces > 0) {
    badges.push({
      kind: 'retraces',
      count: counts.retraces,
      label: plural(counts.retraces, 'retrace', 'retraces')
    });
  }
  if (counts.variables > 0) {
    badges.push({
      kind: 'variables',
      count: counts.variables,
      label: plural(counts.variables, 'variable', 'variables')
    });
  }
  if (counts.errors > 0) {
    badges.push({ kind: 'error', count: counts.errors, label: 'error' });
  }
  if (counts.tips > 0) {
    badges.push({ kind: 'tips', count: counts.tips, label: plural(counts.tips, 'tip', 'tips') });
  }
  if (badges.length === 0 && counts.information > 0) {
    // Only notes about tfcoach itself: say so, as the summary does.
    badges.push({
      kind: 'information',
      count: counts.information,
      label: plural(counts.information, 'note', 'notes')
    });
  }
  return badges;
}

/** Notes that teach something (a course link), not those about tfcoach itself. */
export function coachingNotes(report: IReport): INote[] {
  return report.notes.filter(n => n.kind === 'coaching');
}

/** Whether a report has anything worth an entry. */
export function hasSomethingToReport(report: IReport): boolean {
  return report.level !== 'none';
}

/** The short text of the badge on a cell: the report's one-line summary. */
export function cellBadgeText(report: IReport): string {
  return report.summary;
}

/** The severity of an entry, for styling. */
export function reportLevel(report: IReport): 'error' | 'warning' | 'info' {
  return report.level === 'none' ? 'info' : report.level;
}
