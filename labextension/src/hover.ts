/**
 * Hover cards on TensorFlow names in notebook cells: the language server's card
 * (summary, pitfall, course link) from the same knowledge, asked of
 * `POST tfcoach/api/hover` when CodeMirror's hover delay has passed.
 *
 * One CodeMirror extension, registered with JupyterLab's editor extension
 * registry, serves every editor (so it survives JupyterLab reconfiguring an
 * editor); it answers only in the code cells of notebooks we coach. Under
 * jupyterlab-lsp, our language server leaves notebooks to this extension
 * (`--notebooks-in-jupyterlab` in its spec), so a name never gets two cards.
 * Everything in a card is text nodes: the names come from the user's code.
 */
import { Extension } from '@codemirror/state';
import { EditorView, Tooltip, hoverTooltip } from '@codemirror/view';
import { Cell, ICellModel } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';

import { CoachApi, IHoverCard } from './api';
import { CourseOpener, courseLink, el } from './dom';
import { inlineCode } from './wording';
import { cellView } from './lint';

/** The name of the measure (hover asked -> card built) the benchmark reads. */
export const HOVER_MEASURE = 'tfcoach-hover-card';

/** Text with `code` spans and *emphasis* (the cards' Markdown subset), as nodes. */
export function cardText(text: string): Node[] {
  const nodes: Node[] = [];
  for (const part of inlineCode(text)) {
    if (part.code) {
      nodes.push(el('code', {}, part.text));
      continue;
    }
    const pattern = /\*([^*\n]+)\*/g;
    let last = 0;
    let match: RegExpExecArray | null;
    while ((match = pattern.exec(part.text)) !== null) {
      nodes.push(document.createTextNode(part.text.slice(last, match.index)));
      nodes.push(el('em', {}, match[1]));
      last = match.index + match[0].length;
    }
    nodes.push(document.createTextNode(part.text.slice(last)));
  }
  return nodes;
}

/** The card's DOM, as the language server words it. */
export function renderCard(card: IHoverCard, open: CourseOpener): HTMLElement {
  let note: string | null = null;
  if (card.receiver && card.bound_to) {
    note = ` \u00b7 ${card.receiver} is bound to a ${card.bound_to} on ${card.bound_where ?? 'an earlier line'}`;
  } else if (card.written) {
    note = ` \u00b7 written ${card.written} here`;
  }
  return el(
    'div',
    { className: 'jp-tfcoach-hover-card' },
    el(
      'div',
      { className: 'jp-tfcoach-hover-title' },
      el('strong', {}, card.title),
      note ? el('span', { className: 'jp-tfcoach-hover-note' }, note) : null
    ),
    el('p', {}, ...cardText(card.summary)),
    el('p', {}, el('strong', {}, 'Pitfall: '), ...cardText(card.pitfall)),
    courseLink(card.course, open)
  );
}

/** Finds the notebook cards of the editor a hover is in (null: not ours). */
export type HoversOf = (view: EditorView) => NotebookHovers | null;

/** The tooltip extension every editor gets; it asks the notebook the editor is in. */
export function hoverCardsExtension(hoversOf: HoversOf): Extension {
  return hoverTooltip((view, pos) => hoversOf(view)?.card(view, pos) ?? null);
}

/** Hover cards for one notebook's code cells. */
export class NotebookHovers {
  constructor(
    readonly panel: NotebookPanel,
    private _api: CoachApi,
    private _open: CourseOpener
  ) {}

  private _codeCells(): Cell<ICellModel>[] {
    return this.panel.content.widgets.filter(cell => cell.model.type === 'code');
  }

  /** The card for the name at `pos` of a cell editor of this notebook, if any. */
  async card(view: EditorView, pos: number): Promise<Tooltip | null> {
    if (this.panel.isDisposed) {
      return null;
    }
    const asked = performance.now();
    const cells = this._codeCells();
    const index = cells.findIndex(c => cellView(c) === view);
    if (index < 0) {
      return null;
    }
    const doc = view.state.doc;
    const line = doc.lineAt(pos);
    let answer;
    try {
      answer = await this._api.hover(
        cells.map(c => c.model.sharedModel.getSource()),
        index,
        line.number - 1,
        pos - line.from
      );
    } catch (error) {
      console.warn('tfcoach: no hover card', error);
      return null;
    }
    // Stale when the line changed while the card was on its way (a transaction
    // that leaves the text as it was, e.g. from collaboration sync, is fine).
    const now = view.state.doc;
    if (!answer || line.number > now.lines) {
      return null;
    }
    const current = now.line(line.number);
    if (current.text !== line.text || answer.end > current.length) {
      return null;
    }
    const card = answer.card;
    return {
      pos: current.from + answer.start,
      end: current.from + answer.end,
      above: true,
      create: () => {
        const dom = renderCard(card, this._open);
        performance.measure(HOVER_MEASURE, { start: asked });
        return { dom };
      }
    };
  }
}
