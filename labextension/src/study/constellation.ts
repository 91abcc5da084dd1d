/**
 * The Concept Constellation: every term of the course as a star, its links (prerequisites,
 * see-also) as lines, coloured by module, ringed by the learner's mastery (their deck).
 * Drag to rotate (3D) or pan (2D), scroll to zoom, click a star for its definition and a
 * link to its section in the course tab.
 *
 * The learner's deck changes while the Constellation is open (a rating in the Memory Deck, an
 * import, a reset, a report of the coach making terms due): it reads the deck again each time
 * it is shown, and at once when a study tab says it changed the cards while it is in view.
 * Only the rings and the mastery texts change: the stars stay where they are.
 *
 * The drawing is a maintained library: `3d-force-graph` (three.js, WebGL) where the browser
 * has WebGL, else `force-graph` (a 2D canvas). Each is imported only when drawn, in its own
 * chunk, and this module itself is loaded lazily from index.ts: the panel and the course tab
 * never pay for them. Everything the graph shows is also in plain HTML beside it (the search
 * box, a list of every term by module, the definition pane), which is what keyboards and
 * screen readers use: the canvas is `aria-hidden`. Text nodes only, never HTML, including
 * the graph's hover labels (given as elements: the libraries set a string as HTML).
 *
 * The graph's own strokes (the chosen star, its outline, the links) take the colours of the
 * JupyterLab theme, read when drawn and again when the theme changes: a fixed white star
 * vanished on Light's white, a fixed black outline on Dark's grey.
 */
import type { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { el } from '../dom';
import { ITerm, StudyApi } from './api';
import type { SectionOpener } from './deck';
import {
  IConceptNode,
  IConstellation,
  MASTERY_LABELS,
  Mastery,
  MASTERY_RINGS,
  buildConstellation,
  clearViewpoint,
  neighbours,
  searchNodes
} from './graph';

export type ViewMode = '3d' | '2d';

/** What the two libraries have in common, as this widget uses them. */
interface IGraphView {
  mode: ViewMode;
  resize(width: number, height: number): void;
  /** Centre the view on a node; resolves when the move is over. */
  focus(node: IConceptNode): Promise<void>;
  /** Redraw after the selection or the theme changed. */
  refresh(): void;
  /** Give the drawn nodes their new masteries (their rings), in place. */
  setMastery(mastery: ReadonlyMap<string, Mastery>): void;
  dispose(): void;
}

/** A node as the libraries hold it (they add positions to our objects). */
type Placed = IConceptNode & { x?: number; y?: number; z?: number };

const FOCUS_MS = 800;
/** How far from a focused star the 3D camera stands (in the layout's units). */
const FOCUS_DISTANCE = 180;

/** The graph's strokes in the theme's colours, opaque (three.js ignores an alpha). */
interface IGraphColours {
  /** The chosen star (3D) and its outline (2D): the theme's text colour. */
  chosen: string;
  prerequisite: string;
  related: string;
}

/** `colour` painted over `background`, as `rgb(...)`. */
function opaque(colour: string, background: string): string {
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 1;
  const context = canvas.getContext('2d', { willReadFrequently: true });
  if (!context) {
    return colour;
  }
  for (const paint of ['#ffffff', background, colour]) {
    context.fillStyle = paint;
    context.fillRect(0, 0, 1, 1);
  }
  const [red, green, blue] = context.getImageData(0, 0, 1, 1).data;
  return `rgb(${red}, ${green}, ${blue})`;
}

function graphColours(host: HTMLElement): IGraphColours {
  const style = getComputedStyle(host);
  const background = style.backgroundColor;
  const variable = (name: string) => opaque(style.getPropertyValue(name).trim(), background);
  return {
    chosen: opaque(style.color, background),
    prerequisite: variable('--jp-ui-font-color2'),
    related: variable('--jp-border-color1')
  };
}

let webgl: boolean | null = null;

/**
 * Whether this browser can draw WebGL (some VMs and remote desktops cannot). Asked once: each
 * question opens a context, and browsers keep only a few.
 */
export function hasWebGL(): boolean {
  if (webgl === null) {
    try {
      const canvas = document.createElement('canvas');
      webgl = !!(canvas.getContext('webgl2') ?? canvas.getContext('webgl'));
    } catch {
      webgl = false;
    }
  }
  return webgl;
}

/** A hover label as an element: the libraries would set a string as HTML. */
function label(node: IConceptNode): HTMLElement {
  return el(
    'span',
    { className: 'jp-tfcoach-constellation-tip' },
    `${node.name} (${node.module}, ${MASTERY_LABELS[node.mastery]})`
  );
}

function wait(ms: number): Promise<void> {
  return new Promise(resolve => window.setTimeout(resolve, ms));
}

async function draw3d(
  host: HTMLElement,
  data: IConstellation,
  selected: () => string | null,
  onClick: (node: IConceptNode) => void
): Promise<IGraphView> {
  const { default: ForceGraph3D } = await import('3d-force-graph');
  const three = await import('three');
  // The mastery ring: a sprite (it always faces the camera) around the node's sphere, one
  // texture per mastery, drawn once.
  const rings = new Map<string, unknown>();
  const ringMaterial = (colour: string) => {
    if (!rings.has(colour)) {
      const canvas = document.createElement('canvas');
      canvas.width = canvas.height = 64;
      const context = canvas.getContext('2d');
      if (context) {
        context.strokeStyle = colour;
        context.lineWidth = 7;
        context.beginPath();
        context.arc(32, 32, 27, 0, 2 * Math.PI);
        context.stroke();
      }
      rings.set(
        colour,
        new three.SpriteMaterial({
          map: new three.CanvasTexture(canvas),
          transparent: true,
          depthWrite: false
        })
      );
    }
    return rings.get(colour);
  };
  const size = (node: Placed) => 2 + node.degree;
  let colours = graphColours(host);
  const linkColour = (link: object) =>
    (link as { kind?: string }).kind === 'prerequisite' ? colours.prerequisite : colours.related;
  // Typed loosely: three.js has no declarations here (three.d.ts), so neither have the
  // chain's types that mention it.
  const graph = new ForceGraph3D(host, { controlType: 'orbit' })
    .graphData({
      nodes: data.nodes.map(node => ({ ...node })),
      links: data.links.map(link => ({ ...link }))
    })
    .backgroundColor('rgba(0,0,0,0)')
    .showNavInfo(false)
    .enableNodeDrag(false)
    .nodeLabel((node: object) => label(node as Placed))
    .nodeVal((node: object) => size(node as Placed))
    .nodeThreeObjectExtend(true)
    .nodeThreeObject((node: object) => {
      const placed = node as Placed;
      if (placed.mastery === 'new') {
        return new three.Object3D();
      }
      const sprite = new three.Sprite(ringMaterial(MASTERY_RINGS[placed.mastery]));
      // 3d-force-graph's sphere radius is cbrt(val) * 4; the ring sits just outside it.
      const diameter = 2 * Math.cbrt(size(placed)) * 4 * 1.45;
      sprite.scale.set(diameter, diameter, 1);
      return sprite;
    })
    .nodeColor((node: object) => {
      const placed = node as Placed;
      return placed.id === selected() ? colours.chosen : placed.colour;
    })
    .nodeOpacity(0.95)
    .linkColor(linkColour)
    .linkDirectionalArrowLength((link: object) =>
      (link as { kind?: string }).kind === 'prerequisite' ? 3 : 0
    )
    .linkDirectionalArrowRelPos(1)
    .linkWidth(0)
    // The layout is computed before the first frame, then stays: a star stays where a
    // search brought it.
    .warmupTicks(300)
    .cooldownTicks(0)
    .onNodeClick((node: object) => onClick(node as Placed));
  return {
    mode: '3d',
    resize: (width, height) => void graph.width(width).height(height),
    focus: async node => {
      const placed = graph.graphData().nodes.find((n: { id?: unknown }) => n.id === node.id) as Placed | undefined;
      if (!placed) {
        return;
      }
      // Just drawn (the view switched from 2D with a term chosen), the layout comes with the
      // first frame: aim once the stars have their places, not at the origin.
      for (let frame = 0; placed.x === undefined && frame < 100; frame++) {
        await wait(20);
      }
      const at = (n: Placed) => ({ x: n.x ?? 0, y: n.y ?? 0, z: n.z ?? 0 });
      const others = (graph.graphData().nodes as Placed[]).filter(n => n.id !== node.id);
      const target = at(placed);
      graph.cameraPosition(clearViewpoint(target, others.map(at), FOCUS_DISTANCE), target, FOCUS_MS);
      await wait(FOCUS_MS + 50);
    },
    refresh: () => {
      colours = graphColours(host);
      graph.nodeColor(graph.nodeColor()).linkColor(linkColour);
    },
    setMastery: mastery => {
      for (const node of graph.graphData().nodes as Placed[]) {
        node.mastery = mastery.get(node.id) ?? node.mastery;
      }
      // Set again, the objects (the ring sprites) are made anew; the layout stays.
      graph.nodeThreeObject(graph.nodeThreeObject());
    },
    dispose: () => {
      graph.pauseAnimation();
      graph._destructor();
      for (const material of rings.values()) {
        (material as { map: { dispose(): void }; dispose(): void }).map.dispose();
        (material as { dispose(): void }).dispose();
      }
    }
  };
}

async function draw2d(
  host: HTMLElement,
  data: IConstellation,
  selected: () => string | null,
  onClick: (node: IConceptNode) => void
): Promise<IGraphView> {
  const { default: ForceGraph } = await import('force-graph');
  const radius = (node: Placed) => 4 + Math.sqrt(node.degree) * 1.5;
  let colours = graphColours(host);
  const graph = new ForceGraph(host)
    .graphData({
      nodes: data.nodes.map(node => ({ ...node })),
      links: data.links.map(link => ({ ...link }))
    })
    .enableNodeDrag(false)
    .nodeLabel(node => label(node as Placed))
    .nodeCanvasObject((node, context, scale) => {
      const placed = node as Placed;
      const r = radius(placed);
      const { x = 0, y = 0 } = placed;
      context.beginPath();
      context.arc(x, y, r, 0, 2 * Math.PI);
      context.fillStyle = placed.colour;
      context.fill();
      // The mastery ring, then the selection's outline.
      context.lineWidth = 2.5 / Math.sqrt(scale);
      context.strokeStyle = MASTERY_RINGS[placed.mastery];
      context.beginPath();
      context.arc(x, y, r + 2, 0, 2 * Math.PI);
      context.stroke();
      if (placed.id === selected()) {
        context.strokeStyle = colours.chosen;
        context.beginPath();
        context.arc(x, y, r + 5, 0, 2 * Math.PI);
        context.stroke();
      }
      if (scale > 1.6 || placed.id === selected()) {
        context.font = `${11 / scale}px sans-serif`;
        context.textAlign = 'center';
        context.textBaseline = 'top';
        context.fillStyle = colours.chosen;
        context.fillText(placed.name, x, y + r + 4);
      }
    })
    .nodePointerAreaPaint((node, colour, context) => {
      const placed = node as Placed;
      context.fillStyle = colour;
      context.beginPath();
      context.arc(placed.x ?? 0, placed.y ?? 0, radius(placed) + 3, 0, 2 * Math.PI);
      context.fill();
    })
    .linkColor(link =>
      (link as { kind?: string }).kind === 'prerequisite' ? colours.prerequisite : colours.related
    )
    .linkDirectionalArrowLength(link =>
      (link as { kind?: string }).kind === 'prerequisite' ? 4 : 0
    )
    .linkDirectionalArrowRelPos(1)
    // The layout is computed before the first frame, then stays: a star stays where a
    // search brought it.
    .warmupTicks(300)
    .cooldownTicks(0)
    .onNodeClick(node => onClick(node as Placed));
  return {
    mode: '2d',
    resize: (width, height) => void graph.width(width).height(height),
    focus: async node => {
      const placed = graph.graphData().nodes.find(n => n.id === node.id) as Placed | undefined;
      if (!placed) {
        return;
      }
      // One move after the other: a second transition would cut the first short (d3-zoom),
      // and force-graph takes a click during a move for the end of a drag.
      const half = FOCUS_MS / 2;
      graph.centerAt(placed.x ?? 0, placed.y ?? 0, half);
      await wait(half + 50);
      graph.zoom(Math.max(graph.zoom(), 2.5), half);
      await wait(half + 50);
    },
    refresh: () => {
      colours = graphColours(host);
      graph.nodeCanvasObject(graph.nodeCanvasObject()).linkColor(graph.linkColor());
    },
    setMastery: mastery => {
      for (const node of graph.graphData().nodes as Placed[]) {
        node.mastery = mastery.get(node.id) ?? node.mastery;
      }
      graph.nodeCanvasObject(graph.nodeCanvasObject());
    },
    dispose: () => {
      graph.pauseAnimation();
      graph._destructor();
    }
  };
}

export class ConceptConstellation extends Widget {
  private _terms: ITerm[] = [];
  private _data: IConstellation = { nodes: [], links: [], modules: [] };
  /** Set once the terms are in: from then on the deck can be read again. */
  private _loaded = false;
  /** The deck changed while hidden: read it again when shown. */
  private _stale = false;
  private _reading: Promise<void> | null = null;
  private _view: IGraphView | null = null;
  private _selected: string | null = null;
  private _drawing: Promise<void> = Promise.resolve();
  /** Counts the moves to a term: only the last one says it is done. */
  private _moves = 0;
  private readonly _status = el('p', {
    className: 'jp-tfcoach-constellation-status',
    attrs: { 'aria-live': 'polite' }
  });
  private readonly _search = el('input', {
    className: 'jp-tfcoach-constellation-search',
    attrs: {
      type: 'search',
      placeholder: 'Find a term',
      'aria-label': 'Find a term',
      autocomplete: 'off'
    }
  });
  private readonly _mode = el(
    'button',
    { className: 'jp-tfcoach-deck-rate jp-tfcoach-constellation-mode', attrs: { type: 'button' } },
    '2D view'
  );
  private readonly _canvas = el('div', {
    className: 'jp-tfcoach-constellation-canvas',
    attrs: { 'aria-hidden': 'true' }
  });
  private readonly _details = el('section', {
    className: 'jp-tfcoach-constellation-details',
    attrs: { 'aria-live': 'polite', 'aria-label': 'The chosen term' }
  });
  private readonly _legend = el('div', { className: 'jp-tfcoach-constellation-legend' });
  private readonly _list = el('nav', {
    className: 'jp-tfcoach-constellation-list',
    attrs: { 'aria-label': 'Every term, by module' }
  });
  private readonly _resizer = new ResizeObserver(() => this._resize());
  /** A new theme (JupyterLab names it on the body once its styles are in): redraw in it. */
  private readonly _themeWatch = new MutationObserver(() => this._view?.refresh());
  private readonly _webgl: boolean;

  constructor(
    private readonly _api: StudyApi,
    private readonly _openSection: SectionOpener,
    /** 3D where WebGL works, unless asked for 2D. */
    mode: ViewMode = '3d'
  ) {
    super();
    this.addClass('jp-tfcoach-deck');
    this.addClass('jp-tfcoach-constellation');
    this.id = 'tfcoach-constellation';
    this.title.label = 'Concept Constellation';
    this.title.closable = true;
    this.node.setAttribute('aria-label', 'TF Coach Concept Constellation');
    this._webgl = mode === '3d' && hasWebGL();
    this._search.addEventListener('input', () => this._filter());
    this._search.addEventListener('keydown', event => {
      if (event.key === 'Escape') {
        // Clears the search and the choice; the view stays where it is.
        event.preventDefault();
        this._search.value = '';
        this._filter();
        this.clearSelection();
      } else if (event.key === 'Enter') {
        event.preventDefault();
        const best = searchNodes(this._data.nodes, this._search.value)[0];
        if (best) {
          void this.select(best.id, true);
        }
      }
    });
    this._mode.addEventListener('click', () => {
      const next: ViewMode = this._view?.mode === '2d' && hasWebGL() ? '3d' : '2d';
      // The chosen term stays chosen, and is brought into the new view.
      void this._draw(next).then(() => (this._selected ? this.select(this._selected) : undefined));
    });
    this.clearSelection();
    this.node.append(
      el('h2', {}, 'Concept Constellation'),
      el(
        'div',
        { className: 'jp-tfcoach-constellation-bar' },
        this._search,
        this._mode,
        this._status
      ),
      el(
        'div',
        { className: 'jp-tfcoach-constellation-body' },
        this._canvas,
        el('div', { className: 'jp-tfcoach-constellation-side' }, this._details, this._legend)
      ),
      this._list
    );
    this._resizer.observe(this._canvas);
    this._themeWatch.observe(document.body, {
      attributes: true,
      attributeFilter: ['data-jp-theme-name']
    });
    _api.changed.connect(this._onCardsChanged, this);
  }

  /** The mode drawn now (null before the first drawing, or when no library could draw). */
  get mode(): ViewMode | null {
    return this._view?.mode ?? null;
  }

  /** Fetch the terms and the learner's deck, list them, and draw the graph. */
  async load(): Promise<void> {
    try {
      this._terms = await this._api.terms();
      const deck = await this._api.deck(this._terms.map(term => term.id)).catch(() => null);
      this._data = buildConstellation(this._terms, deck);
    } catch (error) {
      this._status.textContent = `The terms could not be loaded: ${String((error as Error).message ?? error)}`;
      return;
    }
    this._loaded = true;
    this._stale = false;
    this._buildList();
    this._buildLegend();
    await this._draw(this._webgl ? '3d' : '2d');
  }

  /**
   * Read the learner's deck again and show each term's mastery: in the list, the chosen
   * term's details and the rings. One read at a time; a change during it reads once more.
   */
  async refreshMastery(): Promise<void> {
    if (!this._loaded || this.isDisposed) {
      return;
    }
    if (this._reading) {
      this._stale = true;
      return this._reading;
    }
    this._stale = false;
    this._reading = (async () => {
      try {
        const deck = await this._api.deck(this._terms.map(term => term.id));
        if (!this.isDisposed) {
          this._showMastery(buildConstellation(this._terms, deck));
        }
      } catch (error) {
        console.warn('tfcoach: the constellation could not read the deck', error);
      } finally {
        this._reading = null;
      }
    })();
    await this._reading;
    if (this._stale && this.isVisible) {
      await this.refreshMastery();
    }
  }

  /** Show a term's definition, mark it in the list and the graph, and bring it into view. */
  async select(id: string, moveFocus = false): Promise<void> {
    const node = this._data.nodes.find(n => n.id === id);
    if (!node) {
      return;
    }
    this._selected = id;
    this._showDetails(node);
    for (const button of this._list.querySelectorAll('button[data-term]')) {
      button.setAttribute('aria-current', String(button.getAttribute('data-term') === id));
    }
    if (moveFocus) {
      (this._details.querySelector('h3') as HTMLElement | null)?.focus();
    }
    this._canvas.removeAttribute('data-centred');
    const move = ++this._moves;
    await this._drawing;
    if (this._view && move === this._moves) {
      this._view.refresh();
      await this._view.focus(node);
      if (move === this._moves) {
        // Tests and tools can click the canvas's centre once the term is there.
        this._canvas.setAttribute('data-centred', id);
      }
    }
  }

  /** No term chosen: the definition pane shows how to choose one. */
  clearSelection(): void {
    this._selected = null;
    this._details.replaceChildren(
      el('p', { className: 'jp-tfcoach-deck-help' }, 'Choose a term to read its definition.')
    );
    for (const button of this._list.querySelectorAll('button[data-term]')) {
      button.setAttribute('aria-current', 'false');
    }
    this._view?.refresh();
  }

  protected onCloseRequest(): void {
    this.dispose();
  }

  /** Shown again (its tab chosen, its panel opened): the deck may have changed meanwhile. */
  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this.refreshMastery();
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._api.changed.disconnect(this._onCardsChanged, this);
    this._resizer.disconnect();
    this._themeWatch.disconnect();
    this._view?.dispose();
    this._view = null;
    super.dispose();
  }

  protected onActivateRequest(): void {
    this._search.focus();
  }

  /** A study tab changed the cards: read them now if in view, else when shown. */
  private _onCardsChanged(): void {
    if (this.isVisible) {
      void this.refreshMastery();
    } else {
      this._stale = true;
    }
  }

  /** The masteries of `fresh` (the same terms, a newer deck), in place. */
  private _showMastery(fresh: IConstellation): void {
    const mastery = new Map(fresh.nodes.map(node => [node.id, node.mastery]));
    for (const node of this._data.nodes) {
      node.mastery = mastery.get(node.id) ?? node.mastery;
    }
    for (const item of this._list.querySelectorAll<HTMLElement>('li[data-term]')) {
      const known = mastery.get(item.getAttribute('data-term') ?? '');
      const text = item.querySelector('.jp-tfcoach-constellation-mastery');
      if (known && text) {
        text.textContent = ` (${MASTERY_LABELS[known]})`;
      }
    }
    const selected = this._data.nodes.find(node => node.id === this._selected);
    if (selected) {
      this._showDetails(selected);
    }
    this._view?.setMastery(mastery);
  }

  private _draw(mode: ViewMode): Promise<void> {
    this._drawing = this._drawing.then(async () => {
      this._view?.dispose();
      this._view = null;
      this._canvas.replaceChildren();
      this._canvas.removeAttribute('data-mode');
      const onClick = (node: IConceptNode) => void this.select(node.id);
      const selected = () => this._selected;
      try {
        this._view =
          mode === '3d'
            ? await draw3d(this._canvas, this._data, selected, onClick)
            : await draw2d(this._canvas, this._data, selected, onClick);
      } catch (error) {
        console.warn('tfcoach: the constellation could not be drawn', error);
        this._view = null;
        if (mode === '3d') {
          this._view = await draw2d(this._canvas, this._data, selected, onClick).catch(() => null);
        }
      }
      this._resize();
      const drawn = this._view?.mode;
      if (drawn) {
        this._canvas.setAttribute('data-mode', drawn);
      }
      this._mode.textContent = drawn === '2d' ? '3D view' : '2D view';
      this._mode.disabled = drawn === undefined || (drawn === '2d' && !hasWebGL());
      this._mode.title =
        drawn === '2d' && !hasWebGL() ? 'This browser cannot draw WebGL: 2D only' : '';
      this._status.textContent =
        `${this._data.nodes.length} terms, ${this._data.links.length} links. ` +
        (drawn === '3d'
          ? 'Drag to rotate, scroll to zoom, click a star for its definition.'
          : drawn === '2d'
            ? 'Drag to move, scroll to zoom, click a star for its definition.'
            : 'The graph could not be drawn: use the list of terms below.');
    });
    return this._drawing;
  }

  private _resize(): void {
    const { width, height } = this._canvas.getBoundingClientRect();
    if (this._view && width > 0 && height > 0) {
      this._view.resize(Math.floor(width), Math.floor(height));
    }
  }

  private _filter(): void {
    const query = this._search.value.trim();
    const matches = new Set(searchNodes(this._data.nodes, query).map(node => node.id));
    for (const item of this._list.querySelectorAll<HTMLElement>('li[data-term]')) {
      item.hidden = query !== '' && !matches.has(item.getAttribute('data-term') ?? '');
    }
    this._status.textContent = query
      ? `${matches.size} ${matches.size === 1 ? 'term matches' : 'terms match'}; Enter shows the first.`
      : '';
  }

  private _termButton(node: IConceptNode, text = node.name): HTMLButtonElement {
    const button = el(
      'button',
      {
        className: 'jp-tfcoach-linkbutton',
        attrs: { type: 'button', 'data-term': node.id }
      },
      text
    );
    button.addEventListener('click', () => void this.select(node.id, true));
    return button;
  }

  private _buildList(): void {
    const groups = this._data.modules.map(module => {
      const items = this._data.nodes
        .filter(node => node.module === module.id)
        .map(node =>
          el(
            'li',
            { attrs: { 'data-term': node.id } },
            this._termButton(node),
            el('span', { className: 'jp-tfcoach-constellation-mastery' }, ` (${MASTERY_LABELS[node.mastery]})`)
          )
        );
      return el(
        'li',
        {},
        el('span', { className: 'jp-tfcoach-constellation-swatch', attrs: { style: `background: ${module.colour}` } }),
        ` ${module.id}`,
        el('ul', {}, ...items)
      );
    });
    this._list.replaceChildren(el('h3', {}, 'Every term'), el('ul', {}, ...groups));
  }

  private _buildLegend(): void {
    const modules = this._data.modules.map(module =>
      el(
        'li',
        {},
        el('span', { className: 'jp-tfcoach-constellation-swatch', attrs: { style: `background: ${module.colour}` } }),
        ` ${module.id}`
      )
    );
    const rings = (['due', 'learning', 'review', 'new'] as const).map(mastery =>
      el(
        'li',
        {},
        el('span', {
          className: 'jp-tfcoach-constellation-ring',
          attrs: { style: `border-color: ${MASTERY_RINGS[mastery]}` }
        }),
        ` ${MASTERY_LABELS[mastery]}`
      )
    );
    this._legend.replaceChildren(
      el('h3', {}, 'Colour: module'),
      el('ul', {}, ...modules),
      el('h3', {}, 'Ring: your deck'),
      el('ul', {}, ...rings),
      el('p', { className: 'jp-tfcoach-deck-help' }, 'Arrows point from a term to the terms that need it.')
    );
  }

  private _showDetails(node: IConceptNode): void {
    const byId = new Map(this._data.nodes.map(n => [n.id, n]));
    const links = neighbours(this._data, node.id);
    const related = (title: string, ids: string[]) => {
      const known = ids.map(id => byId.get(id)).filter((n): n is IConceptNode => !!n);
      return known.length
        ? el(
            'p',
            { className: 'jp-tfcoach-constellation-links' },
            `${title}: `,
            ...known.flatMap((other, index) => [index ? ', ' : '', this._termButton(other)])
          )
        : null;
    };
    const open = el(
      'button',
      {
        className: 'jp-tfcoach-deck-section jp-tfcoach-linkbutton',
        attrs: { type: 'button' }
      },
      'Read its course section'
    );
    open.title = `Open the section "${node.section}" in the course tab`;
    open.addEventListener('click', () => this._openSection(node.module, node.section));
    this._details.replaceChildren(
      el('h3', { attrs: { tabindex: '-1' } }, node.name),
      el(
        'p',
        { className: 'jp-tfcoach-constellation-meta' },
        `${node.module} · ${MASTERY_LABELS[node.mastery]}`
      ),
      el('p', { className: 'jp-tfcoach-constellation-definition' }, node.definition),
      open,
      related('Needs', links.needs) ?? '',
      related('Needed by', links.neededBy) ?? '',
      related('See also', links.related) ?? ''
    );
  }
}
