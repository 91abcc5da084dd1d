/**
 * The course inside JupyterLab: a tab per module rendering its Markdown through
 * rendermime (untrusted, so sanitized), with the module's contents beside it,
 * previous/next through every section of the course, links between sections
 * that stay in the tab, and a button that opens the module's notebook.
 * External (http/https) course URLs open in the browser instead.
 */
import { MainAreaWidget, WidgetTracker } from '@jupyterlab/apputils';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import {
  ToolbarButton,
  caretLeftIcon,
  caretRightIcon,
  notebookIcon
} from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { CoachApi, ICourseModule, ICourseModuleEntry } from './api';
import { el } from './dom';
import { isExternalCourseUrl } from './links';
import { ICourseRef } from './wire';
import { coachIcon } from './panel/panel';

export const OPEN_COURSE = 'tfcoach:open-course';
export const OPEN_COURSE_NOTEBOOK = 'tfcoach:open-course-notebook';
export const OPEN_MEMORY_DECK = 'tfcoach:open-memory-deck';
export const OPEN_MATCH_PAIRS = 'tfcoach:open-match-pairs';
export const OPEN_CONSTELLATION = 'tfcoach:open-constellation';
export const OPEN_QUIZ = 'tfcoach:open-quiz';

/** Where a module opens: its top, its last heading, or a section (by id or title). */
export type CoursePlace = 'start' | 'end' | { section: string; title?: string };

/** What the course tabs need from the application around them. */
export interface ICourseHost {
  api: CoachApi;
  rendermime: IRenderMimeRegistry | null;
  addToShell(widget: Widget): void;
  activate(id: string): void;
  /** Copy the module's notebook into the learner's folder (if absent) and open it. */
  openNotebook(moduleId: string): Promise<void>;
  /** Open the Memory Deck of the module's terms (study/deck.ts). */
  openDeck?(moduleId: string): void;
  /** Open a Match the Pairs board of the module's terms (study/match.ts). */
  openMatch?(moduleId: string): void;
  /** Open the Concept Constellation of every term (study/constellation.ts). */
  openConstellation?(): void;
  /** Open the quiz of the module's review questions (study/quiz.ts). */
  openQuiz?(moduleId: string): void;
}

/** A link inside the course: `#section-id`, `module-04.md#section-id` or `module-04`. */
const COURSE_LINK = /^(?:(?:\.\/)?(module-[a-z0-9-]+?)(?:\.md)?)?(?:#([A-Za-z0-9_-]+))?$/;

/** How far below the top of the text a heading still counts as "at the top". */
const HEADING_AT_TOP_PX = 60;

/** One `##` heading of the rendered module and its entry in the contents. */
interface IHeading {
  node: HTMLElement;
  item: HTMLElement;
}

/** The rendered Markdown of one course module, with its contents beside it. */
export class CourseView extends Widget {
  private _loaded: Promise<void> | null = null;
  private _module: ICourseModule | null = null;
  private _headings: IHeading[] = [];
  private _contents = el('nav', {
    className: 'jp-tfcoach-course-toc',
    attrs: { 'aria-label': 'Contents of this module' }
  });
  private _page = el('div', { className: 'jp-tfcoach-course-page' });
  private _scrollPending = false;

  constructor(
    readonly moduleId: string,
    private _host: ICourseHost,
    /** Follows a link to a place in another module (or this one). */
    private _follow: (moduleId: string, place: CoursePlace) => void,
    private _modules: () => Promise<ICourseModuleEntry[]>
  ) {
    super();
    this.addClass('jp-tfcoach-course');
    this.node.tabIndex = -1;
    this._page.appendChild(
      el('p', { className: 'jp-tfcoach-empty' }, 'Loading the course\u2026')
    );
    this.node.append(this._contents, this._page);
    this._page.addEventListener('scroll', () => this._onScroll());
    // Capture phase: a course link is followed here, before rendermime's own handling.
    this._page.addEventListener('click', event => this._onClick(event), true);
  }

  /** The module, once loaded (null before, or if it failed to load). */
  get module(): ICourseModule | null {
    return this._module;
  }

  /** Load (once) and render the module. */
  load(): Promise<void> {
    if (!this._loaded) {
      this._loaded = this._load();
    }
    return this._loaded;
  }

  /** Index of the heading the reader is at (-1: the module's introduction). */
  get currentIndex(): number {
    // A heading scrolled "to the top" sits below it by its scroll margin (~40 px).
    const top = this._page.getBoundingClientRect().top + HEADING_AT_TOP_PX;
    let current = -1;
    this._headings.forEach((heading, index) => {
      if (heading.node.getBoundingClientRect().top <= top) {
        current = index;
      }
    });
    return current;
  }

  get headingCount(): number {
    return this._headings.length;
  }

  /** Scroll to a heading by index (-1: the top of the module). */
  showHeading(index: number): void {
    const heading = this._headings[index];
    if (!heading) {
      this._page.scrollTop = 0;
      this._markCurrent();
      return;
    }
    heading.node.scrollIntoView({ block: 'start' });
    this._flash(heading.node);
    this._markCurrent();
  }

  /** Go to a place: the start, the last heading, or a section (by id, then by title). */
  goTo(place: CoursePlace): void {
    if (place === 'start') {
      this.showHeading(-1);
    } else if (place === 'end') {
      this.showHeading(this._headings.length - 1);
    } else {
      this.scrollToSection(place.section, place.title ?? '');
    }
  }

  /** Scroll to a section (by its id, falling back to its title). */
  scrollToSection(section: string, title = ''): void {
    if (!section && !title) {
      this.showHeading(-1);
      return;
    }
    const escaped = CSS.escape(section);
    let target: Element | null = section
      ? this._page.querySelector(
          `[id="${escaped}"], [data-jupyter-id="${escaped}"], [name="${escaped}"]`
        )
      : null;
    if (!target && title) {
      const wanted = title.trim().toLowerCase();
      target =
        Array.from(this._page.querySelectorAll('h1, h2, h3, h4')).find(
          h => headingText(h).toLowerCase() === wanted
        ) ?? null;
    }
    if (!target) {
      return;
    }
    // The anchor precedes its heading: highlight the heading.
    const heading = target.matches('h1, h2, h3, h4')
      ? target
      : (target.closest('p')?.nextElementSibling ?? target.nextElementSibling ?? target);
    target.scrollIntoView({ block: 'start' });
    if (heading instanceof HTMLElement) {
      heading.scrollIntoView({ block: 'start' });
      this._flash(heading);
    }
    this._markCurrent();
  }

  private _flash(node: HTMLElement): void {
    node.classList.add('jp-tfcoach-flash');
    window.setTimeout(() => node.classList.remove('jp-tfcoach-flash'), 1500);
  }

  private async _load(): Promise<void> {
    let module: ICourseModule;
    try {
      module = await this._host.api.courseModule(this.moduleId);
    } catch (error) {
      this._page.replaceChildren(
        el(
          'p',
          { className: 'jp-tfcoach-empty' },
          `The course module ${this.moduleId} could not be loaded: ${String(
            (error as Error).message ?? error
          )}`
        )
      );
      return;
    }
    this._module = module;
    this.title.label = `Course: ${module.title}`;
    const rendermime = this._host.rendermime;
    if (!rendermime) {
      this._page.replaceChildren(
        el('pre', { className: 'jp-tfcoach-course-text' }, module.markdown)
      );
      return;
    }
    const model = rendermime.createModel({
      data: { 'text/markdown': module.markdown },
      trusted: false
    });
    const renderer = rendermime.createRenderer('text/markdown');
    renderer.addClass('jp-tfcoach-course-body');
    await renderer.renderModel(model);
    // Room after the text, so that "Next" and the contents can bring the last
    // headings to the top too (their position is what says where the reader is).
    const end = el('div', { className: 'jp-tfcoach-course-end' });
    this._page.replaceChildren(renderer.node, end);
    await this._buildContents(module, renderer.node, end);
  }

  /** The contents: this module's headings, then every module of the course. */
  private async _buildContents(
    module: ICourseModule,
    body: HTMLElement,
    end: HTMLElement
  ): Promise<void> {
    const top = el(
      'button',
      { className: 'jp-tfcoach-course-toc-module', attrs: { type: 'button' } },
      module.title
    );
    top.addEventListener('click', () => this.showHeading(-1));
    const list = el('ol', { className: 'jp-tfcoach-course-toc-sections' });
    this._headings = Array.from(body.querySelectorAll('h2')).map((node, index) => {
      const button = el('button', { attrs: { type: 'button' } }, headingText(node));
      button.addEventListener('click', () => this.showHeading(index));
      const item = el('li', {}, button);
      list.appendChild(item);
      return { node: node as HTMLElement, item };
    });
    this._contents.replaceChildren(
      el('h3', {}, 'This module'),
      top,
      list
    );
    let modules: ICourseModuleEntry[] = [];
    try {
      modules = await this._modules();
    } catch {
      modules = [];
    }
    if (modules.length > 1) {
      const others = el('ol', { className: 'jp-tfcoach-course-toc-modules' });
      for (const entry of modules) {
        const button = el('button', { attrs: { type: 'button' } }, entry.title);
        if (entry.id === module.id) {
          button.setAttribute('aria-current', 'page');
        }
        button.addEventListener('click', () => this._follow(entry.id, 'start'));
        others.appendChild(el('li', {}, button));
      }
      this._contents.append(el('h3', {}, 'Course'), others);
      const next = modules[modules.findIndex(m => m.id === module.id) + 1];
      if (next) {
        const button = el(
          'button',
          { className: 'jp-tfcoach-course-next', attrs: { type: 'button' } },
          `Next module: ${next.title}`
        );
        button.addEventListener('click', () => this._follow(next.id, 'start'));
        end.appendChild(button);
      }
    }
    this._markCurrent();
  }

  private _onScroll(): void {
    if (this._scrollPending) {
      return;
    }
    this._scrollPending = true;
    requestAnimationFrame(() => {
      this._scrollPending = false;
      this._markCurrent();
    });
  }

  /** Highlight, in the contents, the heading the reader is at. */
  private _markCurrent(): void {
    const current = this.currentIndex;
    this._headings.forEach((heading, index) => {
      if (index === current) {
        heading.item.setAttribute('aria-current', 'location');
      } else {
        heading.item.removeAttribute('aria-current');
      }
    });
  }

  /** Links between sections stay in the course; other links keep their behaviour. */
  private _onClick(event: MouseEvent): void {
    const anchor = (event.target as Element | null)?.closest?.('a');
    const href = anchor?.getAttribute('href') ?? '';
    const match = COURSE_LINK.exec(href);
    if (!anchor || !href || !match) {
      return;
    }
    event.preventDefault();
    event.stopPropagation();
    const [, moduleId, section] = match;
    void this._followLink(moduleId, section);
  }

  private async _followLink(moduleId: string | undefined, section: string | undefined) {
    const place: CoursePlace = section ? { section } : 'start';
    if (section && this._module?.sections.some(s => s.id === section)) {
      this.goTo(place);
      return;
    }
    if (section) {
      // Section ids are unique in the course and stay with a section that moves to
      // another module, so the section's owner decides, whatever module the link names
      // (`module-01.md#side-effects` written before the split): as `Course.resolve` does.
      const modules = await this._modules().catch(() => [] as ICourseModuleEntry[]);
      const owner = modules.find(m => m.sections.some(s => s.id === section));
      if (owner) {
        this._follow(owner.id, place);
        return;
      }
    }
    if (moduleId) {
      this._follow(moduleId, place);
    } else if (section) {
      this.scrollToSection(section);
    } else {
      this.goTo(place);
    }
  }
}

/** A heading's text without the permalink mark rendermime appends. */
function headingText(node: Element): string {
  return (node.textContent ?? '').replace(/\u00b6/g, '').trim();
}

/** Opens course references; keeps one tab per module. */
export class CourseOpener {
  readonly tracker = new WidgetTracker<MainAreaWidget<CourseView>>({
    namespace: 'tfcoach-course'
  });
  private _modules: Promise<ICourseModuleEntry[]> | null = null;

  constructor(private _host: ICourseHost) {}

  /** The course's modules (fetched once; a failed fetch is tried again next time). */
  modules(): Promise<ICourseModuleEntry[]> {
    if (!this._modules) {
      this._modules = this._host.api.course().catch(error => {
        this._modules = null;
        throw error;
      });
    }
    return this._modules;
  }

  async open(course: Partial<ICourseRef>): Promise<void> {
    const url = course.url ?? '';
    if (isExternalCourseUrl(url)) {
      window.open(url, '_blank', 'noopener,noreferrer');
      return;
    }
    // A reference kept from before a section moved names its old module: the section's
    // id decides where it opens (section ids stay stable, see `Course.resolve`).
    const section = course.section ?? '';
    const modules = section
      ? await this.modules().catch(() => [] as ICourseModuleEntry[])
      : [];
    const owner = modules.find(m => m.sections.some(s => s.id === section));
    await this.openAt(owner?.id || course.module || 'module-01', {
      section,
      title: course.title ?? ''
    });
  }

  /** Open (or activate) a module's tab and go to a place in it. */
  async openAt(moduleId: string, place: CoursePlace): Promise<void> {
    const widget = this._tab(moduleId);
    this._host.activate(widget.id);
    await widget.content.load();
    // Let the tab lay out before scrolling.
    await new Promise(resolve => requestAnimationFrame(() => resolve(undefined)));
    widget.content.goTo(place);
  }

  /** The previous (-1) or next (+1) heading of the course, across modules. */
  async step(view: CourseView, delta: -1 | 1): Promise<void> {
    const target = view.currentIndex + delta;
    if (target >= -1 && target < view.headingCount) {
      view.showHeading(target);
      return;
    }
    const modules = await this.modules().catch(() => [] as ICourseModuleEntry[]);
    const index = modules.findIndex(m => m.id === view.moduleId);
    const neighbour = index < 0 ? undefined : modules[index + delta];
    if (neighbour) {
      await this.openAt(neighbour.id, delta < 0 ? 'end' : 'start');
    }
  }

  private _tab(moduleId: string): MainAreaWidget<CourseView> {
    const existing = this.tracker.find(w => w.content.moduleId === moduleId);
    if (existing && !existing.isDisposed) {
      return existing;
    }
    const content = new CourseView(
      moduleId,
      this._host,
      (id, place) => void this.openAt(id, place),
      () => this.modules()
    );
    const widget = new MainAreaWidget({ content });
    widget.id = `tfcoach-course-${moduleId.replace(/[^A-Za-z0-9_-]/g, '_')}`;
    widget.title.label = `Course: ${moduleId}`;
    widget.title.icon = coachIcon;
    widget.title.closable = true;
    content.title.changed.connect(() => {
      widget.title.label = content.title.label || widget.title.label;
    });
    this._addButtons(widget);
    void this.tracker.add(widget);
    this._host.addToShell(widget);
    return widget;
  }

  private _addButtons(widget: MainAreaWidget<CourseView>): void {
    const view = widget.content;
    widget.toolbar.addItem(
      'previous',
      new ToolbarButton({
        icon: caretLeftIcon,
        label: 'Previous',
        tooltip: 'Previous section of the course',
        onClick: () => void this.step(view, -1)
      })
    );
    widget.toolbar.addItem(
      'next',
      new ToolbarButton({
        icon: caretRightIcon,
        label: 'Next',
        tooltip: 'Next section of the course',
        onClick: () => void this.step(view, 1)
      })
    );
    const openDeck = this._host.openDeck;
    if (openDeck) {
      widget.toolbar.addItem(
        'memory-deck',
        new ToolbarButton({
          label: 'Memory Deck',
          tooltip: "Study this module's terms as flash cards",
          onClick: () => openDeck(view.moduleId)
        })
      );
    }
    const openMatch = this._host.openMatch;
    if (openMatch) {
      widget.toolbar.addItem(
        'match-pairs',
        new ToolbarButton({
          label: 'Match the Pairs',
          tooltip: "Match this module's terms to their definitions",
          onClick: () => openMatch(view.moduleId)
        })
      );
    }
    const openQuiz = this._host.openQuiz;
    if (openQuiz) {
      widget.toolbar.addItem(
        'quiz',
        new ToolbarButton({
          label: 'Quiz',
          tooltip: "Answer this module's review questions and keep your score",
          onClick: () => openQuiz(view.moduleId)
        })
      );
    }
    const openConstellation = this._host.openConstellation;
    if (openConstellation) {
      widget.toolbar.addItem(
        'constellation',
        new ToolbarButton({
          label: 'Constellation',
          tooltip: "Every term of the course and how they connect, with what you remember",
          onClick: () => openConstellation()
        })
      );
    }
    // Only a module that has a notebook gets the button (known once it is loaded).
    void view.load().then(() => {
      if (view.module?.notebook && !widget.isDisposed) {
        widget.toolbar.addItem(
          'notebook',
          new ToolbarButton({
            icon: notebookIcon,
            label: 'Open the notebook for this module',
            tooltip: `Copy ${view.module.notebook} into your folder (if it is not there yet) and open it`,
            onClick: () => void this._host.openNotebook(view.moduleId)
          })
        );
      }
    });
  }
}
