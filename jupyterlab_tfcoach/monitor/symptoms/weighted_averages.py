"""A sum weighted by counts divided by how many counts there are, not by their total.

``sum(n * w for n, w in zip(sizes, layer_ws)) / len(sizes)`` weights each value by its
count (a client's number of examples, a batch's size) and divides by the number of
counts: the result is the weighted average times the mean count, so averaging identical
values returns them hundreds of times larger (federated averaging by client sizes, a
mean of per-batch means weighted by batch sizes). Nothing raises. A weighted average
divides by the sum of its weights.

Told from the cell's source (after a completed cell; nothing is run), in any scope: a
division whose left side is ``sum(a * b for a, b in zip(C, D))`` (a generator or list
comprehension, either order of the product, or ``np.sum`` of such a list) and whose right
side is ``len(C)``, where ``C`` (the sequence the coefficients come from) is named as
counts (a word ``size``, ``sizes``, ``count``, ``counts``, ``num``, ``samples``,
``examples``, ``lengths``, ``freq`` in its name). Counts of at least one example have a
mean of one only when every count is one, so the division is wrong whatever the values;
coefficients named otherwise (importance weights, whose mean may be one on purpose) stay
silent. The fix divides by ``sum(C)``.
"""

from __future__ import annotations

import ast
import functools
import re
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "reducing-tensors"
MAX_CELL_CHARS = 50_000
_CACHED_SOURCES = 64
_COUNT_WORDS = frozenset(
    {
        "size",
        "sizes",
        "count",
        "counts",
        "num",
        "nums",
        "samples",
        "examples",
        "lengths",
        "freq",
        "freqs",
        "frequencies",
    }
)
_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS or "len(" not in source or "zip(" not in source:
        return []
    return [reports.note(text, SECTION) for text in _texts(source)]


@functools.lru_cache(maxsize=_CACHED_SOURCES)
def _texts(source: str) -> tuple[str, ...]:
    tree = parsed_source(source)
    if tree is None:
        return ()
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            text = _division_note(node, tree, source)
            if text is not None:
                return (text,)
    return ()


def _counted(name: str) -> bool:
    return bool({part.lower() for part in _PARTS.findall(name)} & _COUNT_WORDS)


def _weighting_sequence(node: ast.AST) -> ast.expr | None:
    """``C`` in ``sum(a * b for a, b in zip(C, D))`` (or ``np.sum([...])``): the zip
    argument whose loop name is a factor of the product, when the product multiplies the
    two loop names."""
    if not (isinstance(node, ast.Call) and call_name(node) == "sum" and node.args):
        return None
    inner = node.args[0]
    if not isinstance(inner, ast.GeneratorExp | ast.ListComp) or len(inner.generators) != 1:
        return None
    loop = inner.generators[0]
    product = inner.elt
    if not (
        isinstance(product, ast.BinOp)
        and isinstance(product.op, ast.Mult)
        and isinstance(loop.target, ast.Tuple)
        and isinstance(loop.iter, ast.Call)
        and call_name(loop.iter) == "zip"
        and len(loop.iter.args) == len(loop.target.elts) == 2
    ):
        return None
    names = [element.id if isinstance(element, ast.Name) else None for element in loop.target.elts]
    factors = {side.id for side in (product.left, product.right) if isinstance(side, ast.Name)}
    if None in names or set(names) != factors:
        return None
    return None if not loop.iter.args else _counted_argument(loop.iter.args)


def _counted_argument(arguments: list[ast.expr]) -> ast.expr | None:
    counted = [a for a in arguments if isinstance(a, ast.Name) and _counted(a.id)]
    return counted[0] if len(counted) == 1 else None


def _division_note(division: ast.BinOp, tree: ast.Module, source: str) -> str | None:
    sequence = _weighting_sequence(division.left)
    right = division.right
    if (
        sequence is None
        or not isinstance(sequence, ast.Name)
        or not isinstance(right, ast.Call)
        or call_name(right) != "len"
        or len(right.args) != 1
        or not isinstance(right.args[0], ast.Name)
        or right.args[0].id != sequence.id
    ):
        return None
    written = ast.get_source_segment(source, division)
    if not written or "\n" in written:
        return None
    where = ""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
            inner is division for inner in ast.walk(node)
        ):
            where = f", in `{node.name}`"
    counts = sequence.id
    left = ast.get_source_segment(source, division.left) or ""
    return (
        f"`{written}` (line {division.lineno} of this cell{where}) weights each value by its "
        f"count in `{counts}`, then divides by how many counts there are, `len({counts})`, "
        f"not by their total: the result is the weighted average times the mean of "
        f"`{counts}` (with counts in the hundreds, values hundreds of times too large; "
        "averaging identical values does not give them back). A weighted average divides by "
        f"the sum of its weights. Nothing raises. Fix: `{left} / sum({counts})`."
    )
