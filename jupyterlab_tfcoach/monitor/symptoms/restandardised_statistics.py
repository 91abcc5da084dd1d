"""Statistics for a normalisation read from data that were already standardised.

``x_train_n = (x_train - mean) / std`` standardises the training data; a serving wrapper,
a ``Normalization`` layer or a hand-written ``(x - m) / s`` meant for raw inputs must get
``mean`` and ``std`` (the raw data's statistics). Given ``x_train_n.mean(axis=0)`` and
``x_train_n.std(axis=0)`` instead (about 0 and 1, or whatever the standardised data
hold), it leaves raw inputs nearly as they are: the model then sees values on the raw
scale, far from what it learned, and nothing raises.

Told after a cell that completed (a cell without ``mean``/``std``/``var`` followed by
``(`` costs one regular-expression search), from its source, the history ``In`` and the
values after the cell: a reduction ``A.mean(...)``, ``A.std(...)``, ``A.var(...)`` (or
``np.mean(A, ...)``, ``np.std``, ``np.var``) of a name ``A`` given as an argument of a call
that stores it (a constructor, ``Normalization(mean=..., variance=...)``, a function:
not ``print`` or a formatting call) or subtracted from / dividing another name's data
(``(x_new - A.mean(0)) / A.std(0)``, ``x_new`` holding data on another scale than
``A``), where the newest top-level assignment of ``A`` (this cell before the line, then
the history, newest first) is a standardisation ``A = (B - M)
/ S`` of a name ``B``, and ``B`` and ``A`` hold float arrays (or eager tensors) of the same
shape whose scales differ: some column's spread or mean offset in ``B`` is at least
``SCALE_RATIO`` times ``A``'s. The fix gives the raw data's statistics: ``M`` and ``S``
when they are names (``S ** 2`` for a variance), else the same reduction of ``B``.

Reads names, the source and two arrays' column statistics; nothing here imports
TensorFlow.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import held_array
from jupyterlab_tfcoach.monitor.syntax import dotted_name, parsed_source
from jupyterlab_tfcoach.monitor.training.user_code import cell_place, cell_sources

SECTION = "preprocessing-adapt"
MAX_CELL_CHARS = 20_000
MAX_VALUES = 2_000_000
MAX_FEATURES = 512
SCALE_RATIO = 3.0
_WANTED = re.compile(r"\b(?:mean|std|var)\s*\(")
_REDUCTIONS = frozenset({"mean", "std", "var"})
_QUIET_CALLS = frozenset({"print", "format", "repr", "str", "round", "float", "display", "log"})


def _reduced(node: ast.AST) -> tuple[str, str] | None:
    """(the reduced name, ``mean``/``std``/``var``) of ``A.mean(...)`` or ``np.mean(A)``."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    kind = node.func.attr
    if kind not in _REDUCTIONS:
        return None
    if isinstance(node.func.value, ast.Name) and dotted_name(node.func.value) not in (
        "np",
        "numpy",
    ):
        return node.func.value.id, kind
    if node.args and isinstance(node.args[0], ast.Name):
        return node.args[0].id, kind
    return None


def _stored_reductions(tree: ast.Module) -> list[tuple[ast.Call, str, str, ast.AST]]:
    """(reduction, reduced name, kind, the node it is used in) for each reduction given to
    a storing call or used to scale another name's data."""
    found: list[tuple[ast.Call, str, str, ast.AST]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = dotted_name(node.func) or ""
            if name.split(".")[-1] in _QUIET_CALLS or _reduced(node) is not None:
                continue
            for argument in [*node.args, *(k.value for k in node.keywords)]:
                reduced = _reduced(argument)
                if reduced is not None:
                    found.append((argument, *reduced, node))  # type: ignore[arg-type]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub | ast.Div):
            reduced = _reduced(node.right)
            left = node.left.left if isinstance(node.left, ast.BinOp) else node.left
            if (
                reduced is not None
                and isinstance(left, ast.Name)
                and left.id != reduced[0]
                and isinstance(node.right, ast.Call)
            ):
                found.append((node.right, *reduced, node))
    return found


def _standardisation(value: ast.AST) -> tuple[str, ast.AST, ast.AST] | None:
    """(``B``, ``M``, ``S``) of ``(B - M) / S``."""
    if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div)):
        return None
    top = value.left
    if (
        isinstance(top, ast.BinOp)
        and isinstance(top.op, ast.Sub)
        and isinstance(top.left, ast.Name)
    ):
        return top.left.id, top.right, value.right
    return None


def _made_by(
    name: str, before_line: int, source: str, namespace: Mapping[str, Any]
) -> tuple[str, ast.AST, ast.AST, str, str] | None:
    """The standardisation that made ``name``: (``B``, ``M``, ``S``, the statement as
    written, where it is), read from the newest top-level assignment of ``name``."""
    sources, counts = cell_sources(namespace, source)
    for text, count in zip(sources, counts, strict=True):
        if name not in text or len(text) > MAX_CELL_CHARS:
            continue
        tree = parsed_source(text)
        if tree is None:
            continue
        for statement in reversed(tree.body):
            if count is None and statement.lineno >= before_line:
                continue
            if not (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
                and statement.targets[0].id == name
            ):
                continue
            made = _standardisation(statement.value)
            written = ast.get_source_segment(text, statement)
            if made is None or written is None or "\n" in written:
                return None
            return (*made, written, cell_place(count, statement.lineno))
    return None


def _columns(values: Any) -> tuple[Any, Any] | None:
    if values.ndim == 0 or values.shape[-1] > MAX_FEATURES or values.shape[0] < 2:
        return None
    table = values.reshape(-1, values.shape[-1] if values.ndim > 1 else 1).astype("float64")
    return table.mean(axis=0), table.std(axis=0)


def _scales_differ(standardised: Any, raw: Any, same_shape: bool = True) -> str | None:
    """Words comparing the two arrays' column statistics when the raw data's scale or
    offset is ``SCALE_RATIO`` times the standardised data's somewhere."""
    numpy = sys.modules["numpy"]
    if standardised.shape != raw.shape if same_shape else standardised.shape[1:] != raw.shape[1:]:
        return None
    done, before = _columns(standardised), _columns(raw)
    if done is None or before is None:
        return None
    with numpy.errstate(all="ignore"):
        if not (numpy.isfinite(done[0]).all() and numpy.isfinite(before[0]).all()):
            return None
        spread = float(numpy.max(before[1] / numpy.maximum(done[1], 1e-12)))
        offset = float(numpy.max(numpy.abs(before[0] - done[0]) / numpy.maximum(done[1], 1e-12)))
    if max(spread, offset) < SCALE_RATIO:
        return None
    return (
        f"its column means lie within {float(numpy.abs(done[0]).max()):.3g} of 0 and its "
        f"spreads reach {float(done[1].max()):.3g}, where the raw data's means reach "
        f"{float(numpy.abs(before[0]).max()):.3g} and their spreads "
        f"{float(before[1].max()):.3g}"
    )


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS or _WANTED.search(source) is None:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    by_name: dict[str, list[tuple[ast.Call, str, ast.AST]]] = {}
    for call, name, kind, user in _stored_reductions(tree):
        by_name.setdefault(name, []).append((call, kind, user))
    for name, uses in by_name.items():
        made = _made_by(name, uses[0][0].lineno, source, namespace)
        if made is None:
            continue
        raw_name, mean, scale, written, place = made
        standardised = held_array(namespace.get(name), MAX_VALUES, ("float",))
        raw = held_array(namespace.get(raw_name), MAX_VALUES, ("float",))
        if standardised is None or raw is None:
            continue
        compared = _scales_differ(standardised, raw)
        if compared is None or not all(
            _raw_operand(u, name, standardised, namespace) for u in uses
        ):
            continue
        return [_note(source, name, raw_name, mean, scale, written, place, uses, compared)]
    return []


def _raw_operand(
    use: tuple[ast.Call, str, ast.AST], name: str, standardised: Any, namespace: Mapping[str, Any]
) -> bool:
    """For ``(X - A.mean(0)) / A.std(0)``: ``X`` holds data on another scale than ``A``
    (raw data, which the statistics were meant for); another standardised array scaled
    by ``A``'s statistics is harmless. A storing call is not checked."""
    _, _, user = use
    if not isinstance(user, ast.BinOp):
        return True
    left = user.left.left if isinstance(user.left, ast.BinOp) else user.left
    if not isinstance(left, ast.Name):
        return False
    data = held_array(namespace.get(left.id), MAX_VALUES, ("float",))
    return data is not None and _scales_differ(standardised, data, same_shape=False) is not None


def _replacement(
    source: str, call: ast.Call, kind: str, raw_name: str, mean: ast.AST, scale: ast.AST
) -> str | None:
    if kind == "mean" and isinstance(mean, ast.Name):
        return mean.id
    if kind == "std" and isinstance(scale, ast.Name):
        return scale.id
    if kind == "var" and isinstance(scale, ast.Name):
        return f"{scale.id} ** 2"
    text = ast.get_source_segment(source, call)
    reduced = _reduced(call)
    if text is None or reduced is None:
        return None
    return re.sub(rf"\b{re.escape(reduced[0])}\b", raw_name, text, count=1)


def _note(
    source: str,
    name: str,
    raw_name: str,
    mean: ast.AST,
    scale: ast.AST,
    written: str,
    place: str,
    uses: list[tuple[ast.Call, str, ast.AST]],
    compared: str,
) -> Note:
    shown = [ast.get_source_segment(source, call) or name for call, _, _ in uses]
    listed = " and ".join(f"`{s}`" for s in dict.fromkeys(shown))
    line = uses[0][0].lineno
    text = (
        f"{listed} (line {line} of this cell) are statistics of `{name}`, which is already "
        f"standardised (`{written}`, {place}): {compared}. A normalisation built from "
        "them barely changes its inputs, so raw inputs pass through nearly unscaled and "
        "the model sees values unlike those it learned from. Nothing raises. Use the raw "
        f"data's statistics, the ones that made `{name}`."
    )
    # The statement of the first use, with every reduction replaced.
    statement = next(
        (s for s in ast.parse(source).body if s.lineno <= line <= (s.end_lineno or s.lineno)),
        None,
    )
    statement_text = ast.get_source_segment(source, statement) if statement is not None else None
    if statement is None or statement_text is None or "\n" in statement_text:
        return reports.note(text, SECTION)
    fixed = statement_text
    offset = statement.col_offset
    pieces: list[tuple[int, int, str]] = []
    for call, kind, _ in uses:
        if call.lineno != statement.lineno or call.end_lineno != statement.lineno:
            continue
        new = _replacement(source, call, kind, raw_name, mean, scale)
        if new is None or call.end_col_offset is None:
            return reports.note(text, SECTION)
        pieces.append((call.col_offset - offset, call.end_col_offset - offset, new))
    line_bytes = fixed.encode()
    for start, end, new in sorted(pieces, reverse=True):
        line_bytes = line_bytes[:start] + new.encode() + line_bytes[end:]
    return reports.note(text + f" Fix: `{line_bytes.decode()}`.", SECTION)
