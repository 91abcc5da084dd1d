/**
 * The server side of the coach: REST routes (docs/findings.md), the jupyter_events
 * bus and the kernels' own `tfcoach_report` iopub messages.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { Event, KernelMessage, ServerConnection } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import { IFinding, IReport, normalizeFinding, normalizeReport } from './model';

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

  /** One course module: its Markdown and sections. */
  async courseModule(moduleId: string): Promise<ICourseModule> {
    const data = (await this._request(
      `course/${encodeURIComponent(moduleId)}`
    )) as Record<string, unknown> | null;
    const record = data && typeof data === 'object' ? data : {};
    const sections = Array.isArray(record.sections) ? record.sections : [];
    return {
      id: typeof record.id === 'string' ? record.id : moduleId,
      title: typeof record.title === 'string' ? record.title : moduleId,
      markdown: typeof record.markdown === 'string' ? record.markdown : '',
      sections: sections
        .filter((s): s is Record<string, unknown> => !!s && typeof s === 'object')
        .map(s => ({ id: String(s.id ?? ''), title: String(s.title ?? '') }))
    };
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
