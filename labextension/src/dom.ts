/**
 * Tiny DOM helpers. Strings always become text nodes (never HTML): everything
 * the coach shows comes from kernels or files.
 */
import { isExternalCourseUrl } from './links';
import { ICourseRef } from './wire';
import { TextPart } from './wording';

export type Child = Node | string | null | undefined | false;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: {
    className?: string;
    title?: string;
    attrs?: Record<string, string>;
  } = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (props.className) {
    node.className = props.className;
  }
  if (props.title) {
    node.title = props.title;
  }
  for (const [name, value] of Object.entries(props.attrs ?? {})) {
    node.setAttribute(name, value);
  }
  append(node, ...children);
  return node;
}

export function append(node: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) {
      continue;
    }
    node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }
}

/** Text parts (from wording.ts) as nodes: code spans in <code>, all as text. */
export function textParts(parts: TextPart[]): Node[] {
  return parts.map(part =>
    part.code ? el('code', {}, part.text) : document.createTextNode(part.text)
  );
}

/** Opens a course reference (in JupyterLab, or in the browser if external). */
export type CourseOpener = (course: ICourseRef) => void;

/**
 * A course link. External http(s) URLs are real links opening a new tab; any
 * other URL (the packaged file:// default) opens the course inside JupyterLab.
 * No other URL scheme ever reaches an href.
 */
export function courseLink(
  course: ICourseRef | null | undefined,
  open: CourseOpener,
  prefix = 'Course: '
): HTMLElement | null {
  if (!course || (!course.section && !course.module && !course.url)) {
    return null;
  }
  const label = `${prefix}${course.title || course.section || course.module}`;
  if (isExternalCourseUrl(course.url)) {
    const link = el(
      'a',
      {
        className: 'jp-tfcoach-course-link',
        attrs: { href: course.url, target: '_blank', rel: 'noopener noreferrer' },
        title: course.url
      },
      label
    );
    link.addEventListener('click', event => event.stopPropagation());
    return link;
  }
  const button = el(
    'button',
    {
      className: 'jp-tfcoach-course-link jp-tfcoach-linkbutton',
      attrs: { type: 'button' },
      title: 'Open this course section in a JupyterLab tab'
    },
    label
  );
  button.addEventListener('click', event => {
    event.preventDefault();
    event.stopPropagation();
    open(course);
  });
  return button;
}
