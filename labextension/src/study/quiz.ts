/**
 * A module's quiz: its review questions (`GET study/quiz-questions`, the `## Review` section
 * of the module), one at a time. The learner writes (or thinks) an answer, reveals the model
 * answer, and rates their own: right, partly or wrong. At the end the score is saved
 * (`POST study/quiz`) and the module's best is shown. Text nodes only (code spans as
 * `<code>`). Loaded lazily with the rest of `study/`.
 */
import { Widget } from '@lumino/widgets';

import { el, textParts } from '../dom';
import { inlineCode } from '../wording';
import { IQuizAnswer, IQuizQuestion, StudyApi } from './api';
import {
  SelfRating,
  bestQuizText,
  clipped,
  paragraphs,
  quizRatingForKey,
  quizResult
} from './order';

export const SELF_RATINGS: { rating: SelfRating; label: string; key: string }[] = [
  { rating: 'right', label: 'I had it right', key: '1' },
  { rating: 'partly', label: 'Partly', key: '2' },
  { rating: 'wrong', label: 'I had it wrong', key: '3' }
];

/** What is kept of an answer the learner did not write down. */
export const UNWRITTEN = '(answered in my head)';

function prose(markdown: string): HTMLElement[] {
  return paragraphs(markdown).map(paragraph => el('p', {}, ...textParts(inlineCode(paragraph))));
}

export class ModuleQuiz extends Widget {
  private _questions: IQuizQuestion[] = [];
  private _index = 0;
  private _ratings: SelfRating[] = [];
  private _answers: IQuizAnswer[] = [];
  private _revealed = false;
  private readonly _progress = el('p', {
    className: 'jp-tfcoach-deck-counts jp-tfcoach-quiz-progress',
    attrs: { 'aria-live': 'polite' }
  });
  private readonly _question = el('div', { className: 'jp-tfcoach-quiz-question' });
  private readonly _yours = el('textarea', {
    className: 'jp-tfcoach-quiz-yours',
    attrs: {
      rows: '4',
      maxlength: '1000',
      'aria-label': 'Your answer (you may also answer in your head)',
      placeholder: 'Your answer (or think it, then show the answer)'
    }
  });
  private readonly _reveal = el(
    'button',
    { className: 'jp-tfcoach-deck-rate jp-tfcoach-quiz-reveal', attrs: { type: 'button' } },
    'Show the answer'
  );
  private readonly _answer = el('div', {
    className: 'jp-tfcoach-quiz-answer',
    attrs: { 'aria-live': 'polite' }
  });
  private readonly _rate = el('div', {
    className: 'jp-tfcoach-deck-ratings jp-tfcoach-quiz-ratings',
    attrs: { role: 'group', 'aria-label': 'How was your answer?' }
  });
  private readonly _result = el('p', {
    className: 'jp-tfcoach-quiz-result',
    attrs: { 'aria-live': 'polite' }
  });
  private readonly _best = el('p', { className: 'jp-tfcoach-match-best jp-tfcoach-quiz-best' });
  private readonly _again = el(
    'button',
    { className: 'jp-tfcoach-deck-rate jp-tfcoach-quiz-again', attrs: { type: 'button' } },
    'Take it again'
  );

  constructor(
    private readonly _api: StudyApi,
    private readonly _moduleId: string
  ) {
    super();
    this.addClass('jp-tfcoach-deck');
    this.addClass('jp-tfcoach-quiz');
    this.id = `tfcoach-quiz-${_moduleId}`;
    this.title.label = `Quiz: ${_moduleId}`;
    this.title.closable = true;
    this.node.setAttribute('aria-label', `TF Coach quiz, ${_moduleId}`);
    for (const { rating, label, key } of SELF_RATINGS) {
      const button = el(
        'button',
        {
          className: 'jp-tfcoach-deck-rate',
          attrs: {
            type: 'button',
            'data-rating': rating,
            'aria-keyshortcuts': key,
            title: `Key ${key}`
          }
        },
        label
      );
      button.addEventListener('click', () => void this._rateAnswer(rating));
      this._rate.appendChild(button);
    }
    this._reveal.addEventListener('click', () => this._show());
    this._again.addEventListener('click', () => this._start());
    // Once the answer is shown, 1/2/3 rate it right/partly/wrong (the deck rates with 1-4).
    this.node.addEventListener('keydown', event => {
      const target = event.target as HTMLElement;
      const rating = quizRatingForKey(
        event.key,
        this._revealed,
        target.tagName === 'TEXTAREA' || target.tagName === 'INPUT',
        event.altKey || event.ctrlKey || event.metaKey
      );
      if (rating) {
        event.preventDefault();
        event.stopPropagation();
        void this._rateAnswer(rating);
      }
    });
    this.node.append(
      el('h2', {}, `Quiz: ${_moduleId}`),
      el(
        'p',
        { className: 'jp-tfcoach-deck-help' },
        "The module's review questions. Answer, show the model answer, then say how yours was (keys 1, 2, 3)."
      ),
      this._progress,
      this._question,
      this._yours,
      el('div', { className: 'jp-tfcoach-deck-actions' }, this._reveal),
      this._answer,
      this._rate,
      this._result,
      this._best,
      this._again
    );
  }

  async load(): Promise<void> {
    try {
      this._questions = await this._api.quizQuestions(this._moduleId);
      this._best.textContent = bestQuizText(await this._api.bestQuiz(this._moduleId));
    } catch (error) {
      this._progress.textContent = `The quiz could not be loaded: ${String((error as Error).message ?? error)}`;
      return;
    }
    this._start();
  }

  protected onCloseRequest(): void {
    this.dispose();
  }

  protected onActivateRequest(): void {
    if (this._index < this._questions.length) {
      (this._revealed ? (this._rate.firstElementChild as HTMLElement) : this._yours)?.focus();
    } else {
      this._again.focus();
    }
  }

  private _start(): void {
    this._index = 0;
    this._revealed = false;
    this._yours.value = '';
    this._ratings = [];
    this._answers = [];
    this._result.textContent = '';
    this._again.hidden = true;
    this._render();
    this.onActivateRequest();
  }

  private _show(): void {
    if (this._index >= this._questions.length || this._revealed) {
      return;
    }
    this._revealed = true;
    this._render();
    (this._rate.firstElementChild as HTMLElement | null)?.focus();
  }

  private async _rateAnswer(rating: SelfRating): Promise<void> {
    const question = this._questions[this._index];
    if (!question || !this._revealed) {
      return;
    }
    this._ratings.push(rating);
    this._answers.push({
      question: clipped(question.question),
      answer: clipped(this._yours.value.trim() || UNWRITTEN),
      correct: rating === 'right'
    });
    // The next question starts folded, with an empty answer.
    this._index += 1;
    this._revealed = false;
    this._yours.value = '';
    this._render();
    if (this._index < this._questions.length) {
      this._yours.focus();
    } else {
      await this._finish();
    }
  }

  private async _finish(): Promise<void> {
    const result = quizResult(this._ratings);
    this._result.textContent = `Done: ${result.text}.`;
    this._again.hidden = false;
    try {
      const saved = await this._api.recordQuiz({
        module: this._moduleId,
        score: result.score,
        total: result.total,
        answers: this._answers
      });
      this._best.textContent = bestQuizText(saved.best);
    } catch (error) {
      this._result.textContent = `Done: ${result.text}. It could not be saved: ${String((error as Error).message ?? error)}`;
    }
    this._again.focus();
  }

  private _render(): void {
    const question = this._questions[this._index];
    const done = !question;
    this._question.replaceChildren(...(question ? prose(question.question) : []));
    this._yours.hidden = done;
    this._reveal.hidden = done;
    if (done) {
      this._progress.textContent = this._questions.length
        ? `All ${this._questions.length} questions answered.`
        : 'This module has no review questions.';
      this._answer.replaceChildren();
      this._rate.hidden = true;
      this._revealed = false;
      return;
    }
    this._progress.textContent = `Question ${this._index + 1} of ${this._questions.length}`;
    this._reveal.disabled = this._revealed;
    this._rate.hidden = !this._revealed;
    this._answer.replaceChildren(
      ...(this._revealed
        ? [el('h3', {}, 'The answer'), ...prose(question.answer)]
        : [])
    );
  }
}
