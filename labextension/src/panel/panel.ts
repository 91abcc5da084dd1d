/**
 * The "TF Coach" right-sidebar panel: for the active notebook, a timeline
 * (newest first) of the cells that had something to report, and the static
 * findings "In this notebook". Rendered with text nodes only.
 */
import { Cell } from '@jupyterlab/cells';
import { LabIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { CourseOpener, courseLink, el, textParts } from '../dom';
import { cellLabel, groupFindingsByCell } from '../positions';
import { IEntry } from '../timeline';
import { IFinding, ITraceInfo } from '../wire';
import {
  formatReason,
  formatValue,
  formatVariable,
  hasDataSummary,
  inlineCode
} from '../wording';
import { NotebookCoach } from '../notebook';

export const PANEL_ID = 'tfcoach-panel';
export const EMPTY_TEXT =
  'Run a cell that uses TensorFlow: traces, retraces, variables that left training and explained errors appear here.';
const NO_NOTEBOOK_TEXT =
  'Open a notebook and run a cell that uses TensorFlow: the coach explains traces, retraces, variables and errors here.';

const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" viewBox="0 0 24 24">
  <path class="jp-icon3" fill="#616161" d="M12 3 1 9l11 6 9-4.91V17h2V9L12 3zm-7 9.18v4L12 20l7-3.82v-4L12 16l-7-3.82z"/>
</svg>`;

export const coachIcon = new LabIcon({ name: 'jupyterlab_tfcoach:coach', svgstr: ICON_SVG });

export interface IPanelOptions {
  openCourse: CourseOpener;
  /** Scroll to and select a cell; with a line, put the cursor there. */
  jumpToCell: (coach: NotebookCoach, cell: Cell, line?: number, column?: number) => void;
}

export class CoachPanel extends Widget {
  private _coach: NotebookCoach | null = null;
  private _unsubscribe: (() => void) | null = null;
  private _collapsed = new WeakMap<NotebookCoach, Set<string>>();
  private _findingsCollapsed = false;
  private _scheduled = false;
  private _lastAnnounced = '';
  private _header: HTMLElement;
  private _status: HTMLElement;
  private _live: HTMLElement;
  private _timeline: HTMLElement;
  private _findings: HTMLElement;

  constructor(private _options: IPanelOptions) {
    super();
    this.id = PANEL_ID;
    this.title.caption = 'TF Coach';
    this.title.label = 'TF Coach';
    this.title.icon = coachIcon;
    this.addClass('jp-tfcoach-panel');
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', 'TF Coach');
    this._header = el('div', { className: 'jp-tfcoach-header' });
    this._status = el('div', { className: 'jp-tfcoach-status' });
    this._live = el('div', {
      className: 'jp-tfcoach-sr-only',
      attrs: { 'aria-live': 'polite' }
    });
    this._timeline = el('section', {
      className: 'jp-tfcoach-section jp-tfcoach-timeline-section',
      attrs: { 'aria-label': 'Cell reports' }
    });
    this._findings = el('section', {
      className: 'jp-tfcoach-section jp-tfcoach-findings-section',
      attrs: { 'aria-label': 'In this notebook' }
    });
    this.node.append(this._header, this._status, this._live, this._timeline, this._findings);
    this._render();
  }

  get coach(): NotebookCoach | null {
    return this._coach;
  }

  /** Follow another notebook (null: none is active). */
  setCoach(coach: NotebookCoach | null): void {
    if (coach === this._coach) {
      return;
    }
    this._unsubscribe?.();
    this._unsubscribe = null;
    this._coach?.linter.changed.disconnect(this._schedule, this);
    this._coach?.statusChanged.disconnect(this._schedule, this);
    this._coach = coach;
    if (coach) {
      const off = coach.timeline.onChange(() => this._schedule());
      coach.linter.changed.connect(this._schedule, this);
      coach.statusChanged.connect(this._schedule, this);
      const onDisposed = () => {
        if (this._coach === coach) {
          this.setCoach(null);
        }
      };
      coach.panel.disposed.connect(onDisposed);
      this._unsubscribe = () => {
        off();
        coach.panel.disposed.disconnect(onDisposed);
      };
    }
    this._lastAnnounced = '';
    this._render();
  }

  /** Expand an entry, scroll it into view and focus it. */
  reveal(key: string): void {
    if (!this._coach) {
      return;
    }
    this._collapsedKeys(this._coach).delete(key);
    this._render();
    const node = this._timeline.querySelector<HTMLElement>(
      `[data-key="${CSS.escape(key)}"]`
    );
    if (node) {
      node.scrollIntoView({ block: 'nearest' });
      node.classList.add('jp-tfcoach-flash');
      window.setTimeout(() => node.classList.remove('jp-tfcoach-flash'), 1500);
      node.querySelector<HTMLElement>('.jp-tfcoach-entry-jump')?.focus();
    }
  }

  dispose(): void {
    this._unsubscribe?.();
    super.dispose();
  }

  private _collapsedKeys(coach: NotebookCoach): Set<string> {
    let set = this._collapsed.get(coach);
    if (!set) {
      set = new Set();
      this._collapsed.set(coach, set);
    }
    return set;
  }

  private _schedule(): void {
    if (this._scheduled) {
      return;
    }
    this._scheduled = true;
    queueMicrotask(() => {
      this._scheduled = false;
      if (!this.isDisposed) {
        this._render();
      }
    });
  }

  private _render(): void {
    const coach = this._coach;
    // Keep keyboard focus on the same control across re-renders.
    const active = document.activeElement as HTMLElement | null;
    const focusKey =
      active && this.node.contains(active)
        ? (active.closest('[data-focus-key]') as HTMLElement | null)?.dataset.focusKey
        : undefined;

    this._header.replaceChildren(el('h2', { className: 'jp-tfcoach-title' }, 'TF Coach'));
    if (coach) {
      this._header.appendChild(
        el(
          'div',
          { className: 'jp-tfcoach-notebook', title: coach.panel.context.path },
          coach.panel.title.label || coach.panel.context.path
        )
      );
    }
    this._renderStatus(coach);
    this._renderTimeline(coach);
    this._renderFindings(coach);

    if (focusKey) {
      this.node
        .querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(focusKey)}"]`)
        ?.focus();
    }
  }

  private _renderStatus(coach: NotebookCoach | null): void {
    const problems: string[] = [];
    if (coach?.historyError) {
      problems.push('The coach server extension did not answer: reports may be missing.');
    }
    if (coach?.linter.failed) {
      problems.push('Static analysis is unavailable right now.');
    }
    this._status.replaceChildren(...problems.map(text => el('p', {}, text)));
    this._status.hidden = problems.length === 0;
  }

  private _renderTimeline(coach: NotebookCoach | null): void {
    const entries = coach ? coach.timeline.entries : [];
    const heading = el('h3', { className: 'jp-tfcoach-section-title' }, 'Cell reports');
    if (!coach || entries.length === 0) {
      this._timeline.replaceChildren(
        heading,
        el('p', { className: 'jp-tfcoach-empty' }, coach ? EMPTY_TEXT : NO_NOTEBOOK_TEXT)
      );
      return;
    }
    const collapsed = this._collapsedKeys(coach);
    const list = el('ul', { className: 'jp-tfcoach-timeline' });
    for (const entry of entries) {
      list.appendChild(this._renderEntry(coach, entry, !collapsed.has(entry.key)));
    }
    this._timeline.replaceChildren(heading, list);
    const newest = entries[0];
    const announce = `${newest.key}:${newest.order}`;
    if (announce !== this._lastAnnounced) {
      this._lastAnnounced = announce;
      this._live.textContent = `Cell ${
        newest.executionCount !== null ? `[${newest.executionCount}]` : ''
      }: ${newest.badges.map(b => b.label).join(', ')}`;
    }
  }

  private _renderEntry(coach: NotebookCoach, entry: IEntry, expanded: boolean): HTMLElement {
    const report = entry.report;
    const detailsId = `jp-tfcoach-details-${entry.key.replace(/[^A-Za-z0-9_-]/g, '_')}`;
    const traces = report.traces.filter(t => t.new_traces > 0 || t.reasons.length > 0);
    const titleParts: string[] = [
      ...traces.map(t => t.function),
      ...report.variables.map(v => v.name)
    ];
    const errorInTitle = report.error !== null && titleParts.length === 0;
    if (report.error && errorInTitle) {
      titleParts.push(report.error.type);
    }
    const toggle = el(
      'button',
      {
        className: 'jp-tfcoach-toggle',
        attrs: {
          type: 'button',
          'aria-expanded': String(expanded),
          'aria-controls': detailsId,
          'aria-label': expanded ? 'Hide details' : 'Show details',
          'data-focus-key': `toggle:${entry.key}`
        },
        title: expanded ? 'Hide details' : 'Show details'
      },
      expanded ? '\u25be' : '\u25b8'
    );
    toggle.addEventListener('click', event => {
      event.stopPropagation();
      const set = this._collapsedKeys(coach);
      if (set.has(entry.key)) {
        set.delete(entry.key);
      } else {
        set.add(entry.key);
      }
      this._render();
    });
    const jump = el(
      'button',
      {
        className: 'jp-tfcoach-entry-jump',
        attrs: { type: 'button', 'data-focus-key': `jump:${entry.key}` },
        title: 'Go to the cell'
      },
      el(
        'span',
        { className: 'jp-tfcoach-count' },
        entry.executionCount !== null ? `[${entry.executionCount}]` : '[ ]'
      ),
      el('span', { className: 'jp-tfcoach-entry-title' }, titleParts.join(', ') || 'cell')
    );
    jump.addEventListener('click', () => this._jumpToEntry(coach, entry));
    const badges = el(
      'div',
      { className: 'jp-tfcoach-badges' },
      ...entry.badges.map(badge =>
        el(
          'span',
          { className: `jp-tfcoach-badge jp-tfcoach-badge-${badge.kind}` },
          badge.label
        )
      )
    );
    const details = el('div', {
      className: 'jp-tfcoach-details',
      attrs: { id: detailsId }
    });
    details.hidden = !expanded;
    for (const trace of traces) {
      details.appendChild(this._renderTrace(trace));
    }
    if (report.variables.length > 0) {
      const list = el('ul', { className: 'jp-tfcoach-variables' });
      for (const variable of report.variables) {
        list.appendChild(
          el(
            'li',
            { className: 'jp-tfcoach-variable' },
            el('div', {}, ...textParts(formatVariable(variable))),
            variable.text
              ? el('div', { className: 'jp-tfcoach-explanation' }, ...textParts(inlineCode(variable.text)))
              : null,
            courseLink(variable.course, this._options.openCourse)
          )
        );
      }
      details.appendChild(
        el('div', { className: 'jp-tfcoach-block' }, el('h4', {}, 'Variables'), list)
      );
    }
    if (report.error) {
      const error = report.error;
      details.appendChild(
        el(
          'div',
          { className: 'jp-tfcoach-block jp-tfcoach-error' },
          el('h4', {}, errorInTitle ? 'What the error means' : error.type),
          error.explanation
            ? el('div', { className: 'jp-tfcoach-explanation' }, ...textParts(inlineCode(error.explanation)))
            : null,
          error.message
            ? el('pre', { className: 'jp-tfcoach-error-message' }, formatValue(error.message, 600))
            : null,
          courseLink(error.course, this._options.openCourse)
        )
      );
    }
    if (report.notes.length > 0) {
      details.appendChild(
        el(
          'ul',
          { className: 'jp-tfcoach-notes' },
          ...report.notes.map(note =>
            el(
              'li',
              { className: 'jp-tfcoach-note' },
              el('div', { className: 'jp-tfcoach-explanation' }, ...textParts(inlineCode(note.text))),
              courseLink(note.course, this._options.openCourse)
            )
          )
        )
      );
    }
    const item = el(
      'li',
      {
        className: `jp-tfcoach-entry jp-tfcoach-level-${entry.level}`,
        attrs: {
          'data-key': entry.key,
          'data-execution-count': entry.executionCount === null ? '' : String(entry.executionCount)
        }
      },
      el('div', { className: 'jp-tfcoach-entry-header' }, toggle, jump),
      badges,
      details
    );
    return item;
  }

  private _renderTrace(trace: ITraceInfo): HTMLElement {
    const retraces = trace.retraces;
    const counts =
      trace.new_traces === 0
        ? 'reused an earlier trace'
        : `${trace.new_traces} ${trace.new_traces === 1 ? 'trace' : 'traces'} in this cell` +
      (trace.total_traces !== trace.new_traces ? `, ${trace.total_traces} in total` : '') +
      (retraces > 0 ? ` (${retraces} ${retraces === 1 ? 'retrace' : 'retraces'})` : '');
    const reasons = el('ul', { className: 'jp-tfcoach-reasons' });
    for (const reason of trace.reasons) {
      // The summary line, then the core's explanation and fix under it (a reason
      // without data is its explanation already).
      const explained = hasDataSummary(reason) && reason.text;
      reasons.appendChild(
        el(
          'li',
          { className: `jp-tfcoach-reason jp-tfcoach-reason-${reason.kind}` },
          el('div', {}, ...textParts(formatReason(reason))),
          explained
            ? el('div', { className: 'jp-tfcoach-explanation' }, ...textParts(inlineCode(explained)))
            : null
        )
      );
    }
    return el(
      'div',
      { className: 'jp-tfcoach-block jp-tfcoach-trace' },
      el(
        'div',
        { className: 'jp-tfcoach-trace-head' },
        el('code', { className: 'jp-tfcoach-function' }, trace.function),
        ' \u2014 ',
        counts
      ),
      trace.defined_at
        ? el('div', { className: 'jp-tfcoach-defined-at' }, `defined at ${trace.defined_at}`)
        : null,
      trace.reasons.length > 0 ? reasons : null,
      courseLink(trace.course, this._options.openCourse)
    );
  }

  private _renderFindings(coach: NotebookCoach | null): void {
    if (!coach) {
      this._findings.replaceChildren();
      this._findings.hidden = true;
      return;
    }
    this._findings.hidden = false;
    const findings = coach.linter.findings;
    const toggle = el(
      'button',
      {
        className: 'jp-tfcoach-section-toggle',
        attrs: {
          type: 'button',
          'aria-expanded': String(!this._findingsCollapsed),
          'data-focus-key': 'findings-toggle'
        }
      },
      `${this._findingsCollapsed ? '\u25b8' : '\u25be'} In this notebook`,
      el('span', { className: 'jp-tfcoach-section-count' }, String(findings.length))
    );
    toggle.addEventListener('click', () => {
      this._findingsCollapsed = !this._findingsCollapsed;
      this._render();
    });
    const heading = el('h3', { className: 'jp-tfcoach-section-title' }, toggle);
    if (this._findingsCollapsed) {
      this._findings.replaceChildren(heading);
      return;
    }
    if (findings.length === 0) {
      this._findings.replaceChildren(
        heading,
        el(
          'p',
          { className: 'jp-tfcoach-empty' },
          'No static findings: tfcoach checks the code cells as you edit them.'
        )
      );
      return;
    }
    const list = el('ul', { className: 'jp-tfcoach-findings' });
    const codeCells = coach.panel.content.widgets.filter(c => c.model.type === 'code');
    for (const [cellIndex, group] of groupFindingsByCell(findings)) {
      for (const finding of group) {
        list.appendChild(this._renderFinding(coach, finding, cellIndex, codeCells));
      }
    }
    this._findings.replaceChildren(heading, list);
  }

  private _renderFinding(
    coach: NotebookCoach,
    finding: IFinding,
    cellIndex: number | null,
    codeCells: Cell[]
  ): HTMLElement {
    const cellId = coach.linter.cellIdOf(finding);
    const cell = cellId ? codeCells.find(c => c.model.id === cellId) : undefined;
    // Among the code cells shown now (a cell inserted since the analysis moves it), else
    // as the analysis counted them.
    const codeIndex = cell ? codeCells.indexOf(cell) : cellIndex;
    const where = `${codeIndex !== null ? cellLabel(codeIndex) : 'notebook'}, line ${finding.line}`;
    const jump = el(
      'button',
      {
        className: 'jp-tfcoach-finding-jump',
        attrs: {
          type: 'button',
          'data-focus-key': `finding:${finding.code}:${finding.cell}:${finding.line}:${finding.column}`
        },
        title: 'Go to the line'
      },
      el(
        'span',
        { className: `jp-tfcoach-code jp-tfcoach-severity-${finding.severity}` },
        finding.code
      ),
      el('span', { className: 'jp-tfcoach-finding-name' }, finding.name),
      el('span', { className: 'jp-tfcoach-finding-where' }, where)
    );
    jump.addEventListener('click', () => {
      if (cell) {
        this._options.jumpToCell(coach, cell, finding.line, finding.column);
      }
    });
    return el(
      'li',
      {
        className: 'jp-tfcoach-finding',
        attrs: { 'data-code': finding.code }
      },
      jump,
      el('div', { className: 'jp-tfcoach-finding-message' }, ...textParts(inlineCode(finding.message))),
      finding.fix
        ? el('div', { className: 'jp-tfcoach-fix' }, 'Fix: ', ...textParts(inlineCode(finding.fix.description)))
        : null,
      courseLink(finding.course, this._options.openCourse)
    );
  }

  private _jumpToEntry(coach: NotebookCoach, entry: IEntry): void {
    const cell = coach.cellFor(entry);
    if (cell) {
      this._options.jumpToCell(coach, cell);
    }
  }
}
