/**
 * The course inside JupyterLab: a main-area tab rendering one module's
 * Markdown through rendermime (untrusted, so sanitized), scrolled to a
 * section. External (http/https) course URLs open in the browser instead.
 */
import { MainAreaWidget, WidgetTracker } from '@jupyterlab/apputils';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { Widget } from '@lumino/widgets';

import { CoachApi } from './api';
import { el } from './dom';
import { ICourseRef, isExternalCourseUrl } from './model';
import { coachIcon } from './panel/panel';

export const OPEN_COURSE = 'tfcoach:open-course';

/** The rendered Markdown of one course module. */
export class CourseView extends Widget {
  private _loaded: Promise<void> | null = null;

  constructor(
    readonly moduleId: string,
    private _api: CoachApi,
    private _rendermime: IRenderMimeRegistry | null
  ) {
    super();
    this.addClass('jp-tfcoach-course');
    this.node.tabIndex = -1;
    this.node.appendChild(el('p', { className: 'jp-tfcoach-empty' }, 'Loading the course\u2026'));
  }

  /** Load (once) and render the module. Resolves to its title. */
  load(): Promise<void> {
    if (!this._loaded) {
      this._loaded = this._load();
    }
    return this._loaded;
  }

  /** Scroll to a section (by its id, falling back to its title). */
  scrollToSection(section: string, title = ''): void {
    if (!section && !title) {
      this.node.scrollTop = 0;
      return;
    }
    const escaped = CSS.escape(section);
    let target: Element | null = section
      ? this.node.querySelector(
          `[id="${escaped}"], [data-jupyter-id="${escaped}"], [name="${escaped}"]`
        )
      : null;
    if (!target && title) {
      const wanted = title.trim().toLowerCase();
      target =
        Array.from(this.node.querySelectorAll('h1, h2, h3, h4')).find(
          h => (h.textContent ?? '').replace(/\u00b6/g, '').trim().toLowerCase() === wanted
        ) ?? null;
    }
    if (!target) {
      return;
    }
    // The anchor precedes its heading: highlight the heading.
    const heading =
      target.matches('h1, h2, h3, h4')
        ? target
        : (target.closest('p')?.nextElementSibling ?? target.nextElementSibling ?? target);
    target.scrollIntoView({ block: 'start' });
    if (heading instanceof HTMLElement) {
      heading.scrollIntoView({ block: 'start' });
      heading.classList.add('jp-tfcoach-flash');
      window.setTimeout(() => heading.classList.remove('jp-tfcoach-flash'), 1500);
    }
  }

  private async _load(): Promise<void> {
    let markdown: string;
    let title: string;
    try {
      const module = await this._api.courseModule(this.moduleId);
      markdown = module.markdown;
      title = module.title;
    } catch (error) {
      this.node.replaceChildren(
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
    this.title.label = `Course: ${title}`;
    if (!this._rendermime) {
      this.node.replaceChildren(el('pre', { className: 'jp-tfcoach-course-text' }, markdown));
      return;
    }
    const model = this._rendermime.createModel({
      data: { 'text/markdown': markdown },
      trusted: false
    });
    const renderer = this._rendermime.createRenderer('text/markdown');
    renderer.addClass('jp-tfcoach-course-body');
    await renderer.renderModel(model);
    this.node.replaceChildren(renderer.node);
  }
}

/** Opens course references; keeps one tab per module. */
export class CourseOpener {
  readonly tracker = new WidgetTracker<MainAreaWidget<CourseView>>({
    namespace: 'tfcoach-course'
  });

  constructor(
    private _api: CoachApi,
    private _rendermime: IRenderMimeRegistry | null,
    private _addToMain: (widget: Widget) => void,
    private _activate: (id: string) => void
  ) {}

  async open(course: Partial<ICourseRef>): Promise<void> {
    const url = course.url ?? '';
    if (isExternalCourseUrl(url)) {
      window.open(url, '_blank', 'noopener,noreferrer');
      return;
    }
    const moduleId = course.module || 'module-01';
    let widget = this.tracker.find(w => w.content.moduleId === moduleId);
    if (!widget || widget.isDisposed) {
      const content = new CourseView(moduleId, this._api, this._rendermime);
      widget = new MainAreaWidget({ content });
      widget.id = `tfcoach-course-${moduleId.replace(/[^A-Za-z0-9_-]/g, '_')}`;
      widget.title.label = `Course: ${moduleId}`;
      widget.title.icon = coachIcon;
      widget.title.closable = true;
      content.title.changed.connect(() => {
        widget!.title.label = content.title.label || widget!.title.label;
      });
      void this.tracker.add(widget);
      this._addToMain(widget);
    }
    this._activate(widget.id);
    await widget.content.load();
    // Let the tab lay out before scrolling.
    await new Promise(resolve => requestAnimationFrame(() => resolve(undefined)));
    widget.content.scrollToSection(course.section ?? '', course.title ?? '');
  }
}
