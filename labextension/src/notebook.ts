/**
 * The coach of one notebook: follows its kernel, collects the kernel's reports
 * (live from the event bus, earlier ones from the REST history) into a timeline, keeps static findings
 * fresh, and finds cells for entries.
 */
import { Cell } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { CoachApi, IKernelReport, LiveReports } from './api';
import { CourseOpener } from './dom';
import { NotebookLinter } from './lint';
import { IEntry, Timeline } from './timeline';
import { IReport } from './wire';
import { CoachSettings } from './settings';

export class NotebookCoach implements IDisposable {
  readonly timeline = new Timeline();
  readonly linter: NotebookLinter;
  private _kernelId: string | null = null;
  private _disposed = false;
  private _historyError = false;
  private _statusChanged = new Signal<this, void>(this);

  constructor(
    readonly panel: NotebookPanel,
    private _api: CoachApi,
    private _live: LiveReports,
    settings: CoachSettings,
    open: CourseOpener
  ) {
    this.linter = new NotebookLinter(panel, _api, settings, open);
    const session = panel.sessionContext;
    session.kernelChanged.connect(this._onKernelChanged, this);
    _live.received.connect(this._onLiveReport, this);
    void session.ready.then(() => this._onKernelChanged());
    panel.disposed.connect(() => this.dispose());
  }

  get kernelId(): string | null {
    return this._kernelId;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** Emitted when `historyError` changes. */
  get statusChanged(): ISignal<this, void> {
    return this._statusChanged;
  }

  /** Whether the REST history could not be loaded (no server extension?). */
  get historyError(): boolean {
    return this._historyError;
  }

  /** Reload the kernel's report history from the server. */
  async loadHistory(): Promise<void> {
    const kernelId = this._kernelId;
    if (!kernelId) {
      return;
    }
    let reports: IReport[];
    try {
      reports = await this._api.reports(kernelId);
      this._setHistoryError(false);
    } catch (error) {
      if (!this._historyError) {
        console.warn('tfcoach: report history unavailable:', error);
      }
      this._setHistoryError(true);
      return;
    }
    if (this._disposed || kernelId !== this._kernelId) {
      return;
    }
    for (const report of reports) {
      this.timeline.add(report, 'history');
    }
  }

  /** The cell an entry belongs to (by cell id, else by execution count). */
  cellFor(entry: Pick<IEntry, 'cellId' | 'executionCount'>): Cell | null {
    const cells = this.panel.content.widgets;
    if (entry.cellId) {
      const byId = cells.find(cell => cell.model.id === entry.cellId);
      if (byId) {
        return byId;
      }
    }
    if (entry.executionCount !== null) {
      const byCount = cells.find(
        cell =>
          cell.model.type === 'code' &&
          (cell.model as unknown as { executionCount: number | null }).executionCount ===
            entry.executionCount
      );
      if (byCount) {
        return byCount;
      }
    }
    return null;
  }

  /** The timeline entry of a cell, if any. */
  entryForCell(cell: Cell): IEntry | null {
    const direct = this.timeline.entry(cell.model.id);
    if (direct) {
      return direct;
    }
    return this.timeline.entries.find(entry => this.cellFor(entry) === cell) ?? null;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._live.received.disconnect(this._onLiveReport, this);
    this.linter.dispose();
    Signal.clearData(this);
  }

  private _setHistoryError(value: boolean): void {
    if (value !== this._historyError) {
      this._historyError = value;
      this._statusChanged.emit();
    }
  }

  private _onKernelChanged(): void {
    if (this._disposed) {
      return;
    }
    const id = this.panel.sessionContext.session?.kernel?.id ?? null;
    if (id === this._kernelId) {
      return;
    }
    this._kernelId = id;
    void this.loadHistory();
  }

  private _onLiveReport(_: LiveReports, received: IKernelReport): void {
    if (received.kernelId === this._kernelId) {
      this.timeline.add(received.report, 'live');
    }
  }
}
