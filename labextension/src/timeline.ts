/**
 * The per-notebook timeline: one entry per cell (its latest report), newest
 * first, fed by live reports and the REST history alike.
 */

import { IBadge, hasSomethingToReport, reportBadges, reportLevel } from './summary';
import { IReport } from './wire';

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
