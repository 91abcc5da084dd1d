"""A reshape written where a transpose was meant.

``tf.reshape(seq, (32, 8, 10))`` on a ``(32, 10, 8)`` batch of sequences gives the
``(batch, features, time)`` shape asked for, but reshape keeps the values in memory
order and only cuts them into new rows: ``out[0, 0]`` is the first ten values of the
first sequence, not one feature over time. Axes are swapped by ``tf.transpose``. Nothing
raises, and the model trains on scrambled inputs.

Found after a cell, from its source and the shapes its names hold (no hook, nothing
traced): each top-level ``out = tf.reshape(src, ...)`` / ``np.reshape(src, ...)`` /
``out = src.reshape(...)`` (a NumPy array) whose ``src`` and ``out`` are names holding
arrays or tensors of fully known shapes, ``src`` not rebound after the reshape in the
cell (its value is still the reshape's input). The reshape is told when ``out``'s
dimensions are those of ``src`` in another order, at least two of the sizes above 1
moved (moving sizes of 1 changes no order: ``(N, 1)`` to ``(1, N)`` is also a
transpose). The fix is the same statement with the call made a transpose, in the module
the learner called (``tf.transpose(src, [0, 2, 1])``; a positional permutation works
for TensorFlow, NumPy and ``keras.ops``) or the array's own ``src.transpose(0, 2, 1)``.
The statements are found once per cell source (cached); a cell costs a cached lookup
and a few shape reads.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import describe, show_shape
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import parsed_source, source_segment, walk_nodes

SECTION = "joining-indexing"
MAX_CELL_CHARS = 50_000
MAX_NOTES = 2
_CACHE_SIZE = 64
_ARRAY_KINDS = frozenset({"tensor", "variable", "keras_variable", "array"})


@dataclass(frozen=True)
class Reshape:
    """``out = mod.reshape(src, ...)`` or ``out = src.reshape(...)`` as written."""

    statement: str
    target: str
    source: str
    module: str | None  # ``tf``, ``np``, ``keras.ops``; None for the method form
    call: str  # the call's text, replaced by the fix
    line: int


def reshape_statements(source: str) -> list[Reshape]:
    """The cell's top-level reshapes of one name into another."""
    tree = parsed_source(source)
    if tree is None:
        return []
    last_bound: dict[str, int] = {}
    for node in walk_nodes(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            last_bound[node.id] = max(last_bound.get(node.id, 0), node.lineno)
    found: list[Reshape] = []
    for statement in tree.body:
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and isinstance(statement.value, ast.Call)
        ):
            continue
        call = statement.value
        func = call.func
        if not isinstance(func, ast.Attribute) or func.attr != "reshape":
            continue
        module: str | None
        if len(call.args) == 2 and isinstance(call.args[0], ast.Name):
            src = call.args[0].id
            module = source_segment(source, func.value)
        elif isinstance(func.value, ast.Name) and call.args:
            src, module = func.value.id, None
        else:
            continue
        text = source_segment(source, statement)
        call_text = source_segment(source, call)
        if not text or not call_text or "\n" in text or (module is not None and "\n" in module):
            continue
        if last_bound.get(src, 0) >= statement.lineno:
            continue  # rebound later: its value after the cell is not the reshape's input
        found.append(
            Reshape(text, statement.targets[0].id, src, module, call_text, statement.lineno)
        )
    return found


def transpose_order(
    before: tuple[int | None, ...], after: tuple[int | None, ...]
) -> list[int] | None:
    """The axes of ``before`` in ``after``'s order, when ``after`` is ``before``'s sizes
    reordered with at least two sizes above 1 moved; else None."""
    if len(before) != len(after) or len(before) < 2:
        return None
    if None in before or None in after or sorted(before) != sorted(after):  # type: ignore[type-var]
        return None
    kept = [size for size in before if size != 1]
    if kept == [size for size in after if size != 1]:
        return None
    used: set[int] = set()
    order: list[int] = []
    for size in after:
        axis = next(i for i, s in enumerate(before) if s == size and i not in used)
        used.add(axis)
        order.append(axis)
    return order


class ReshapeChecker:
    """After each completed cell: its reshapes whose result is a reordering of the input."""

    def __init__(self) -> None:
        self._statements: dict[str, list[Reshape]] = {}

    def _cell_statements(self, source: str) -> list[Reshape]:
        found = self._statements.get(source)
        if found is None:
            found = reshape_statements(source)
            if len(self._statements) >= _CACHE_SIZE:
                self._statements.pop(next(iter(self._statements)))
            self._statements[source] = found
        return found

    def notes(self, source: str, namespace: dict[str, object]) -> list[Note]:
        if not source or len(source) > MAX_CELL_CHARS or "reshape" not in source:
            return []
        notes: list[Note] = []
        for reshape in self._cell_statements(source):
            if reshape.source not in namespace or reshape.target not in namespace:
                continue
            before = describe(reshape.source, namespace[reshape.source])
            after = describe(reshape.target, namespace[reshape.target])
            if before is None or after is None or before.shape is None or after.shape is None:
                continue
            if before.kind not in _ARRAY_KINDS or after.kind not in _ARRAY_KINDS:
                continue
            if reshape.module is None and before.kind != "array":
                continue  # a tensor has no .transpose method to offer
            order = transpose_order(before.shape, after.shape)
            if order is None:
                continue
            notes.append(
                reports.note(_text(reshape, before.description, after.shape, order), SECTION)
            )
            if len(notes) >= MAX_NOTES:
                break
        return notes


def _text(reshape: Reshape, described: str, shape: tuple[int | None, ...], order: list[int]) -> str:
    if reshape.module is None:
        transposed = f"{reshape.source}.transpose({', '.join(map(str, order))})"
    else:
        transposed = f"{reshape.module}.transpose({reshape.source}, {order})"
    fixed = reshape.statement.replace(reshape.call, transposed, 1)
    return (
        f"`{reshape.statement}` (line {reshape.line} of this cell) reshapes "
        f"`{reshape.source}`, {described}, to {show_shape(shape)}: the same sizes in "
        "another order. A reshape does not swap axes: it keeps the values in memory order "
        f"and cuts them into rows of the new sizes, so `{reshape.target}` mixes values "
        "that belonged to different positions, without any error. If the axes were "
        f"meant to change places, transpose: `{fixed}`."
    )
