/**
 * Plugin wiring only: the panel, per-notebook coaches, cell badges, inline
 * findings, the course viewer, settings and commands.
 */
import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, Notification, WidgetTracker } from '@jupyterlab/apputils';
import { Cell } from '@jupyterlab/cells';
import { EditorExtensionRegistry, IEditorExtensionRegistry } from '@jupyterlab/codemirror';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { SplitPanel, TabPanel, Widget } from '@lumino/widgets';

import { CoachApi, LiveReports } from './api';
import { CellBadges } from './badges';
import {
  CourseOpener,
  OPEN_CONSTELLATION,
  OPEN_COURSE,
  OPEN_COURSE_NOTEBOOK,
  OPEN_MATCH_PAIRS,
  OPEN_MEMORY_DECK,
  OPEN_QUIZ
} from './course';
import { NotebookHovers, hoverCardsExtension } from './hover';
import { ICourseRef } from './wire';
import { NotebookCoach } from './notebook';
import { CoachPanel, PANEL_ID, coachIcon } from './panel/panel';
import { CoachSettings } from './settings';
import type { StudyApi } from './study/api';

const PLUGIN_ID = 'jupyterlab_tfcoach:plugin';
const OPEN_PANEL = 'tfcoach:open-panel';
const ANALYZE = 'tfcoach:analyze-notebook';
const TOGGLE_INLINE = 'tfcoach:toggle-inline-findings';
const TOGGLE_BADGES = 'tfcoach:toggle-cell-badges';

/** A study tool's tab (its class is in a lazily loaded chunk). */
type StudyWidget = Widget & { load(): Promise<void> };
type StudyTool = 'deck' | 'match' | 'quiz' | 'constellation';

/** The command that opens each study tool (and restores its tab after a reload). */
const STUDY_COMMANDS: Record<StudyTool, string> = {
  deck: OPEN_MEMORY_DECK,
  match: OPEN_MATCH_PAIRS,
  quiz: OPEN_QUIZ,
  constellation: OPEN_CONSTELLATION
};

/** The share of the page's height a course gets when it opens the bottom area. */
const COURSE_DOWN_SHARE = 0.45;

/**
 * Add a course tab to the main area. Jupyter Notebook 7 shows one document per
 * page and its shell ignores a second main-area widget: there the course opens
 * in the bottom area instead, under the notebook and next to the panel.
 */
function addCourseWidget(app: JupyterFrontEnd, widget: Widget): void {
  app.shell.add(widget, 'main');
  if (widget.parent || widget.isDisposed) {
    return;
  }
  app.shell.add(widget, 'down');
  makeRoomForCourse(widget);
}

/**
 * Activate the widget `id`. Notebook 7's shell shows its bottom area for a widget there but
 * does not select its tab: a second tab of the bottom area (a study tool opened from the
 * course, a second module) would stay hidden behind the first. Select it.
 */
function activateById(app: JupyterFrontEnd, id: string): void {
  app.shell.activateById(id);
  for (const widget of app.shell.widgets('down')) {
    const tabs = widget.parent?.parent;
    if (widget.id === id && widget.isHidden && tabs instanceof TabPanel) {
      tabs.currentWidget = widget;
      widget.activate();
      return;
    }
  }
}

/**
 * Notebook 7 shows its bottom area at its minimum height (a tab bar): when a
 * course opens it, give it room. A bottom area already open keeps its size.
 */
function makeRoomForCourse(widget: Widget): void {
  let area: Widget | null = widget.parent;
  while (area && !(area.parent instanceof SplitPanel)) {
    area = area.parent;
  }
  const split = area?.parent;
  if (!area || !area.isHidden || !(split instanceof SplitPanel)) {
    return;
  }
  const index = split.widgets.indexOf(area);
  if (split.orientation !== 'vertical' || index < 1 || index !== split.widgets.length - 1) {
    return;
  }
  const others = split.relativeSizes().slice(0, index);
  const total = others.reduce((sum, size) => sum + size, 0);
  const rest = 1 - COURSE_DOWN_SHARE;
  split.setRelativeSizes([
    ...others.map(size => (total > 0 ? (size / total) * rest : rest / index)),
    COURSE_DOWN_SHARE
  ]);
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'A TensorFlow coach for JupyterLab.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [
    ICommandPalette,
    ILayoutRestorer,
    ISettingRegistry,
    IRenderMimeRegistry,
    IEditorExtensionRegistry
  ],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null,
    registry: ISettingRegistry | null,
    rendermime: IRenderMimeRegistry | null,
    editorExtensions: IEditorExtensionRegistry | null
  ) => {
    const api = new CoachApi(app.serviceManager.serverSettings);
    const live = new LiveReports();
    live.connectEvents(app.serviceManager.events);
    const settings = new CoachSettings();
    if (registry) {
      settings.connect(registry, PLUGIN_ID).catch(error => {
        console.warn('tfcoach: could not load settings', error);
      });
    }

    // A course notebook is copied next to the notebook being worked on (else the root).
    const currentFolder = () => {
      const path = tracker.currentWidget?.context.path ?? '';
      return path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
    };
    const openCourseNotebook = async (moduleId: string) => {
      try {
        const path = await api.copyCourseNotebook(moduleId, currentFolder());
        await app.commands.execute('docmanager:open', { path });
      } catch (error) {
        Notification.error(
          `TF Coach could not open the notebook of ${moduleId}: ${String(
            (error as Error).message ?? error
          )}`,
          { autoClose: 8000 }
        );
      }
    };
    const courses = new CourseOpener({
      api,
      rendermime,
      addToShell: widget => addCourseWidget(app, widget),
      activate: id => activateById(app, id),
      openNotebook: openCourseNotebook,
      openDeck: moduleId => void app.commands.execute(OPEN_MEMORY_DECK, { module: moduleId }),
      openMatch: moduleId => void app.commands.execute(OPEN_MATCH_PAIRS, { module: moduleId }),
      openConstellation: () => void app.commands.execute(OPEN_CONSTELLATION),
      openQuiz: moduleId => void app.commands.execute(OPEN_QUIZ, { module: moduleId })
    });
    // The study tools load on first use (their own chunks): the panel and course stay light.
    // One tab per tool and module: a tracker per tool keeps them, and the layout restorer
    // brings them back after a reload by running the tool's command again.
    const studyTrackers = {} as Record<StudyTool, WidgetTracker<StudyWidget>>;
    const studyModules = new WeakMap<Widget, string | null>();
    for (const tool of Object.keys(STUDY_COMMANDS) as StudyTool[]) {
      const studyTracker = new WidgetTracker<StudyWidget>({ namespace: `tfcoach-study-${tool}` });
      studyTrackers[tool] = studyTracker;
      void restorer?.restore(studyTracker, {
        command: STUDY_COMMANDS[tool],
        // `restoring`: the restorer waits for the command, which must not wait for it.
        args: widget => ({ module: studyModules.get(widget) ?? '', restoring: true }),
        name: widget => studyModules.get(widget) || 'all'
      });
    }
    // A tab being made, by tool and module: a second open (a double click, the command run
    // twice) waits for it instead of making another.
    const studyTabs = new Map<string, Promise<StudyWidget>>();
    // One client for every study tab: its `changed` signal tells them what the others did.
    let sharedStudyApi: Promise<StudyApi> | null = null;
    const studyApi = () =>
      (sharedStudyApi ??= import('./study/api').then(
        ({ StudyApi }) => new StudyApi(app.serviceManager.serverSettings)
      ));
    const makeStudy = async (
      tool: StudyTool,
      moduleId: string | null,
      restoring: boolean
    ): Promise<StudyWidget> => {
      const client = await studyApi();
      const openSection = (module: string, section: string) =>
        void courses.open({ module, section });
      // Each tool is its own chunk; the constellation's graph libraries are chunks of theirs.
      const widget: StudyWidget =
        tool === 'deck'
          ? new (await import('./study/deck')).MemoryDeck(
              client,
              openSection,
              moduleId,
              () => settings.value.deckDefinitionFirst
            )
          : tool === 'match'
            ? new (await import('./study/match')).MatchBoard(client, moduleId ?? 'module-01')
            : tool === 'quiz'
              ? new (await import('./study/quiz')).ModuleQuiz(client, moduleId ?? 'module-01')
              : new (await import('./study/constellation')).ConceptConstellation(
                  client,
                  openSection
                );
      studyModules.set(widget, moduleId);
      const tracked = studyTrackers[tool].add(widget);
      addCourseWidget(app, widget);
      // Shown in the turn it is added: shown after an await, Notebook 7's bottom panel opened
      // at its smallest height (seen in its browser test).
      if (!restoring) {
        activateById(app, widget.id);
      }
      // The restorer knows the tab once tracked: its saved place is applied after.
      await tracked;
      return widget;
    };
    const openStudy = async (tool: StudyTool, moduleId: string | null, restoring: boolean) => {
      // A tab added before the shell restored its saved layout would be dropped by it (a
      // command run right after a page load): wait for the restore first. The restore's own
      // run adds its tab before the layout is applied, which puts it back where it was.
      if (!restoring) {
        await app.restored;
      }
      const key = `${tool}:${moduleId ?? ''}`;
      let opening = studyTabs.get(key);
      const fresh = !opening;
      if (!opening) {
        opening = makeStudy(tool, moduleId, restoring);
        studyTabs.set(key, opening);
        opening.then(
          widget => widget.disposed.connect(() => studyTabs.delete(key)),
          () => studyTabs.delete(key)
        );
      }
      const widget = await opening;
      if (widget.isDisposed) {
        return;
      }
      if (restoring) {
        // The restorer waits for this command: the tab loads after the page is up.
        void app.restored.then(() => widget.load());
        return;
      }
      if (!fresh) {
        activateById(app, widget.id);
        return;
      }
      await widget.load();
      if (widget.isVisible) {
        activateById(app, widget.id);
      }
    };
    const openCourse = (course: ICourseRef) => {
      void app.commands.execute(OPEN_COURSE, { ...course });
    };

    const jumpToCell = (coach: NotebookCoach, cell: Cell, line?: number, column?: number) => {
      const notebook = coach.panel.content;
      const index = notebook.widgets.indexOf(cell);
      if (index < 0) {
        return;
      }
      app.shell.activateById(coach.panel.id);
      notebook.deselectAll();
      notebook.activeCellIndex = index;
      notebook.mode = 'command';
      void notebook.scrollToCell(cell, 'center').then(() => {
        if (line !== undefined && cell.editor) {
          notebook.mode = 'edit';
          cell.editor.setCursorPosition({ line: line - 1, column: Math.max(0, (column ?? 1) - 1) });
          cell.editor.focus();
        } else {
          notebook.node.focus();
        }
      });
      cell.addClass('jp-tfcoach-flash');
      window.setTimeout(() => cell.removeClass('jp-tfcoach-flash'), 1500);
    };

    const panel = new CoachPanel({ openCourse, jumpToCell });
    app.shell.add(panel, 'right', { rank: 600 });
    restorer?.add(panel, PANEL_ID);

    const coaches = new Map<NotebookPanel, NotebookCoach>();
    const hoverCards = new Map<NotebookPanel, NotebookHovers>();
    editorExtensions?.addExtension({
      name: 'jupyterlab_tfcoach:hover-cards',
      factory: () =>
        EditorExtensionRegistry.createImmutableExtension(
          hoverCardsExtension(view => {
            for (const [notebookPanel, hovers] of hoverCards) {
              if (notebookPanel.node.contains(view.dom)) {
                return hovers;
              }
            }
            return null;
          })
        )
    });
    const reveal = (coach: NotebookCoach, key: string) => {
      panel.setCoach(coach);
      app.shell.activateById(PANEL_ID);
      panel.reveal(key);
    };
    const addNotebook = (notebookPanel: NotebookPanel) => {
      if (coaches.has(notebookPanel)) {
        return;
      }
      const coach = new NotebookCoach(notebookPanel, api, live, settings, openCourse);
      const badges = new CellBadges(coach, settings, reveal);
      hoverCards.set(
        notebookPanel,
        new NotebookHovers(notebookPanel, api, openCourse)
      );
      coaches.set(notebookPanel, coach);
      notebookPanel.disposed.connect(() => {
        hoverCards.delete(notebookPanel);
        badges.dispose();
        coach.dispose();
        coaches.delete(notebookPanel);
      });
      if (tracker.currentWidget === notebookPanel) {
        panel.setCoach(coach);
      }
    };
    tracker.forEach(addNotebook);
    tracker.widgetAdded.connect((_, notebookPanel) => addNotebook(notebookPanel));
    const follow = () => {
      const current = tracker.currentWidget;
      panel.setCoach(current ? (coaches.get(current) ?? null) : null);
    };
    tracker.currentChanged.connect(follow);
    follow();

    app.commands.addCommand(OPEN_PANEL, {
      label: 'Open the TF Coach panel',
      caption: 'Show what the TensorFlow coach found in the active notebook',
      icon: coachIcon,
      execute: args => {
        app.shell.activateById(PANEL_ID);
        const key = typeof args.entry === 'string' ? args.entry : '';
        if (key) {
          panel.reveal(key);
        }
      }
    });
    app.commands.addCommand(OPEN_COURSE, {
      label: args =>
        args.title
          ? `TF Coach course: ${String(args.title)}`
          : args.isPalette
            ? 'Open the TF Coach course'
            : 'TF Coach course',
      caption: 'The course that explains what the TensorFlow coach points out',
      icon: args => (args.isPalette ? undefined : coachIcon),
      execute: args =>
        courses.open({
          module: typeof args.module === 'string' ? args.module : 'module-01',
          section: typeof args.section === 'string' ? args.section : '',
          title: typeof args.title === 'string' ? args.title : '',
          url: typeof args.url === 'string' ? args.url : ''
        })
    });
    app.commands.addCommand(OPEN_COURSE_NOTEBOOK, {
      label: args =>
        args.title
          ? `Open the TF Coach notebook: ${String(args.title)}`
          : 'Open the TF Coach notebook of a course module',
      caption: 'Copy the module\'s notebook into your folder (if it is not there yet) and open it',
      execute: args =>
        openCourseNotebook(typeof args.module === 'string' ? args.module : 'module-01')
    });
    const moduleArgument = (args: { module?: unknown }) =>
      typeof args.module === 'string' && args.module ? args.module : null;
    const restoring = (args: { restoring?: unknown }) => args.restoring === true;
    app.commands.addCommand(OPEN_MEMORY_DECK, {
      label: args =>
        moduleArgument(args)
          ? `TF Coach: Memory Deck of ${moduleArgument(args)}`
          : 'TF Coach: Memory Deck',
      caption: "The course's terms as flash cards, scheduled for you to remember them",
      execute: args => openStudy('deck', moduleArgument(args), restoring(args))
    });
    app.commands.addCommand(OPEN_MATCH_PAIRS, {
      label: args => `TF Coach: Match the Pairs of ${moduleArgument(args) ?? 'module-01'}`,
      caption: "Match a module's terms to their definitions, against the clock",
      execute: args => openStudy('match', moduleArgument(args), restoring(args))
    });
    app.commands.addCommand(OPEN_QUIZ, {
      label: args => `TF Coach: Quiz of ${moduleArgument(args) ?? 'module-01'}`,
      caption: "A module's review questions: answer, check, keep your best score",
      execute: args => openStudy('quiz', moduleArgument(args), restoring(args))
    });
    app.commands.addCommand(OPEN_CONSTELLATION, {
      label: 'TF Coach: Concept Constellation',
      caption: "Every term of the course, how they connect, and what you remember of each",
      execute: args => openStudy('constellation', null, restoring(args))
    });
    app.commands.addCommand(ANALYZE, {
      label: 'Check the notebook with TF Coach',
      isEnabled: () => tracker.currentWidget !== null,
      execute: async () => {
        const current = tracker.currentWidget;
        const coach = current ? coaches.get(current) : undefined;
        if (coach) {
          coach.linter.schedule(0);
          await coach.loadHistory();
        }
      }
    });
    const toggle = (key: 'showInlineFindings' | 'showCellBadges') => async () => {
      const value = !settings.value[key];
      if (registry) {
        await registry.set(PLUGIN_ID, key, value);
      } else {
        settings.update({ ...settings.value, [key]: value });
      }
    };
    app.commands.addCommand(TOGGLE_INLINE, {
      label: 'Show TF Coach findings inline in cells',
      isToggled: () => settings.value.showInlineFindings,
      execute: toggle('showInlineFindings')
    });
    app.commands.addCommand(TOGGLE_BADGES, {
      label: 'Show TF Coach badges on cells',
      isToggled: () => settings.value.showCellBadges,
      execute: toggle('showCellBadges')
    });
    settings.changed.connect(() => app.commands.notifyCommandChanged());
    if (palette) {
      palette.addItem({ command: OPEN_PANEL, category: 'TF Coach' });
      palette.addItem({ command: OPEN_COURSE, category: 'TF Coach', args: { isPalette: true } });
      palette.addItem({ command: OPEN_MEMORY_DECK, category: 'TF Coach' });
      palette.addItem({ command: OPEN_MATCH_PAIRS, category: 'TF Coach' });
      palette.addItem({ command: OPEN_CONSTELLATION, category: 'TF Coach' });
      palette.addItem({ command: OPEN_QUIZ, category: 'TF Coach' });
      palette.addItem({ command: ANALYZE, category: 'TF Coach' });
      palette.addItem({ command: TOGGLE_INLINE, category: 'TF Coach' });
      palette.addItem({ command: TOGGLE_BADGES, category: 'TF Coach' });
      // One palette entry per module notebook, once the course listing is in.
      courses
        .modules()
        .then(modules => {
          for (const module of modules.filter(m => m.notebook)) {
            palette.addItem({
              command: OPEN_COURSE_NOTEBOOK,
              category: 'TF Coach',
              args: { module: module.id, title: module.title }
            });
          }
        })
        .catch(error => console.warn('tfcoach: could not list the course modules', error));
    }
  }
};

export default plugin;
