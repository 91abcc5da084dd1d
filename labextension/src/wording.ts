/**
 * How report parts show in the panel, as text parts (rendered as text nodes,
 * never HTML). The coaching itself (what happened, why it matters, the fix) is
 * the core's `text` of each reason and change, shown as it comes: the page adds
 * no prose of its own, only a one-line summary of the data (argument, kind,
 * value before and after) above it.
 */

import { IRetraceReason, IVariableChange, asString } from './wire';

/** One piece of text with optional inline-code spans: rendered as text nodes. */
export type TextPart = { text: string; code?: boolean };

/** How a reason's value looks in prose: short and on one line. */
export function formatValue(value: unknown, limit = 80): string {
  let text = asString(value).replace(/\s+/g, ' ').trim();
  if (text.length > limit) {
    text = text.slice(0, limit - 1) + '\u2026';
  }
  return text || '?';
}

/** Labels of the reason kinds that compare an argument's before and after. */
const KIND_LABELS: Record<string, string> = {
  shape: 'shape',
  dtype: 'dtype',
  python_value: 'Python value',
  kind: 'kind of value'
};

/** Whether a reason's summary line is data (then its `text` is shown below it). */
export function hasDataSummary(reason: IRetraceReason): boolean {
  return reason.kind in KIND_LABELS;
}

/**
 * One retrace reason's summary line, e.g. `x`: shape (3,) -> (4,); a reason
 * without such data (a side effect, a stale value) is the core's text itself.
 * Returned as parts so the argument name renders as code, still as text.
 */
export function formatReason(reason: IRetraceReason): TextPart[] {
  const kind = reason.kind;
  if (kind === 'first_trace') {
    // The core says which: a plain first trace, or a recreated function object.
    return reason.text ? inlineCode(reason.text) : [{ text: 'first trace' }];
  }
  const words = KIND_LABELS[kind];
  const hasValues =
    reason.before !== undefined &&
    reason.before !== null &&
    reason.after !== undefined &&
    reason.after !== null;
  const parts: TextPart[] = [];
  if (reason.argument) {
    parts.push({ text: reason.argument, code: true }, { text: ': ' });
  }
  if (words && hasValues) {
    parts.push({
      text: `${words} ${formatValue(reason.before)} \u2192 ${formatValue(
        reason.after
      )}`
    });
    return parts;
  }
  if (words) {
    parts.push({ text: `new ${words}` });
    if (reason.text) {
      parts.push({ text: ` (${reason.text})` });
    }
    return parts;
  }
  parts.push(...(reason.text ? inlineCode(reason.text) : [{ text: 'a new input signature' }]));
  return parts;
}

/** Plain-text version of `formatReason`, with the argument in backticks. */
export function reasonText(reason: IRetraceReason): string {
  return formatReason(reason)
    .map(p => (p.code ? `\`${p.text}\`` : p.text))
    .join('');
}

/** A variable change's summary line: its name and, when known, before -> after. */
export function formatVariable(change: IVariableChange): TextPart[] {
  const parts: TextPart[] = [{ text: change.name || '?', code: true }];
  if (
    change.before !== undefined &&
    change.before !== null &&
    change.after !== undefined &&
    change.after !== null
  ) {
    parts.push({
      text: `: ${formatValue(change.before)} \u2192 ${formatValue(change.after)}`
    });
  }
  return parts;
}

/**
 * Split prose that marks code with backticks (as the monitor and the rules
 * write it) into text parts; unpaired backticks stay as they are.
 */
export function inlineCode(text: string): TextPart[] {
  const parts: TextPart[] = [];
  const pattern = /`([^`\n]+)`/g;
  let last = 0;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(text)) !== null) {
    if (match.index > last) {
      parts.push({ text: text.slice(last, match.index) });
    }
    parts.push({ text: match[1], code: true });
    last = match.index + match[0].length;
  }
  if (last < text.length) {
    parts.push({ text: text.slice(last) });
  }
  return parts;
}
