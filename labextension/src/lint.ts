/**
 * Static findings inline: the notebook's code cells are analysed through
 * `POST tfcoach/api/analyze` (debounced on edits) and shown in each cell
 * editor as CodeMirror 6 lint diagnostics (underline + message + course link).
 * The page sends the notebook's path and the coach's rule settings: the server
 * applies the `[tool.tfcoach]` of the notebook's folder and the settings on top,
 * and says when that configuration is invalid (shown once in a notification).
 *
 * Code the analysis left out is never silent (#24). An expression nested too
 * deeply to check is a warning at its position, in the server's words: nothing
 * else tells the learner that code was not checked. Code that does not parse is
 * only an 'info' mark at the error: Python says so loudly when the cell runs, but
 * while it is being edited the mark explains why its findings are gone. What has
 * no cell (the analysis ran out of time, or exceeded Python's recursion limit)
 * is a notification, once per notebook while it lasts.
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
import { IFinding, IInputProblem } from './wire';
import { inlineCode } from './wording';
import { CoachSettings } from './settings';

/** Wait this long after the last edit before analysing. */
export const ANALYZE_DEBOUNCE_MS = 500;

/** Configuration errors on screen: each is notified once, not on every analysis. */
const shownConfigErrors = new Set<string>();

/** How long a notice of the analysis (not an error of the user's) stays as a toast. */
const NOTICE_TOAST_MS = 8000;

const SEVERITY: Record<string, Diagnostic['severity']> = {
  error: 'error',
  warning: 'warning',
  information: 'info',
  info: 'info',
  hint: 'hint'
};

/**
 * What each editor was last given, and the document it was given for. Setting a
 * cell's diagnostics closes the lint tooltip the learner may be reading, and the
 * notebook changes often without its code changing (a cell runs, its outputs and
 * execution count arrive): the same diagnostics on the same document are not set again.
 */
const appliedToView = new WeakMap<EditorView, { doc: EditorView['state']['doc']; key: string }>();

/** The CodeMirror view behind a cell's editor, if it has one yet. */
export function cellView(cell: Cell): EditorView | null {
  const editor = cell.editor as unknown as { editor?: unknown } | null;
  const view = editor?.editor as EditorView | undefined;
  if (view && typeof view.dispatch === 'function' && view.state) {
    return view;
  }
  return null;
}

/**
 * What the learner reads for code the analysis left out, in a cell or (without a
 * cell) the notebook: the server's words, which say what a depth problem left out.
 */
export function problemText(problem: IInputProblem): string {
  if (problem.kind === 'depth') {
    return problem.message;
  }
  const where = problem.cell === null ? 'this notebook' : 'this cell';
  return `TF Coach checks ${where} once it parses: ${problem.message}`;
}

/**
 * Code left out of the analysis to diagnostics for one cell whose text is `text`:
 * a depth problem underlines from its position to the end of the line (the
 * expression left out starts there), a syntax error one character.
 */
export function problemDiagnostics(problems: IInputProblem[], text: string): Diagnostic[] {
  return problems.map(problem => {
    let from = offsetOf(text, problem.line ?? 1, problem.column ?? 1);
    const newline = text.indexOf('\n', from);
    const lineEnd = newline < 0 ? text.length : newline;
    const wholeRest = problem.kind === 'depth' || problem.line === null;
    const to = wholeRest ? lineEnd : Math.min(from + 1, lineEnd);
    if (to === from && from > 0) {
      from -= 1; // At the end of a line (or of the cell): mark the character before.
    }
    const message = problemText(problem);
    return {
      from,
      to,
      severity: problem.kind === 'depth' ? 'warning' : 'info',
      source: 'tfcoach',
      message,
      markClass: `jp-tfcoach-problem jp-tfcoach-problem-${problem.kind}`,
      renderMessage: () =>
        el(
          'span',
          { className: 'jp-tfcoach-diagnostic' },
          el('span', { className: 'jp-tfcoach-diagnostic-message' }, ...textParts(inlineCode(message)))
        )
    };
  });
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
  private _problems: IInputProblem[] = [];
  private _notes: string[] = [];
  /** The notices notified for this notebook (digits masked), while they last. */
  private _shownNotices = new Set<string>();
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

  /** Code the last analysis left out (does not parse, or nests too deeply). */
  get problems(): IInputProblem[] {
    return this._problems;
  }

  /** What cut the last analysis short (e.g. its time budget), usually nothing. */
  get notes(): string[] {
    return this._notes;
  }

  /** What the server said is wrong with the notebook's configuration, or null. */
  get configError(): string | null {
    return this._configError;
  }

  /** The model id of the code cell a finding's `cell` index refers to. */
  cellIdOf(finding: { cell: number | null }): string | null {
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
    let problems: IInputProblem[] = [];
    let notes: string[] = [];
    try {
      if (sources.some(s => s.trim())) {
        ({ findings, configError, problems, notes } = await this._api.analyze(sources, options));
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
    this._problems = problems;
    this._notes = notes;
    this._sources = sources;
    this._cellIds = ids;
    this._request = request;
    this._setConfigError(configError);
    this._notify();
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
    const problemsByCell = new Map<string, IInputProblem[]>();
    for (const problem of this._problems) {
      const id = this.cellIdOf(problem);
      if (id) {
        problemsByCell.set(id, [...(problemsByCell.get(id) ?? []), problem]);
      }
    }
    for (const cell of this._codeCells()) {
      const index = this._cellIds.indexOf(cell.model.id);
      const analysed = index >= 0 ? this._sources[index] : undefined;
      const wanted = show ? (byCell.get(cell.model.id) ?? []) : [];
      const problems = show ? (problemsByCell.get(cell.model.id) ?? []) : [];
      this._applyToCell(cell, wanted, problems, analysed);
    }
  }

  private _applyToCell(
    cell: Cell,
    findings: IFinding[],
    problems: IInputProblem[],
    analysed: string | undefined
  ): void {
    const shown = findings.length + problems.length;
    const view = cellView(cell);
    if (!view) {
      // Editors of windowed-out cells appear later.
      if (shown > 0) {
        void cell.ready.then(() => {
          if (!this._disposed && cellView(cell)) {
            this.apply();
          }
        });
      }
      return;
    }
    const text = view.state.doc.toString();
    if (shown > 0 && text !== analysed) {
      return; // Edited since: the next analysis replaces these.
    }
    const key = JSON.stringify([findings, problems]);
    const last = appliedToView.get(view);
    if (last && last.doc === view.state.doc && last.key === key) {
      return; // Shown already, on this very document: setting them again would close a tooltip.
    }
    const diagnostics = [
      ...problemDiagnostics(problems, text),
      ...toDiagnostics(findings, text, this._open)
    ];
    try {
      view.dispatch(setDiagnostics(view.state, diagnostics));
      appliedToView.set(view, { doc: view.state.doc, key });
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

  /**
   * Notify what the last analysis says about the notebook as a whole (its notes, and
   * code left out that has no cell), each once while it lasts: typing reanalyses, and
   * a note's time ("stopped after N ms") changes every time.
   */
  private _notify(): void {
    const notices = [
      ...this._notes.map(text => ({ text, type: 'warning' as const })),
      ...this._problems
        .filter(problem => this.cellIdOf(problem) === null)
        .map(problem => ({
          text: problemText({ ...problem, cell: null }),
          type: problem.kind === 'depth' ? ('warning' as const) : ('info' as const)
        }))
    ];
    const keys = new Set<string>();
    for (const { text, type } of notices) {
      const key = text.replace(/\d+/g, '#');
      keys.add(key);
      if (!this._shownNotices.has(key)) {
        Notification.emit(`TF Coach: ${text}`, type, { autoClose: NOTICE_TOAST_MS });
      }
    }
    this._shownNotices = keys;
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
