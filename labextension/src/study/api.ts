/**
 * A client of the study routes (`tfcoach/api/study/...`, docs/rest.md "Study progress").
 * Part of the lazily loaded study chunk: nothing here runs until a study tool opens.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

/** A course term (`GET study/terms`). */
export interface ITerm {
  id: string;
  module: string;
  term: string;
  definition: string;
  section: string;
  prerequisites: string[];
  see_also: string[];
}

/** Where the coach last met a card's pitfall in the learner's code. */
export interface IMetPlace {
  source: string;
  /** The 0-based code cell, or null. */
  cell: number | null;
  /** The 1-based line in the cell, or null. */
  line: number | null;
  met_at: string;
}

/** A card's scheduling state, as the store answers it. */
export interface ICard {
  term: string;
  state: 'new' | 'learning' | 'review' | 'relearning';
  due: string;
  due_now: boolean;
  reviews: number;
  /** How often its pitfall was met in the learner's code, and the last place. */
  met?: { count: number; last: IMetPlace | null };
}

export interface IDeck {
  new: number;
  due_now: number;
  due_today: number;
  cards: ICard[];
}

/** One finished Match the Pairs game (`POST study/match`). */
export interface IMatchGame {
  module: string;
  seconds: number;
  mismatches: number;
  score: number;
  played_at: string;
}

/** A review question of a module (`GET study/quiz-questions`): Markdown text, shown as text. */
export interface IQuizQuestion {
  question: string;
  answer: string;
}

/** What the learner answered, as `POST study/quiz` keeps it. */
export interface IQuizAnswer {
  question: string;
  answer: string;
  correct: boolean;
}

/** A module's best quiz (the highest share right, then the first). */
export interface IQuizBest {
  score: number;
  total: number;
  taken_at: string;
}

/** 1 again, 2 hard, 3 good, 4 easy. */
export type Rating = 1 | 2 | 3 | 4;

/**
 * One client is shared by every study tab (index.ts): `changed` tells the others when one of
 * them changed the learner's cards (a rating, an import, a reset), so an open Constellation
 * shows the new state.
 */
export class StudyApi {
  private readonly _changed = new Signal<this, void>(this);

  constructor(readonly settings: ServerConnection.ISettings) {}

  /** Emitted after the learner's cards changed through this client. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  private async _request(path: string, init: RequestInit = {}): Promise<any> {
    const url = URLExt.join(this.settings.baseUrl, 'tfcoach/api/study', path);
    const response = await ServerConnection.makeRequest(url, init, this.settings);
    const data = await response.json().catch(() => null);
    if (!response.ok) {
      const message = data && typeof data.message === 'string' ? data.message : '';
      throw new Error(message || `HTTP ${response.status}`);
    }
    return data;
  }

  async terms(): Promise<ITerm[]> {
    const data = await this._request('terms');
    return Array.isArray(data?.terms) ? (data.terms as ITerm[]) : [];
  }

  /** The cards of `terms`, counted for the learner's day (their clock's midnight). */
  async deck(terms: string[]): Promise<IDeck> {
    const offset = -new Date().getTimezoneOffset();
    const query = URLExt.objectToQueryString({
      terms: terms.join(','),
      utc_offset_minutes: String(offset)
    });
    return (await this._request(`deck${query}`)) as IDeck;
  }

  /** The module's best game, or null before its first. */
  async bestMatch(moduleId: string): Promise<IMatchGame | null> {
    const query = URLExt.objectToQueryString({ module: moduleId });
    const data = await this._request(`match${query}`);
    return (data?.best?.[moduleId] as IMatchGame | undefined) ?? null;
  }

  async recordMatch(
    game: Omit<IMatchGame, 'played_at'>
  ): Promise<{ best: IMatchGame; new_best: boolean }> {
    return await this._request('match', { method: 'POST', body: JSON.stringify(game) });
  }

  async quizQuestions(moduleId: string): Promise<IQuizQuestion[]> {
    const query = URLExt.objectToQueryString({ module: moduleId });
    const data = await this._request(`quiz-questions${query}`);
    return Array.isArray(data?.questions) ? (data.questions as IQuizQuestion[]) : [];
  }

  /** The module's best quiz, or null before its first. */
  async bestQuiz(moduleId: string): Promise<IQuizBest | null> {
    const query = URLExt.objectToQueryString({ module: moduleId });
    const data = await this._request(`quiz${query}`);
    return (data?.best?.[moduleId] as IQuizBest | undefined) ?? null;
  }

  async recordQuiz(quiz: {
    module: string;
    score: number;
    total: number;
    answers: IQuizAnswer[];
  }): Promise<{ best: IQuizBest }> {
    return await this._request('quiz', { method: 'POST', body: JSON.stringify(quiz) });
  }

  /** The whole progress, a `tfcoach.study-progress/3` document (`GET study/export`). */
  async exportProgress(): Promise<unknown> {
    return await this._request('export');
  }

  /** Replace all progress with `progress`; a refused document throws the server's message. */
  async importProgress(progress: unknown): Promise<void> {
    await this._request('import', {
      method: 'POST',
      body: JSON.stringify({ progress, confirm: true })
    });
    this._changed.emit();
  }

  /** Delete all progress. */
  async resetProgress(): Promise<void> {
    await this._request('reset', { method: 'POST', body: JSON.stringify({ confirm: true }) });
    this._changed.emit();
  }

  async review(term: string, rating: Rating): Promise<ICard> {
    const data = await this._request('review', {
      method: 'POST',
      body: JSON.stringify({ term, rating })
    });
    this._changed.emit();
    return data.card as ICard;
  }
}
