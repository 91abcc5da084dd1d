/**
 * The Concept Constellation's data, as pure functions (tested under node,
 * `labextension/test/`): the course's terms as nodes, their links (prerequisites,
 * see-also) as edges, each node's mastery from the learner's deck, and the search box's
 * matches. No DOM, no graph library: `constellation.ts` draws what these return.
 */
import type { ICard, IDeck, ITerm } from './api';

/** What the learner's deck says about a term. */
export type Mastery = 'new' | 'learning' | 'review' | 'due';

export const MASTERY_LABELS: Record<Mastery, string> = {
  new: 'not studied yet',
  learning: 'learning',
  review: 'remembered (in review)',
  due: 'due for review now'
};

/** The ring drawn around a node (a transparent ring: not studied yet). */
export const MASTERY_RINGS: Record<Mastery, string> = {
  new: 'rgba(0, 0, 0, 0)',
  learning: '#e69f00',
  review: '#009e73',
  due: '#d55e00'
};

/**
 * One colour per module, in course order (Okabe-Ito's colour-blind-safe palette, then
 * greys): modules are told apart by colour, and the legend names each.
 */
export const MODULE_COLOURS = [
  '#0072b2',
  '#cc79a7',
  '#56b4e9',
  '#f0e442',
  '#7f7f7f',
  '#b3b3b3',
  '#4d4d4d'
];

export interface IConceptNode {
  id: string;
  name: string;
  module: string;
  section: string;
  definition: string;
  colour: string;
  mastery: Mastery;
  /** Links in and out: a well-connected term is drawn larger. */
  degree: number;
}

export type LinkKind = 'prerequisite' | 'see-also';

export interface IConceptLink {
  /** For a prerequisite: the term needed first. */
  source: string;
  target: string;
  kind: LinkKind;
}

export interface IConstellation {
  nodes: IConceptNode[];
  links: IConceptLink[];
  /** The modules in course order, each with its colour (the legend). */
  modules: { id: string; colour: string }[];
}

/** A term's mastery from its card (a term without a card is new). */
export function masteryOf(card: ICard | undefined): Mastery {
  if (!card || card.state === 'new') {
    return 'new';
  }
  if (card.due_now) {
    return 'due';
  }
  return card.state === 'review' ? 'review' : 'learning';
}

/**
 * Nodes and edges for `terms`. A prerequisite edge runs from the term needed first to the
 * term that needs it; a see-also pair is one edge, whichever side names it (and none when
 * a prerequisite already joins the pair). Links to ids the terms do not have are left out.
 */
export function buildConstellation(terms: ITerm[], deck: IDeck | null): IConstellation {
  const cards = new Map((deck?.cards ?? []).map(card => [card.term, card]));
  const known = new Set(terms.map(term => term.id));
  const moduleIds: string[] = [];
  for (const term of terms) {
    if (!moduleIds.includes(term.module)) {
      moduleIds.push(term.module);
    }
  }
  const colourOf = (module: string) =>
    MODULE_COLOURS[moduleIds.indexOf(module) % MODULE_COLOURS.length];
  const links: IConceptLink[] = [];
  const joined = new Set<string>();
  const pair = (a: string, b: string) => (a < b ? `${a}|${b}` : `${b}|${a}`);
  for (const term of terms) {
    for (const needed of term.prerequisites) {
      if (known.has(needed) && needed !== term.id && !joined.has(pair(needed, term.id))) {
        joined.add(pair(needed, term.id));
        links.push({ source: needed, target: term.id, kind: 'prerequisite' });
      }
    }
  }
  for (const term of terms) {
    for (const other of term.see_also) {
      if (known.has(other) && other !== term.id && !joined.has(pair(other, term.id))) {
        joined.add(pair(other, term.id));
        links.push({ source: term.id, target: other, kind: 'see-also' });
      }
    }
  }
  const degree = new Map<string, number>();
  for (const link of links) {
    degree.set(link.source, (degree.get(link.source) ?? 0) + 1);
    degree.set(link.target, (degree.get(link.target) ?? 0) + 1);
  }
  const nodes = terms.map(term => ({
    id: term.id,
    name: term.term,
    module: term.module,
    section: term.section,
    definition: term.definition,
    colour: colourOf(term.module),
    mastery: masteryOf(cards.get(term.id)),
    degree: degree.get(term.id) ?? 0
  }));
  return {
    nodes,
    links,
    modules: moduleIds.map(id => ({ id, colour: colourOf(id) }))
  };
}

/** Lower case, accents and punctuation folded to spaces: "tf.function" finds "tf function". */
function folded(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/**
 * The nodes a search matches, best first: the name equal to the query, then names starting
 * with it, then names containing it, then definitions containing it (course order within
 * each). An empty query matches nothing.
 */
export function searchNodes<T extends { name: string; definition: string }>(
  nodes: T[],
  query: string
): T[] {
  const wanted = folded(query);
  if (!wanted) {
    return [];
  }
  const rank = (node: T): number => {
    const name = folded(node.name);
    if (name === wanted) {
      return 0;
    }
    if (name.startsWith(wanted)) {
      return 1;
    }
    if (` ${name} `.includes(` ${wanted}`) || name.includes(wanted)) {
      return 2;
    }
    return folded(node.definition).includes(wanted) ? 3 : 4;
  };
  return nodes
    .map((node, index) => ({ node, index, rank: rank(node) }))
    .filter(entry => entry.rank < 4)
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .map(entry => entry.node);
}

/** The terms one link away from `id`: what it needs, what needs it, what it relates to. */
export function neighbours(
  constellation: IConstellation,
  id: string
): { needs: string[]; neededBy: string[]; related: string[] } {
  const needs: string[] = [];
  const neededBy: string[] = [];
  const related: string[] = [];
  for (const link of constellation.links) {
    if (link.kind === 'prerequisite') {
      if (link.target === id) {
        needs.push(link.source);
      } else if (link.source === id) {
        neededBy.push(link.target);
      }
    } else if (link.source === id) {
      related.push(link.target);
    } else if (link.target === id) {
      related.push(link.source);
    }
  }
  return { needs, neededBy, related };
}

export interface IPoint {
  x: number;
  y: number;
  z: number;
}

/**
 * Where to put the camera to look at `target` from `distance` away with no other star in
 * front of it: of 26 directions (the cube's faces, edges and corners, the outward one
 * first), the one whose line of sight passes farthest from every star between the camera
 * and the target. A searched star is then the one in the middle of the view, not hidden.
 */
export function clearViewpoint(target: IPoint, others: IPoint[], distance: number): IPoint {
  const outward = Math.hypot(target.x, target.y, target.z);
  const directions: IPoint[] = [];
  if (outward > 1e-6) {
    directions.push({ x: target.x / outward, y: target.y / outward, z: target.z / outward });
  }
  for (const x of [-1, 0, 1]) {
    for (const y of [-1, 0, 1]) {
      for (const z of [-1, 0, 1]) {
        const length = Math.hypot(x, y, z);
        if (length > 0) {
          directions.push({ x: x / length, y: y / length, z: z / length });
        }
      }
    }
  }
  let best = directions[0];
  let bestClearance = -1;
  for (const direction of directions) {
    let clearance = Infinity;
    for (const other of others) {
      const dx = other.x - target.x;
      const dy = other.y - target.y;
      const dz = other.z - target.z;
      // How far along the line of sight (towards the camera) the star is.
      const along = dx * direction.x + dy * direction.y + dz * direction.z;
      if (along <= 0 || along >= distance) {
        continue; // behind the target, or behind the camera
      }
      const across = Math.sqrt(Math.max(0, dx * dx + dy * dy + dz * dz - along * along));
      clearance = Math.min(clearance, across);
    }
    if (clearance > bestClearance + 1e-9) {
      best = direction;
      bestClearance = clearance;
    }
  }
  return {
    x: target.x + best.x * distance,
    y: target.y + best.y * distance,
    z: target.z + best.z * distance
  };
}
