/**
 * A small badge on each executed cell that had something to report (e.g.
 * "2 retraces"); clicking it opens the panel at that cell's entry.
 */
import { Cell } from '@jupyterlab/cells';
import { IDisposable } from '@lumino/disposable';

import { el } from './dom';
import { cellBadgeText } from './summary';
import { IEntry } from './timeline';
import { NotebookCoach } from './notebook';
import { CoachSettings } from './settings';

export const BADGE_CLASS = 'jp-tfcoach-cell-badge';

export class CellBadges implements IDisposable {
  private _badges = new Map<string, { cell: Cell; node: HTMLElement }>();
  private _disposed = false;
  private _unsubscribe: () => void;

  constructor(
    private _coach: NotebookCoach,
    private _settings: CoachSettings,
    private _reveal: (coach: NotebookCoach, entryKey: string) => void
  ) {
    this._unsubscribe = _coach.timeline.onChange(() => this.sync());
    _settings.changed.connect(this.sync, this);
    _coach.panel.content.model?.cells.changed.connect(this.sync, this);
    _coach.panel.content.modelChanged.connect(() => {
      _coach.panel.content.model?.cells.changed.connect(this.sync, this);
    });
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** Make the badges match the timeline. */
  sync(): void {
    if (this._disposed) {
      return;
    }
    const wanted = new Map<string, { cell: Cell; entry: IEntry }>();
    if (this._settings.value.showCellBadges) {
      for (const entry of this._coach.timeline.entries) {
        const cell = this._coach.cellFor(entry);
        if (cell && !wanted.has(cell.model.id)) {
          wanted.set(cell.model.id, { cell, entry });
        }
      }
    }
    for (const [id, badge] of this._badges) {
      const keep = wanted.get(id);
      if (!keep || keep.cell !== badge.cell) {
        badge.node.remove();
        badge.cell.removeClass('jp-tfcoach-has-badge');
        this._badges.delete(id);
      }
    }
    for (const [id, { cell, entry }] of wanted) {
      const text = cellBadgeText(entry.report);
      let badge = this._badges.get(id);
      if (!badge) {
        const node = el('button', {
          className: BADGE_CLASS,
          attrs: { type: 'button' }
        });
        node.addEventListener('click', event => {
          event.preventDefault();
          event.stopPropagation();
          const current = this._coach.entryForCell(cell);
          if (current) {
            this._reveal(this._coach, current.key);
          }
        });
        // Keep the notebook from treating the click as a cell click.
        node.addEventListener('mousedown', event => event.stopPropagation());
        badge = { cell, node };
        this._badges.set(id, badge);
      }
      badge.node.textContent = text;
      badge.node.title = `TF Coach: ${text}. Open the details in the TF Coach panel.`;
      badge.node.setAttribute('aria-label', `TF Coach: ${text}, show details`);
      badge.node.dataset.level = entry.level;
      const host = cell.node.querySelector('.jp-Cell-inputWrapper') ?? cell.node;
      if (badge.node.parentElement !== host) {
        host.appendChild(badge.node);
      }
      cell.addClass('jp-tfcoach-has-badge');
    }
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._unsubscribe();
    this._settings.changed.disconnect(this.sync, this);
    for (const badge of this._badges.values()) {
      badge.node.remove();
      badge.cell.removeClass('jp-tfcoach-has-badge');
    }
    this._badges.clear();
  }
}
