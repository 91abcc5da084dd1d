"""A dataset's function that ignores the element it is given (issue #25).

``files.interleave(lambda f: tf.data.TFRecordDataset(shard_files))``,
``ds.map(lambda x, y: (features, y))``: ``map``, ``filter``, ``interleave`` and
``flat_map`` call their function on every element, and a lambda whose parameter is never
read makes the same thing for each one (every shard reads all the files, every example
gets the whole array). Nothing raises; the dataset is just wrong (often several times too
long).

Read from the cell's text once it completed (a cell without one of those method names
costs a few substring tests): a lambda given to one of them, on a receiver whose name
holds a ``tf.data`` dataset after the cell, with a parameter (not ``_``-named) its body
never reads. When the body reads exactly one name of the namespace that holds a list or
tuple (the collection the element was meant to pick from), the fix reads the parameter
instead. Reads the cell's syntax and the types of a few names; imports nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.context import value_kind
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import parsed_source

SECTION = "tf-data"
_METHODS = ("map", "filter", "interleave", "flat_map")


def _receiver_name(node: ast.expr) -> str | None:
    """The name a method chain starts from: ``files`` in ``files.shuffle(4).interleave``."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            return None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for this cell's first dataset function that ignores its element."""
    if not any(f".{method}(" in source for method in _METHODS):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for call in ast.walk(tree):
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr in _METHODS
            and call.args
            and isinstance(call.args[0], ast.Lambda)
        ):
            continue
        function = call.args[0]
        parameters = [a.arg for a in function.args.args]
        read = {n.id for n in ast.walk(function.body) if isinstance(n, ast.Name)}
        ignored = [p for p in parameters if not p.startswith("_") and p not in read]
        if not parameters or len(ignored) != len(parameters):
            continue  # the element is read (or deliberately ignored with _)
        receiver = _receiver_name(call.func.value)
        if receiver is None or value_kind(namespace.get(receiver)) != "dataset":
            continue
        return [_note(call, function, ignored, read, source, namespace)]
    return []


def _note(
    call: ast.Call,
    function: ast.Lambda,
    ignored: list[str],
    read: set[str],
    source: str,
    namespace: Mapping[str, Any],
) -> Note:
    method = call.func.attr  # type: ignore[attr-defined]
    owner = ast.get_source_segment(source, call.func.value) or "the dataset"  # type: ignore[attr-defined]
    body = ast.get_source_segment(source, function.body) or "its body"
    names = ", ".join(f"`{p}`" for p in ignored)
    text = (
        f"The function given to `{owner}.{method}` (line {call.lineno} of this cell) never "
        f"reads its argument {names}: it computes `{body}` for every element alike, so each "
        f"element gives the same result (for interleave and flat_map, the whole set again "
        f"per element), and nothing raises."
    )
    collections = [
        name
        for name in sorted(read)
        if type(namespace.get(name)) in (list, tuple) and name not in ignored
    ]
    if len(ignored) == 1 and len(collections) == 1:
        fixed_body = ast.get_source_segment(source, function.body) or ""
        fixed = _replace_name(fixed_body, collections[0], ignored[0])
        if fixed and "\n" not in fixed:
            text += (
                f" Read the element instead of `{collections[0]}`: `lambda {ignored[0]}: {fixed}`."
            )
    else:
        text += f" Use {names} in the function's body."
    return reports.note(text, SECTION)


def _replace_name(text: str, old: str, new: str) -> str | None:
    """``text`` with the name ``old`` (a whole Name node) replaced by ``new``."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == old:
            node.id = new
    return ast.unparse(tree)
