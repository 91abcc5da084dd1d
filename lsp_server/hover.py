"""Hover cards for TensorFlow names, resolved through the file's own imports and
bindings (``symbols.py``); no parsing happens here, so a hover is a regex on one
line plus dictionary lookups."""

from __future__ import annotations

import re
from dataclasses import dataclass

from lsp_server.cards import CARDS, METHODS, Card
from lsp_server.course_links import CourseLinks
from lsp_server.lexing import DottedName, dotted_at
from lsp_server.symbols import SymbolTable, dotted_expr

__all__ = ["DottedName", "Resolution", "dotted_at", "render", "resolve"]

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~&])")


def escape_markdown(text: str) -> str:
    """Backslash-escape text taken from the user's file so it renders literally."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def _safe_url(url: str) -> str:
    return url.replace(" ", "%20").replace("(", "%28").replace(")", "%29")


@dataclass(frozen=True)
class Resolution:
    key: str  # a key of CARDS
    dotted: DottedName
    receiver: str | None = None  # the bound name for methods / bound objects
    kind: str | None = None  # what the receiver is bound to ("Variable", "GradientTape")
    bound_on_line: int | None = None


def card_key_for(name: str | None) -> str | None:
    """A canonical TF name (``tf.function``) -> a CARDS key, including unbound
    methods spelled through the class (``tf.GradientTape.gradient``)."""
    if name is None:
        return None
    if name in CARDS:
        return name
    if name.startswith("tf."):
        cls, _, method = name[len("tf.") :].rpartition(".")
        if method in METHODS.get(cls, ()):
            return f"{cls}.{method}"
    return None


def resolve(dotted: DottedName, table: SymbolTable, line: int) -> Resolution | None:
    """``line`` is 1-based in the coordinates the table was built with."""
    key = card_key_for(table.resolve(dotted_expr(dotted.parts)))
    if key is not None:
        return Resolution(key, dotted)
    if len(dotted.parts) >= 2:
        receiver, method = ".".join(dotted.parts[:-1]), dotted.parts[-1]
        binding = table.binding_at(receiver, line)
        if binding is not None and binding.kind and method in METHODS.get(binding.kind, ()):
            return Resolution(
                f"{binding.kind}.{method}", dotted, receiver, binding.kind, binding.line
            )
    binding = table.binding_at(dotted.text, line)
    if binding is not None and binding.kind:
        return Resolution(f"tf.{binding.kind}", dotted, dotted.text, binding.kind, binding.line)
    return None


def render(resolution: Resolution, links: CourseLinks) -> str:
    card: Card = CARDS[resolution.key]
    written = resolution.dotted.text
    lines = [f"**{card.title}**"]
    if resolution.receiver is not None:
        lines[0] += (
            f" · {escape_markdown(resolution.receiver)} is bound to a "
            f"tf.{resolution.kind} on line {resolution.bound_on_line}"
        )
    elif written != card.title:
        lines[0] += f" · written {escape_markdown(written)} here"
    lines += ["", card.what, "", f"**Pitfall:** {card.pitfall}"]
    ref = links.ref(card.section_id)
    if ref is not None:
        title = ref["title"].replace("[", "\\[").replace("]", "\\]")  # our Markdown: kept
        lines += ["", f"[Course: {title}]({_safe_url(ref['url'])})"]
    return "\n".join(lines)
