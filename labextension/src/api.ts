/**
 * The server side of the coach: REST routes (docs/rest.md) and the reports the
 * server emits on the jupyter_events bus (the kernels' `tfcoach_report` iopub
 * messages, validated and stored by the server first).
 */
import { URLExt } from '@jupyterlab/coreutils';
import { Event, ServerConnection } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import {
  ICourseRef,
  IFinding,
  IInputProblem,
  IReport,
  asCourse,
  normalizeFinding,
  normalizeInputProblem,
  normalizeNotes,
  normalizeReport
} from './wire';

/** The jupyter_events schema of reports re-emitted by the server extension. */
export const REPORT_SCHEMA_ID = 'https://events.jupyter.org/tfcoach/report/v1';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number
  ) {
    super(message);
  }
}

export interface ICourseSection {
  id: string;
  title: string;
}

export interface ICourseModule {
  id: string;
  title: string;
  markdown: string;
  sections: ICourseSection[];
  /** The file name of the module's notebook, if it has one. */
  notebook: string | null;
}

/** A module as the course listing gives it (no Markdown). */
export type ICourseModuleEntry = Omit<ICourseModule, 'markdown'>;

const asModuleEntry = (value: unknown, fallbackId = ''): ICourseModuleEntry => {
  const record = (value && typeof value === 'object' ? value : {}) as Record<string, unknown>;
  const sections = Array.isArray(record.sections) ? record.sections : [];
  const id = typeof record.id === 'string' ? record.id : fallbackId;
  return {
    id,
    title: typeof record.title === 'string' ? record.title : id,
    sections: sections
      .filter((s): s is Record<string, unknown> => !!s && typeof s === 'object')
      .map(s => ({ id: String(s.id ?? ''), title: String(s.title ?? '') })),
    notebook: typeof record.notebook === 'string' && record.notebook ? record.notebook : null
  };
};

/** A hover card on a TensorFlow name (what `POST tfcoach/api/hover` answers). */
export interface IHoverCard {
  title: string;
  /** The name the card is about, when it is bound to a TF object (user text). */
  receiver: string | null;
  bound_to: string | null;
  bound_where: string | null;
  /** How the code spells the name when not as the title (user text). */
  written: string | null;
  summary: string;
  pitfall: string;
  course: ICourseRef | null;
}

/** A card and the UTF-16 span of the name it is about, on the hovered line. */
export interface IHoverAnswer {
  card: IHoverCard;
  start: number;
  end: number;
}

const textOrNull = (value: unknown): string | null =>
  typeof value === 'string' && value ? value : null;

/** Lab's rule settings for the analysis: a list given replaces the project's. */
export interface IRuleSettings {
  select?: string[];
  ignore?: string[];
}

/** What `POST tfcoach/api/analyze` is told besides the cells. */
export interface IAnalyzeOptions {
  /** The notebook's path in the server's contents: its folder's `[tool.tfcoach]` applies. */
  path?: string;
  settings?: IRuleSettings;
}

/** What `POST tfcoach/api/analyze` answers. */
export interface IAnalysis {
  findings: IFinding[];
  /** What is wrong with the configuration (e.g. an invalid pyproject.toml), or null. */
  configError: string | null;
  /** Code left out of the analysis (`syntax_errors`): it does not parse, or nests too deeply. */
  problems: IInputProblem[];
  /** What limited the analysis as a whole (its time budget ran out), usually none. */
  notes: string[];
}

/** A typed client of the `tfcoach/api/...` routes. */
export class CoachApi {
  constructor(readonly settings: ServerConnection.ISettings = ServerConnection.makeSettings()) {}

  private async _request(path: string, init: RequestInit = {}): Promise<unknown> {
    const url = URLExt.join(this.settings.baseUrl, 'tfcoach/api', path);
    let response: Response;
    try {
      response = await ServerConnection.makeRequest(url, init, this.settings);
    } catch (error) {
      throw new ServerConnection.NetworkError(error as TypeError);
    }
    const text = await response.text();
    let data: unknown = null;
    if (text) {
      try {
        data = JSON.parse(text);
      } catch {
        data = null;
      }
    }
    if (!response.ok) {
      const message =
        data && typeof data === 'object' && 'message' in data
          ? String((data as { message: unknown }).message)
          : response.statusText;
      throw new ApiError(message || `HTTP ${response.status}`, response.status);
    }
    return data;
  }

  /** The kernel's report history, oldest first ([] for an unknown kernel). */
  async reports(kernelId: string): Promise<IReport[]> {
    try {
      const data = await this._request(
        `kernels/${encodeURIComponent(kernelId)}/reports`
      );
      const list =
        data && typeof data === 'object' && Array.isArray((data as any).reports)
          ? ((data as any).reports as unknown[])
          : [];
      return list.map(normalizeReport).filter((r): r is IReport => r !== null);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        return [];
      }
      throw error;
    }
  }

  /**
   * Static findings for a notebook's code cells (cell = index in `cells`). The server
   * applies the `[tool.tfcoach]` of the folder of `options.path` (a contents path) and
   * `options.settings` on top; `configError` says what is wrong with that configuration
   * (the findings then use the defaults), null when nothing is. `problems` is the code
   * the analysis left out, `notes` what cut the analysis short (docs/rest.md).
   */
  async analyze(cells: string[], options: IAnalyzeOptions = {}): Promise<IAnalysis> {
    const body: Record<string, unknown> = { cells };
    if (options.path) {
      body.path = options.path;
    }
    if (options.settings) {
      body.settings = options.settings;
    }
    const data = await this._request('analyze', {
      method: 'POST',
      body: JSON.stringify(body)
    });
    const record = (data && typeof data === 'object' ? data : {}) as Record<string, unknown>;
    const list = Array.isArray(record.findings) ? (record.findings as unknown[]) : [];
    const problems = Array.isArray(record.syntax_errors)
      ? (record.syntax_errors as unknown[])
      : [];
    return {
      findings: list.map(normalizeFinding).filter((f): f is IFinding => f !== null),
      configError:
        typeof record.config_error === 'string' && record.config_error
          ? record.config_error
          : null,
      problems: problems
        .map(normalizeInputProblem)
        .filter((p): p is IInputProblem => p !== null),
      notes: normalizeNotes(record.notes)
    };
  }

  /**
   * The card for the name at `line`/`character` (0-based, UTF-16) of code cell
   * `cell` of `cells`, or null where no TensorFlow name is.
   */
  async hover(
    cells: string[],
    cell: number,
    line: number,
    character: number
  ): Promise<IHoverAnswer | null> {
    const data = (await this._request('hover', {
      method: 'POST',
      body: JSON.stringify({ cells, cell, line, character })
    })) as Record<string, unknown> | null;
    const card = data?.card as Record<string, unknown> | null | undefined;
    const range = data?.range as Record<string, unknown> | undefined;
    if (!card || typeof card !== 'object' || !range) {
      return null;
    }
    const start = Number(range.start);
    const end = Number(range.end);
    if (!Number.isInteger(start) || !Number.isInteger(end) || end <= start) {
      return null;
    }
    return {
      card: {
        title: String(card.title ?? ''),
        receiver: textOrNull(card.receiver),
        bound_to: textOrNull(card.bound_to),
        bound_where: textOrNull(card.bound_where),
        written: textOrNull(card.written),
        summary: String(card.summary ?? ''),
        pitfall: String(card.pitfall ?? ''),
        course: asCourse(card.course)
      },
      start,
      end
    };
  }

  /** The course's modules in order, with their sections and notebooks. */
  async course(): Promise<ICourseModuleEntry[]> {
    const data = (await this._request('course')) as Record<string, unknown> | null;
    const modules = data && Array.isArray(data.modules) ? data.modules : [];
    return modules.map(module => asModuleEntry(module)).filter(module => module.id);
  }

  /** One course module: its Markdown and sections. */
  async courseModule(moduleId: string): Promise<ICourseModule> {
    const data = (await this._request(
      `course/${encodeURIComponent(moduleId)}`
    )) as Record<string, unknown> | null;
    const markdown = data && typeof data.markdown === 'string' ? data.markdown : '';
    return { ...asModuleEntry(data, moduleId), markdown };
  }

  /**
   * Copy a module's notebook into a folder of the server (unless a file of that
   * name is already there) and return its path.
   */
  async copyCourseNotebook(moduleId: string, directory: string): Promise<string> {
    const data = (await this._request(`course/${encodeURIComponent(moduleId)}/notebook`, {
      method: 'POST',
      body: JSON.stringify({ directory })
    })) as Record<string, unknown> | null;
    if (!data || typeof data.path !== 'string') {
      throw new ApiError('The server did not say where the notebook is', 500);
    }
    return data.path;
  }
}

/** A report of a kernel, as the server emitted it on the event bus. */
export interface IKernelReport {
  kernelId: string;
  report: IReport;
}

/**
 * The one live path of reports to the page: the server's jupyter_events bus (one
 * subscription for all kernels), which carries only the reports the server
 * validated and stored. Consumers filter by kernel id; the REST history fills in
 * what was emitted before the page listened.
 */
export class LiveReports {
  private _received = new Signal<this, IKernelReport>(this);

  get received(): ISignal<this, IKernelReport> {
    return this._received;
  }

  /** Subscribe to the server's event bus. */
  connectEvents(events: Event.IManager): void {
    events.stream.connect((_, emission) => this._onEmission(emission));
  }

  private _onEmission(emission: Event.Emission): void {
    const schema = String(emission.schema_id ?? '');
    if (schema !== REPORT_SCHEMA_ID && !schema.includes('tfcoach/report')) {
      return;
    }
    // The payload's fields sit next to schema_id; accept a nested `data` too.
    const payload = (
      emission.report === undefined && emission.data && typeof emission.data === 'object'
        ? emission.data
        : emission
    ) as Record<string, unknown>;
    const kernelId = payload.kernel_id;
    const report = normalizeReport(payload.report);
    if (typeof kernelId === 'string' && report) {
      this._received.emit({ kernelId, report });
    }
  }
}
