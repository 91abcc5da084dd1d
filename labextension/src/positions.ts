/**
 * Finding positions: grouping by cell, how a cell is named for the learner, and
 * the code-point columns of the analysis as UTF-16 offsets (what CodeMirror
 * counts).
 */

import { IFinding } from './wire';

/**
 * How text for people names the code cell with 0-based index `cell` (among code
 * cells): `code cell N`, N counted from 1, as the CLI and hover cards say it
 * (docs/findings.md, "Naming cells"). Runtime reports keep their execution
 * count instead (`[5]`, as IPython's `Cell In[5]`).
 */
export function cellLabel(cell: number): string {
  return `code cell ${cell + 1}`;
}

/** Group findings by code cell index (null: not in a cell), in cell order. */
export function groupFindingsByCell(findings: IFinding[]): Map<number | null, IFinding[]> {
  const sorted = [...findings].sort(
    (a, b) =>
      (a.cell ?? -1) - (b.cell ?? -1) || a.line - b.line || a.column - b.column
  );
  const groups = new Map<number | null, IFinding[]>();
  for (const finding of sorted) {
    const list = groups.get(finding.cell) ?? [];
    list.push(finding);
    groups.set(finding.cell, list);
  }
  return groups;
}

/**
 * Convert a 1-based line and code-point column into a UTF-16 offset within
 * `text` (what CodeMirror counts), clamped to the text.
 */
export function offsetOf(text: string, line: number, column: number): number {
  let offset = 0;
  let currentLine = 1;
  while (currentLine < line) {
    const next = text.indexOf('\n', offset);
    if (next < 0) {
      return text.length;
    }
    offset = next + 1;
    currentLine++;
  }
  let lineEnd = text.indexOf('\n', offset);
  if (lineEnd < 0) {
    lineEnd = text.length;
  }
  let remaining = Math.max(0, column - 1);
  let position = offset;
  while (remaining > 0 && position < lineEnd) {
    const code = text.charCodeAt(position);
    position += code >= 0xd800 && code <= 0xdbff ? 2 : 1;
    remaining--;
  }
  return Math.min(position, lineEnd);
}
