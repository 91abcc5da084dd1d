"""A de-normalisation that does not undo the notebook's own normalisation.

Values scaled as ``z = (x - m) / s`` come back as ``x = z * s + m``. Written
``z * m + s`` (the statistics swapped), ``z / s + m`` (divided again), ``z * s - m``
(the mean taken away twice) or ``(z + m) * s`` (the mean added before the scale), the
forecasts or reconstructions land on another scale and offset, and every error computed
in real units afterwards is wrong. Nothing raises.

Found after a cell that completed (a cell without ``*`` or ``/`` and ``+`` or ``-``
costs two substring tests), from its source and the notebook's history (``In``, the
last ``MAX_HISTORY_CELLS`` cells, this one included): the forward transforms
``(x - m) / s`` written there give the pairs ``(m, s)`` by their text (``mean``,
``stats["mu"]``, ``scaler.scale_``...). An expression of this cell combining some other
value with both ``m`` and ``s`` in one of the four wrong forms above is told, when ``m``
and ``s`` are names (or attributes, items) that hold numbers or arrays after the cell.
The correct ``z * s + m`` (also ``m + s * z``) is not; but a value so restored and then
joined (``np.append``, ``np.concatenate``, ``tf.concat``, ``stack``) to a name cut from
a normalised array (``window = test_z[:24].copy()``) mixes real units into the model's
normalised inputs (a recursive forecast): told too, fix: join the normalised value. The
note names the expression, the forward transform it should undo and, when the result is
an array held by a name and ``m`` a number, the result's mean next to ``m``; fix: ``z *
s + m``.

The right inverse ``e * s + m`` is wrong too when ``e`` is an error: a difference of two
normalised values (``np.abs(y - p)``, ``(y - p) ** 2``), a reduction of one (an MAE, an
RMSE, an MSE: ``np.mean``, ``tf.reduce_mean``, ``np.sqrt``, a ``.mean()``) or a library
error function (``mean_absolute_error``...), written in the expression or assigned to the
name ``e`` in this cell or, newest first, in the history. Both values come back as ``a * s
+ m`` and ``b * s + m``: their difference is ``(a - b) * s``, the mean cancels, and adding
it makes a small error look as large as the data's level. Told when ``m`` is not a zero
number and ``e`` (a name) holds no negative number; fix: the learner's line with ``e *
s`` (``e * s ** 2`` for a squared error, whose units are squared).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import NUMBERS, held_array
from jupyterlab_tfcoach.monitor.syntax import (
    history_assignments,
    last_assignment_before,
    line_with_replacement,
    parsed_source,
    walk_nodes,
)

SECTION = "preprocessing-adapt"
MAX_CELL_CHARS = 50_000
MAX_HISTORY_CELLS = 60
MAX_VALUES = 1_000_000


def _text(node: ast.AST, source: str) -> str | None:
    return ast.get_source_segment(source, node)


def _forward_pairs(source: str, tree: ast.Module) -> dict[tuple[str, str], str]:
    """``(m, s) -> "(x - m) / s"`` for each forward transform written in ``source``."""
    found: dict[tuple[str, str], str] = {}
    for node in walk_nodes(tree):
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Div)
            and isinstance(node.left, ast.BinOp)
            and isinstance(node.left.op, ast.Sub)
        ):
            centre, scale = _text(node.left.right, source), _text(node.right, source)
            written = _text(node, source)
            if centre and scale and written and centre != scale:
                found.setdefault((centre, scale), written)
    return found


def _is_product(node: ast.AST) -> bool:
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult | ast.Div)


def _wrong(
    node: ast.BinOp, source: str, pairs: dict[tuple[str, str], str]
) -> tuple[str, str, str, str] | None:
    """``(value, m, s, how)`` when ``node`` undoes a pair ``(m, s)`` the wrong way."""
    if isinstance(node.op, ast.Add | ast.Sub):
        sides = [(node.left, node.right)]
        if isinstance(node.op, ast.Add):
            sides.append((node.right, node.left))
        for product, offset in sides:
            if not isinstance(product, ast.BinOp) or not _is_product(product):
                continue
            added = _text(offset, source)
            operands = [(product.left, product.right)]
            if isinstance(product.op, ast.Mult):
                operands.append((product.right, product.left))
            for value, factor in operands:
                by = _text(factor, source)
                shown = _text(value, source)
                if not (added and by and shown):
                    continue
                multiplies = isinstance(product.op, ast.Mult)
                adds = isinstance(node.op, ast.Add)
                if multiplies and adds and (by, added) in pairs and (added, by) not in pairs:
                    return shown, by, added, "swapped"
                if not multiplies and adds and (added, by) in pairs:
                    return shown, added, by, "divided"
                if multiplies and not adds and (added, by) in pairs:
                    return shown, added, by, "subtracted"
    if isinstance(node.op, ast.Mult):
        for inner, factor in ((node.left, node.right), (node.right, node.left)):
            if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Add):
                by = _text(factor, source)
                for value, offset in ((inner.left, inner.right), (inner.right, inner.left)):
                    added, shown = _text(offset, source), _text(value, source)
                    if added and by and shown and (added, by) in pairs:
                        return shown, added, by, "shifted first"
    return None


def _number(value: Any) -> float | None:
    """A Python or NumPy scalar number as a float (never converts another object)."""
    cls = type(value)
    if cls in (int, float) or (
        cls.__module__ == "numpy" and cls.__name__.startswith(("float", "int"))
    ):
        return float(value)
    return None


def _holds_numbers(text: str, namespace: Mapping[str, Any]) -> bool:
    """Whether every name of a statistic's text (``std``, ``hi - lo``, ``stats["mu"]``)
    holds a number or a numeric array (a name under an attribute or item: any value)."""
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError):
        return False
    held = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute | ast.Subscript)}
    names = [n for n in ast.walk(tree) if isinstance(n, ast.Name)]
    if not names:
        return False
    for name in names:
        if name.id not in namespace:
            return False
        value = namespace[name.id]
        if id(name) in held:
            if value is None:
                return False
        elif _number(value) is None and held_array(value, MAX_VALUES, NUMBERS) is None:
            return False
    return True


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS or ("*" not in source and "/" not in source):
        return []
    if "+" not in source and "-" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    history = namespace.get("In")
    sources = [source]
    if type(history) is list:
        sources += [s for s in history[-MAX_HISTORY_CELLS:] if type(s) is str]
    pairs: dict[tuple[str, str], str] = {}
    scaled: set[str] = set()
    for text in sources:
        found = _forward_of(text)
        if found is not None:
            for key, written in found[0].items():
                pairs.setdefault(key, written)
            scaled |= found[1]
    if not pairs:
        return []
    mixed = _mixed_note(tree, source, pairs, scaled)
    if mixed is not None:
        return [reports.note(mixed, SECTION)]
    for statement in tree.body:
        for node in ast.walk(statement):
            if not isinstance(node, ast.BinOp):
                continue
            wrong = _wrong(node, source, pairs)
            if wrong is None:
                continue
            _, centre, scale, _ = wrong
            if not (_holds_numbers(centre, namespace) and _holds_numbers(scale, namespace)):
                continue
            written = _text(node, source)
            if written is None:
                continue
            return [reports.note(_note(statement, node, written, wrong, pairs, namespace), SECTION)]
    error = _error_restored(tree, source, pairs, namespace)
    return [reports.note(error, SECTION)] if error is not None else []


# ------------------------------------------------------------- errors given the mean back
ABSOLUTE, SQUARED = "absolute", "squared"
_ABSOLUTE_CALLS = frozenset({"abs", "absolute", "fabs"})
_SQUARE_CALLS = frozenset({"square"})
_ROOT_CALLS = frozenset({"sqrt"})
# Reductions that keep an error an error (its units too).
_REDUCTIONS = frozenset(
    {
        "mean",
        "nanmean",
        "reduce_mean",
        "average",
        "median",
        "nanmedian",
        "max",
        "amax",
        "reduce_max",
        "sum",
        "nansum",
        "reduce_sum",
        "array",
        "asarray",
        "float",
    }
)
_ERROR_FUNCTIONS = {
    "mean_absolute_error": ABSOLUTE,
    "median_absolute_error": ABSOLUTE,
    "max_error": ABSOLUTE,
    "root_mean_squared_error": ABSOLUTE,
    "mean_squared_error": SQUARED,
    "squared_difference": SQUARED,
}
MAX_ERROR_DEPTH = 4
MAX_ERROR_HISTORY = 30


def _called(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _is_difference(node: ast.AST) -> bool:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
        return True
    return isinstance(node, ast.Call) and _called(node) == "subtract" and len(node.args) == 2


def _error_kind(
    node: ast.AST,
    tree: ast.Module,
    line: int,
    namespace: Mapping[str, Any],
    depth: int = 0,
) -> tuple[str, str] | None:
    """``(kind, how it was made)`` when ``node`` computes an error: a difference of two
    values under ``abs`` or a square, reduced or not, or a library error function; a name
    is followed to its assignment (this cell before ``line``, else the history)."""
    if depth > MAX_ERROR_DEPTH:
        return None
    if isinstance(node, ast.Name):
        made = _assigned_value(node.id, tree, line, namespace)
        if made is None:
            return None
        statement, its_tree = made
        found = _error_kind(statement.value, its_tree, statement.lineno, namespace, depth + 1)
        if found is None:
            return None
        return found[0], ast.unparse(statement)
    text = ast.unparse(node) if depth == 0 else ""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        if _is_difference(node.left) and isinstance(node.right, ast.Constant):
            return (SQUARED, text) if node.right.value == 2 else None
        return None
    if not isinstance(node, ast.Call):
        return None
    name = _called(node)
    if name in _ERROR_FUNCTIONS:
        return _ERROR_FUNCTIONS[name], text
    func = node.func
    # ``abs(d).mean()``, ``err.mean()``: a method with no argument reduces its receiver.
    if isinstance(func, ast.Attribute) and not node.args and name in _REDUCTIONS:
        return _error_kind(func.value, tree, line, namespace, depth + 1)
    if not node.args:
        return None
    first = node.args[0]
    if name in _ABSOLUTE_CALLS:
        return (ABSOLUTE, text) if _is_difference(first) else None
    if name in _SQUARE_CALLS:
        return (SQUARED, text) if _is_difference(first) else None
    if name in _ROOT_CALLS:
        inner = _error_kind(first, tree, line, namespace, depth + 1)
        return (ABSOLUTE, text) if inner is not None and inner[0] == SQUARED else None
    if name in _REDUCTIONS:
        inner = _error_kind(first, tree, line, namespace, depth + 1)
        return (inner[0], text) if inner is not None else None
    return None


def _assigned_value(
    name: str, tree: ast.Module, line: int, namespace: Mapping[str, Any]
) -> tuple[ast.Assign, ast.Module] | None:
    """The last one-line ``name = ...`` before ``line`` of ``tree``, else of the newest
    cell of the history that assigns it, with the tree it is in."""
    statement = last_assignment_before(tree, name, line, one_line=True)
    if statement is not None:
        return statement, tree
    for found, text in history_assignments(name, namespace, MAX_ERROR_HISTORY, MAX_CELL_CHARS):
        its_tree = parsed_source(text)
        if its_tree is not None and found.lineno == found.end_lineno:
            return found, its_tree
        return None
    return None


def _error_restored(
    tree: ast.Module, source: str, pairs: dict[tuple[str, str], str], namespace: Mapping[str, Any]
) -> str | None:
    """The note for ``e * s + m`` of an error ``e``, if the cell has one."""
    for statement in tree.body:
        for node in ast.walk(statement):
            if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
                continue
            for product, offset in ((node.left, node.right), (node.right, node.left)):
                if not (isinstance(product, ast.BinOp) and isinstance(product.op, ast.Mult)):
                    continue
                centre = _text(offset, source)
                for value, factor in ((product.left, product.right), (product.right, product.left)):
                    scale = _text(factor, source)
                    if not centre or not scale or (centre, scale) not in pairs:
                        continue
                    found = _error_kind(value, tree, node.lineno, namespace)
                    if found is None:
                        continue
                    if not (_holds_numbers(centre, namespace) and _holds_numbers(scale, namespace)):
                        continue
                    if _number(namespace.get(centre)) == 0.0:
                        continue  # adding a zero mean changes nothing
                    held = namespace.get(value.id) if isinstance(value, ast.Name) else None
                    error_value = _number(held)
                    if error_value is not None and error_value < 0:
                        continue  # a signed value: not an error's size
                    text = _error_note(
                        statement, node, value, centre, scale, found, pairs, source, namespace
                    )
                    if text is not None:
                        return text
    return None


def _error_note(
    statement: ast.stmt,
    node: ast.BinOp,
    value: ast.expr,
    centre: str,
    scale: str,
    found: tuple[str, str],
    pairs: dict[tuple[str, str], str],
    source: str,
    namespace: Mapping[str, Any],
) -> str | None:
    kind, made = found
    shown = _text(value, source)
    written = _text(statement, source)
    if not shown or not written or "\n" in written:
        return None
    by = scale if scale.isidentifier() or scale.endswith((")", "]")) else f"({scale})"
    base = shown if shown.isidentifier() or shown.endswith((")", "]")) else f"({shown})"
    scaled = f"{base} * {by}" if kind == ABSOLUTE else f"{base} * {by} ** 2"
    fixed = line_with_replacement(source.splitlines(), statement, node, scaled)
    if fixed is None:
        return None
    forward = pairs[(centre, scale)]
    what = "a squared error" if kind == SQUARED else "an error"
    origin = f" (`{made}`)" if made and made != ast.unparse(value) else ""
    text = (
        f"`{written}` (line {node.lineno}) de-normalises `{shown}` with the inverse of "
        f"`{forward}`, but `{shown}` is {what}{origin}, made from the difference of two "
        "normalised values: de-normalised, "
        f"`(a * {by} + {centre}) - (b * {by} + {centre}) = (a - b) * {by}`, so "
        f"`{centre}` cancels and must not be added. Adding it makes the error look as "
        "large as the data's level. Nothing raises."
    )
    error_value = _number(namespace.get(value.id)) if isinstance(value, ast.Name) else None
    scale_value, centre_value = _number(namespace.get(scale)), _number(namespace.get(centre))
    target = statement.targets[0] if isinstance(statement, ast.Assign) else None
    result = _number(namespace.get(target.id)) if isinstance(target, ast.Name) else None
    if (
        isinstance(target, ast.Name)
        and result is not None
        and error_value is not None
        and scale_value is not None
        and centre_value is not None
    ):
        real = error_value * scale_value * (scale_value if kind == SQUARED else 1.0)
        text += f" `{target.id}` is {result:.4g}; the error in the data's units is {real:.4g}."
    if kind == SQUARED:
        text += f" A squared error scales by the square of `{scale}`."
    return text + f" Scale it only: `{fixed}`."


_JOINS = frozenset({"append", "concatenate", "concat", "hstack", "vstack", "stack"})


def _root(node: ast.AST) -> str | None:
    """``w`` of ``w``, ``w[1:]``, ``w.copy()``, ``w[:N].copy()``."""
    for _ in range(6):
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args:
            node = node.func.value
        else:
            return None
    return None


# Each cell source's forward transforms, read once (a cell's text never changes): the
# history is then a few dictionary lookups per cell, not a parse of every earlier cell.
_FORWARD_CACHE: dict[str, tuple[dict[tuple[str, str], str], set[str]] | None] = {}
MAX_CACHED = 512


def _forward_of(text: str) -> tuple[dict[tuple[str, str], str], set[str]] | None:
    """The pairs ``(m, s)`` a source's forward transforms use, and the names they assign."""
    # IPython's history holds each cell with its final newlines dropped: the same code, one
    # entry (a cell is then read once, as it runs, not again as history).
    key = text.rstrip("\n")
    if key.endswith("\\"):  # a final newline that a backslash continues is code
        key = text
    if key in _FORWARD_CACHE:
        return _FORWARD_CACHE[key]
    found = None
    if "/" in text and "-" in text and len(text) <= MAX_CELL_CHARS:
        tree = parsed_source(text)
        if tree is not None:
            pairs = _forward_pairs(text, tree)
            found = (pairs, _scaled_names(text, tree, pairs)) if pairs else None
    if len(_FORWARD_CACHE) >= MAX_CACHED:
        _FORWARD_CACHE.clear()
    _FORWARD_CACHE[key] = found
    return found


def _scaled_names(text: str, tree: ast.Module, pairs: dict[tuple[str, str], str]) -> set[str]:
    """Names assigned a forward transform ``(x - m) / s`` of a known pair."""
    found: set[str] = set()
    for node in walk_nodes(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        value, target = node.value, node.targets[0]
        if (
            isinstance(target, ast.Name)
            and isinstance(value, ast.BinOp)
            and isinstance(value.op, ast.Div)
            and isinstance(value.left, ast.BinOp)
            and isinstance(value.left.op, ast.Sub)
            and (_text(value.left.right, text), _text(value.right, text)) in pairs
        ):
            found.add(target.id)
    return found


def _mixed_note(
    tree: ast.Module, source: str, pairs: dict[tuple[str, str], str], scaled: set[str]
) -> str | None:
    """A de-normalised value joined to normalised ones: ``window = np.append(window[1:],
    p_real)`` with ``window`` cut from a normalised array and ``p_real = p * s + m``."""
    scaled = set(scaled)
    real: dict[str, tuple[str, ast.Assign]] = {}  # name -> (the normalised value, statement)
    for node in walk_nodes(tree):
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            continue
        name, value = node.targets[0].id, node.value
        if _root(value) in scaled:
            scaled.add(name)
        if (
            isinstance(value, ast.BinOp)
            and isinstance(value.op, ast.Add)
            and isinstance(value.left, ast.BinOp)
            and isinstance(value.left.op, ast.Mult)
        ):
            added, by = _text(value.right, source), _text(value.left.right, source)
            inverse_of = _text(value.left.left, source)
            if added and by and inverse_of and (added, by) in pairs:
                real[name] = (inverse_of, node)
    if not real or not scaled:
        return None
    for node in walk_nodes(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in _JOINS:
            continue
        parts: list[ast.expr] = []
        pending = list(node.args)
        while pending and len(parts) < 64:  # ``[window[1:], [p_real]]``: nested lists too
            argument = pending.pop(0)
            if isinstance(argument, ast.List | ast.Tuple):
                pending.extend(argument.elts)
            else:
                parts.append(argument)
        normalised = [p for p in parts if _root(p) in scaled]
        restored = [p for p in parts if isinstance(p, ast.Name) and p.id in real]
        if not normalised or not restored:
            continue
        joined = _text(node, source)
        for statement in walk_nodes(tree):
            if (
                isinstance(statement, ast.Assign)
                and statement.value is node
                and len(statement.targets) == 1
            ):
                joined = _text(statement, source)
        given = restored[0].id
        inverse_of, made = real[given]
        window = _root(normalised[0])
        if joined is None:
            return None
        pattern = re.compile(rf"(?<![\w.]){re.escape(given)}(?!\w)")
        fixed = pattern.sub(inverse_of, joined) if len(pattern.findall(joined)) == 1 else None
        text = (
            f"`{joined}` (line {node.lineno}) joins `{given}`, which line {made.lineno} "
            f"de-normalised (`{_text(made, source)}`, real units), to `{window}`, which holds "
            "normalised values: the model is then fed one value on another scale, so from "
            "the second step on its inputs are wrong and the forecast drifts. Nothing "
            f"raises. Keep the model's inputs normalised: join `{inverse_of}`, and "
            "de-normalise only what you report"
        )
        return text + (f": `{fixed}`." if fixed is not None else ".")
    return None


_HOW = {
    "swapped": "multiplies by `{m}` and adds `{s}`: the two statistics are swapped",
    "divided": "divides by `{s}` again instead of multiplying by it",
    "subtracted": "subtracts `{m}` again instead of adding it back",
    "shifted first": "adds `{m}` before multiplying by `{s}`, which scales `{m}` too",
}


def _note(
    statement: ast.stmt,
    node: ast.BinOp,
    written: str,
    wrong: tuple[str, str, str, str],
    pairs: dict[tuple[str, str], str],
    namespace: Mapping[str, Any],
) -> str:
    value, centre, scale, how = wrong
    forward = pairs[(centre, scale)]
    by = scale if scale.isidentifier() or scale.endswith((")", "]")) else f"({scale})"
    if not (value.isidentifier() or value.endswith((")", "]"))):
        value = f"({value})"
    fixed = f"{value} * {by} + {centre}"
    target = statement.targets[0] if isinstance(statement, ast.Assign) else None
    if isinstance(target, ast.Name) and getattr(statement, "value", None) is node:
        written = f"{target.id} = {written}"
    text = (
        f"`{written}` (line {node.lineno}) should undo the normalisation `{forward}`, "
        f"whose inverse is `x * {by} + {centre}`; it {_HOW[how].format(m=centre, s=scale)}. "
        "The values come back on the wrong scale and offset, so everything computed from "
        "them in real units (errors, plots, the next forecast) is wrong. Nothing raises."
    )
    if isinstance(target, ast.Name) and getattr(statement, "value", None) is node:
        result = held_array(namespace.get(target.id), MAX_VALUES, NUMBERS)
        mean = _number(namespace.get(centre))
        if result is not None and result.size and mean is not None:
            text += (
                f" `{target.id}` averages {float(result.mean()):.4g}, while the data were "
                f"centred by `{centre}` = {mean:.4g} before scaling."
            )
    return text + f" Multiply by `{scale}`, then add `{centre}`: `{fixed}`."
