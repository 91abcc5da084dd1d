"""Hover cards for TensorFlow names, resolved through the file's own imports and
bindings (``symbols.py``); no parsing happens here, so a hover is a regex on one
line plus dictionary lookups. The card content lives in the course
(``jupyterlab_tfcoach.course.api_cards``); this module only renders it as Markdown
and escapes what comes from the user's file."""

from __future__ import annotations

import re
from dataclasses import dataclass

from jupyterlab_tfcoach.course.api_cards import ApiCard, api_card, methods_of
from lsp_server.course_links import CourseLinks
from lsp_server.lexing import DottedName, dotted_at
from lsp_server.symbols import SymbolTable, dotted_expr

__all__ = ["DottedName", "Resolution", "dotted_at", "escape_markdown", "render", "resolve"]

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~&])")


def escape_markdown(text: str) -> str:
    """Backslash-escape text taken from the user's file so it renders literally."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def _safe_url(url: str) -> str:
    return url.replace(" ", "%20").replace("(", "%28").replace(")", "%29")


@dataclass(frozen=True)
class Resolution:
    card: ApiCard
    dotted: DottedName
    receiver: str | None = None  # the bound name for methods / bound objects
    kind: str | None = None  # what the receiver is bound to ("Variable", "GradientTape")
    bound_on_line: int | None = None


def resolve(dotted: DottedName, table: SymbolTable, line: int) -> Resolution | None:
    """``line`` is 1-based in the coordinates the table was built with."""
    card = api_card(table.resolve(dotted_expr(dotted.parts)))
    if card is not None:
        return Resolution(card, dotted)
    if len(dotted.parts) >= 2:
        receiver, method = ".".join(dotted.parts[:-1]), dotted.parts[-1]
        binding = table.binding_at(receiver, line)
        if binding is not None and binding.kind and method in methods_of(binding.kind):
            card = api_card(f"{binding.kind}.{method}")
            if card is not None:
                return Resolution(card, dotted, receiver, binding.kind, binding.line)
    binding = table.binding_at(dotted.text, line)
    if binding is not None and binding.kind:
        card = api_card(f"tf.{binding.kind}")
        if card is not None:
            return Resolution(card, dotted, dotted.text, binding.kind, binding.line)
    return None


def render(resolution: Resolution, links: CourseLinks, markdown: bool = True) -> str:
    """The card as Markdown (user text escaped) or, for clients that only take plain text
    (e.g. eglot 1.9 without markdown-mode), as plain text with the link spelled out."""
    card = resolution.card
    title = card.public_name
    written = resolution.dotted.text
    escape = escape_markdown if markdown else str
    lines = [f"**{title}**" if markdown else title]
    if resolution.receiver is not None:
        lines[0] += (
            f" · {escape(resolution.receiver)} is bound to a "
            f"tf.{resolution.kind} on line {resolution.bound_on_line}"
        )
    elif written != title:
        lines[0] += f" · written {escape(written)} here"
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
