/**
 * Static findings inline: the notebook's code cells are analysed through
 * `POST tfcoach/api/analyze` (debounced on edits) and shown in each cell
 * editor as CodeMirror 6 lint diagnostics (underline + message + course link).
 * The page sends the notebook's path and the coach's rule settings: the server
 * applies the `[tool.tfcoach]` of the notebook's folder and the settings on top,
 * and says when that configuration is invalid (shown once in a notification).
 *
 * `@codemirror/lint` is not one of JupyterLab's shared singletons, so this
 * package bundles its own copy; it builds on the shared `@codemirror/state`
 * and `@codemirror/view`, and `setDiagnostics` installs the lint state field
 * into an editor the first time it is used there.
 */
import { Diagnostic, setDiagnostics } from '@codemirror/lint';
import { EditorView } from '@codemirror/view';
import { Notification } from '@jupyterlab/apputils';
import { Cell, ICellModel } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { CoachApi } from './api';
import { CourseOpener, courseLink, el, textParts } from './dom';
import { offsetOf } from './positions';
import { IFinding } from './wire';
import { inlineCode } from './wording';
import { CoachSettings } from './settings';

/** Wait this long after the last edit before analysing. */
export const ANALYZE_DEBOUNCE_MS = 500;

/** Configuration errors on screen: each is notified once, not on every analysis. */
const shownConfigErrors = new Set<string>();

const SEVERITY: Record<string, Diagnostic['severity']> = {
  error: 'error',
  warning: 'warning',
  information: 'info',
  info: 'info',
  hint: 'hint'
};

/** The CodeMirror view behind a cell's editor, if it has one yet. */
export function cellView(cell: Cell): EditorView | null {
  const editor = cell.editor as unknown as { editor?: unknown } | null;
  const view = editor?.editor as EditorView | undefined;
  if (view && typeof view.dispatch === 'function' && view.state) {
    return view;
  }
  return null;
}

/** Findings to CodeMirror diagnostics for one cell whose text is `text`. */
export function toDiagnostics(
  findings: IFinding[],
  text: string,
  open: CourseOpener
): Diagnostic[] {
  return findings.map(finding => {
    let from = offsetOf(text, finding.line, finding.column);
    let to = offsetOf(text, finding.end_line, finding.end_column);
    if (to < from) {
      to = from;
    }
    if (to === from) {
      // Underline at least one character (or the end of the line).
      if (from < text.length && text[from] !== '\n') {
        to = from + 1;
      } else if (from > 0) {
        from -= 1;
      }
    }
    const diagnostic: Diagnostic = {
      from,
      to,
      severity: SEVERITY[finding.severity] ?? 'warning',
      source: 'tfcoach',
      message: `${finding.message} (${finding.code} ${finding.name})`,
      markClass: `jp-tfcoach-mark jp-tfcoach-mark-${finding.code}`,
      renderMessage: () =>
        el(
          'span',
          { className: 'jp-tfcoach-diagnostic' },
          el('span', { className: 'jp-tfcoach-diagnostic-message' }, ...textParts(inlineCode(finding.message))),
          ' ',
          el('span', { className: 'jp-tfcoach-code' }, `${finding.code} ${finding.name}`),
          finding.fix
            ? el('span', { className: 'jp-tfcoach-fix' }, 'Fix: ', ...textParts(inlineCode(finding.fix.description)))
            : null,
          ' ',
          courseLink(finding.course, open)
        )
    };
    const fix = finding.fix;
    if (fix && fix.edits.length > 0) {
      diagnostic.actions = [
        {
          name: 'Fix',
          apply: (view: EditorView) => {
            const current = view.state.doc.toString();
            if (current !== text) {
              return; // Stale: the cell changed since the analysis.
            }
            view.dispatch({
              changes: fix.edits.map(edit => ({
                from: offsetOf(current, edit.line, edit.column),
                to: offsetOf(current, edit.end_line, edit.end_column),
                insert: edit.new_text
              }))
            });
          }
        }
      ];
    }
    return diagnostic;
  });
}

/** Keeps one notebook's static findings fresh and shown in its editors. */
export class NotebookLinter implements IDisposable {
  private _findings: IFinding[] = [];
  private _sources: string[] = [];
  private _cellIds: string[] = [];
  private _timer: number | undefined;
  private _running: Promise<void> | null = null;
  private _again = false;
  private _changed = new Signal<this, void>(this);
  private _disposed = false;
  private _failed = false;
  private _request = '';
  private _configError: string | null = null;

  constructor(
    readonly panel: NotebookPanel,
    private _api: CoachApi,
    private _settings: CoachSettings,
    private _open: CourseOpener
  ) {
    void panel.context.ready.then(() => {
      if (this._disposed) {
        return;
      }
      panel.model?.contentChanged.connect(this._onContentChanged, this);
      this.schedule(0);
    });
    panel.content.modelChanged.connect(() => {
      panel.model?.contentChanged.connect(this._onContentChanged, this);
      this.schedule(0);
    });
    panel.context.pathChanged.connect(this._onPathChanged, this);
    _settings.changed.connect(this._onSettings, this);
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** Whether the last analysis request failed (no server extension?). */
  get failed(): boolean {
    return this._failed;
  }

  /** Findings of the last analysis (the server applied the configuration). */
  get findings(): IFinding[] {
    return this._findings;
  }

  /** What the server said is wrong with the notebook's configuration, or null. */
  get configError(): string | null {
    return this._configError;
  }

  /** The model id of the code cell a finding's `cell` index refers to. */
  cellIdOf(finding: IFinding): string | null {
    return finding.cell === null ? null : (this._cellIds[finding.cell] ?? null);
  }

  schedule(delay = ANALYZE_DEBOUNCE_MS): void {
    if (this._disposed) {
      return;
    }
    window.clearTimeout(this._timer);
    this._timer = window.setTimeout(() => void this.run(), delay);
  }

  /** Analyse now (at most one request in flight; a change meanwhile reruns). */
  async run(): Promise<void> {
    if (this._running) {
      this._again = true;
      return this._running;
    }
    this._running = this._run().finally(() => {
      this._running = null;
      if (this._again) {
        this._again = false;
        this.schedule(0);
      }
    });
    return this._running;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    window.clearTimeout(this._timer);
    this._settings.changed.disconnect(this._onSettings, this);
    this.panel.context.pathChanged.disconnect(this._onPathChanged, this);
    this._setConfigError(null);
    Signal.clearData(this);
  }

  private async _run(): Promise<void> {
    const cells = this._codeCells();
    const sources = cells.map(c => c.model.sharedModel.getSource());
    const ids = cells.map(c => c.model.id);
    const options = { path: this.panel.context.localPath, settings: this._settings.ruleSettings };
    const request = JSON.stringify(options);
    if (
      request === this._request &&
      sources.length === this._sources.length &&
      sources.every((s, i) => s === this._sources[i]) &&
      ids.every((id, i) => id === this._cellIds[i])
    ) {
      this.apply();
      return;
    }
    let findings: IFinding[] = [];
    let configError: string | null = null;
    try {
      if (sources.some(s => s.trim())) {
        ({ findings, configError } = await this._api.analyze(sources, options));
      }
    } catch (error) {
      if (!this._failed) {
        console.warn('tfcoach: static analysis unavailable:', error);
        this._failed = true;
        this._changed.emit();
      }
      return;
    }
    if (this._disposed) {
      return;
    }
    this._failed = false;
    this._findings = findings;
    this._sources = sources;
    this._cellIds = ids;
    this._request = request;
    this._setConfigError(configError);
    this.apply();
    this._changed.emit();
  }

  /** Push the current findings into every code cell's editor. */
  apply(): void {
    if (this._disposed) {
      return;
    }
    const show = this._settings.value.showInlineFindings;
    const byCell = new Map<string, IFinding[]>();
    for (const finding of this.findings) {
      const id = this.cellIdOf(finding);
      if (id) {
        byCell.set(id, [...(byCell.get(id) ?? []), finding]);
      }
    }
    for (const cell of this._codeCells()) {
      const index = this._cellIds.indexOf(cell.model.id);
      const analysed = index >= 0 ? this._sources[index] : undefined;
      const wanted = show ? (byCell.get(cell.model.id) ?? []) : [];
      this._applyToCell(cell, wanted, analysed);
    }
  }

  private _applyToCell(cell: Cell, findings: IFinding[], analysed: string | undefined): void {
    const view = cellView(cell);
    if (!view) {
      // Editors of windowed-out cells appear later.
      if (findings.length > 0) {
        void cell.ready.then(() => {
          if (!this._disposed && cellView(cell)) {
            this.apply();
          }
        });
      }
      return;
    }
    const text = view.state.doc.toString();
    if (findings.length > 0 && text !== analysed) {
      return; // Edited since: the next analysis replaces these.
    }
    try {
      view.dispatch(setDiagnostics(view.state, toDiagnostics(findings, text, this._open)));
    } catch (error) {
      console.warn('tfcoach: could not show findings in a cell', error);
    }
  }

  private _codeCells(): Cell<ICellModel>[] {
    return this.panel.content.widgets.filter(cell => cell.model.type === 'code');
  }

  private _onContentChanged(): void {
    this.schedule();
  }

  private _onSettings(): void {
    this.apply();
    this._changed.emit();
    this.schedule(0); // The rule settings are the server's to apply: ask again if they changed.
  }

  private _onPathChanged(): void {
    this.schedule(0); // Moved or renamed: another folder's configuration may apply.
  }

  /** Notify a configuration error once (while it lasts), whichever notebook meets it. */
  private _setConfigError(message: string | null): void {
    if (message === this._configError) {
      return;
    }
    if (this._configError) {
      shownConfigErrors.delete(this._configError);
    }
    this._configError = message;
    if (message && !shownConfigErrors.has(message)) {
      shownConfigErrors.add(message);
      Notification.error(`TF Coach: ${message}`, { autoClose: false });
    }
  }
}
