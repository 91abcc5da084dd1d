"""Hover cards as LSP Markdown (or plain text). Which card a name gets and what it
says is decided in ``jupyterlab_tfcoach.hover`` (shared with JupyterLab's cards);
this module only formats it and escapes what comes from the user's file."""

from __future__ import annotations

import re

from jupyterlab_tfcoach.course.links import CourseLinks
from jupyterlab_tfcoach.hover import (
    DottedName,
    Resolution,
    card_text,
    dotted_at,
    resolve,
    source_column,
)

__all__ = [
    "DottedName",
    "Resolution",
    "dotted_at",
    "escape_markdown",
    "render",
    "resolve",
    "source_column",
]

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~&])")


def escape_markdown(text: str) -> str:
    """Backslash-escape text taken from the user's file so it renders literally."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def _safe_url(url: str) -> str:
    return url.replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def render(
    resolution: Resolution,
    links: CourseLinks,
    markdown: bool = True,
    bound_where: str | None = None,
) -> str:
    """The card as Markdown (user text escaped) or, for clients that only take plain text
    (e.g. eglot 1.9 without markdown-mode), as plain text with the link spelled out.
    ``bound_where``: where the receiver was bound, as the reader finds it, when the
    parse's lines are not the reader's (a notebook's joined cells; see ``card_text``)."""
    card = card_text(resolution, bound_where)
    escape = escape_markdown if markdown else str
    lines = [f"**{card.title}**" if markdown else card.title]
    if card.receiver is not None:
        lines[0] += (
            f" · {escape(card.receiver)} is bound to a {card.bound_to} on {card.bound_where}"
        )
    elif card.written is not None:
        lines[0] += f" · written {escape(card.written)} here"
    pitfall = "**Pitfall:**" if markdown else "Pitfall:"
    lines += ["", card.summary, "", f"{pitfall} {card.pitfall}"]
    ref = links.ref(card.section_id)
    if ref is not None:
        if markdown:
            section = ref["title"].replace("[", "\\[").replace("]", "\\]")  # our Markdown: kept
            lines += ["", f"[Course: {section}]({_safe_url(ref['url'])})"]
        else:
            lines += ["", f"Course: {ref['title']} <{ref['url']}>"]
    return "\n".join(lines)
