import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

const PANEL_ID = 'tfcoach-panel';
const OPEN_PANEL = 'tfcoach:open-panel';

/** The coach's right-sidebar panel (filled by the panel issue). */
class CoachPanel extends Widget {
  constructor() {
    super();
    this.id = PANEL_ID;
    this.title.caption = 'TF Coach';
    this.title.label = 'TF Coach';
    this.addClass('jp-tfcoach-panel');
    const empty = document.createElement('p');
    empty.className = 'jp-tfcoach-empty';
    empty.textContent =
      'Run a cell that uses TensorFlow: traces, retraces, variables and errors appear here.';
    this.node.appendChild(empty);
  }
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyterlab_tfcoach:plugin',
  description: 'A TensorFlow coach for JupyterLab.',
  autoStart: true,
  optional: [ICommandPalette, ILayoutRestorer],
  activate: (
    app: JupyterFrontEnd,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null
  ) => {
    const panel = new CoachPanel();
    app.shell.add(panel, 'right', { rank: 600 });
    app.commands.addCommand(OPEN_PANEL, {
      label: 'Open the TF Coach panel',
      execute: () => app.shell.activateById(PANEL_ID)
    });
    palette?.addItem({ command: OPEN_PANEL, category: 'TF Coach' });
    restorer?.add(panel, PANEL_ID);
  }
};

export default plugin;
