/**
 * Why a card is due when the coach met its pitfall in the learner's code (the card's
 * `met.last`, recorded by the server's study feed: docs/rest.md "Study progress").
 */
import { cellLabel } from '../positions';
import type { ICard } from './api';

/** The parts of "You met this in `lessons/fit.ipynb`, code cell 4, line 2 (3 times)."
 * around the source, which the deck shows as code; null when the card was never met. */
export function metParts(
  card: ICard | undefined
): { before: string; source: string; after: string } | null {
  const last = card?.met?.last;
  if (!last || typeof last.source !== 'string' || !last.source) {
    return null;
  }
  const where: string[] = [];
  if (typeof last.cell === 'number') {
    where.push(cellLabel(last.cell));
  }
  if (typeof last.line === 'number') {
    where.push(`line ${last.line}`);
  }
  const count = card?.met?.count ?? 1;
  const times = count > 1 ? ` (${count} times)` : '';
  return {
    before: 'You met this in ',
    source: last.source,
    after: (where.length ? `, ${where.join(', ')}` : '') + times + '.'
  };
}
