/**
 * The server side of the coach: REST routes (docs/findings.md), the jupyter_events
 * bus and the kernels' own `tfcoach_report` iopub messages.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { Event, KernelMessage, ServerConnection } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import {
  ICourseRef,
  IFinding,
  IReport,
  asCourse,
  normalizeFinding,
  normalizeReport
} from './model';

/** The iopub message type the kernel monitor publishes. */
export const REPORT_MSG_TYPE = 'tfcoach_report';

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

  /** Static findings for a notebook's code cells (cell = index in `cells`). */
  async analyze(cells: string[]): Promise<IFinding[]> {
    const data = await this._request('analyze', {
      method: 'POST',
      body: JSON.stringify({ cells })
    });
    const list =
      data && typeof data === 'object' && Array.isArray((data as any).findings)
        ? ((data as any).findings as unknown[])
        : [];
    return list.map(normalizeFinding).filter((f): f is IFinding => f !== null);
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

/** A report for a given kernel, from any delivery path. */
export interface IKernelReport {
  kernelId: string;
  report: IReport;
  via: 'iopub' | 'events';
}

/**
 * Every report the frontend hears of: the jupyter_events bus (all kernels,
 * one subscription) and whatever iopub streams the notebooks forward.
 * Consumers filter by kernel id; the timeline drops duplicates.
 */
export class ReportHub {
  private _received = new Signal<this, IKernelReport>(this);

  get received(): ISignal<this, IKernelReport> {
    return this._received;
  }

  /** Subscribe to the server's event bus. */
  connectEvents(events: Event.IManager): void {
    events.stream.connect((_, emission) => this._onEmission(emission));
  }

  /** Feed one iopub message of a kernel (only `tfcoach_report` is kept). */
  handleIopub(kernelId: string, msg: KernelMessage.IIOPubMessage): void {
    if ((msg.header.msg_type as string) !== REPORT_MSG_TYPE) {
      return;
    }
    const report = normalizeReport(msg.content);
    if (report) {
      this._received.emit({ kernelId, report, via: 'iopub' });
    }
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
      this._received.emit({ kernelId, report, via: 'events' });
    }
  }
}
