"""A TensorFlow function's two results kept in one name (issue #25).

``grads = tf.clip_by_global_norm(grads, 1.0)`` keeps the pair (the clipped tensors, the
global norm) in ``grads``; a later ``zip(grads, model.trainable_variables)`` then pairs the
whole list and the norm with the first two variables, and the error that follows (a
shape mismatch deep in the optimizer) says nothing about the assignment. The same with
``tf.nn.moments`` (mean, variance), ``tf.unique`` (values, indices), ``tf.math.top_k``
(values, indices), ``tf.linalg.eigh`` and ``tf.linalg.qr``.

Recognised by its reading alone, for any error: a name on the failing line holds a tuple
of two and its newest assignment (in the failing cell, at any depth, else at the top of
the cells) is a call of one of those functions, not unpacked. The fix unpacks it.
"""

from __future__ import annotations

import ast
from typing import Any, NamedTuple

from jupyterlab_tfcoach.monitor.errors.cell_sources import assignments_in_cells, cell_frame
from jupyterlab_tfcoach.monitor.errors.context import CellFrame, ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine
from jupyterlab_tfcoach.monitor.errors.family_record import (
    GENERAL_SECTION,
    ErrorFamily,
    Finding,
    Recognised,
)


class Pair(NamedTuple):
    first: str  # what the first result is, in words
    second: str
    second_name: str  # the name the fix gives the result the learner did not mean


_PAIRS = {
    "clip_by_global_norm": Pair(
        "the clipped tensors", "the global norm before clipping", "global_norm"
    ),
    "moments": Pair("the mean", "the variance", "variance"),
    "unique": Pair("the unique values", "each input's index into them", "idx"),
    "top_k": Pair("the k largest values", "their indices", "indices"),
    "eigh": Pair("the eigenvalues", "the eigenvectors", "eigenvectors"),
    "qr": Pair("q", "r", "r"),
    # ``MultiHeadAttention(...)(q, v, return_attention_scores=True)``
    "return_attention_scores": Pair("the attention output", "the attention scores", "scores"),
}
_MAX_NAMES = 20
LOOP_SECTION = "training-loop"


def _pair_call(statement: ast.Assign) -> tuple[str, ast.Call] | None:
    """(function name, call) for ``name = tf.clip_by_global_norm(...)``, or an attention
    layer called with ``return_attention_scores=True``."""
    call = statement.value
    if not isinstance(call, ast.Call):
        return None
    if any(
        k.arg == "return_attention_scores"
        and isinstance(k.value, ast.Constant)
        and k.value.value is True
        for k in call.keywords
    ):
        return "return_attention_scores", call
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return (name, call) if name in _PAIRS else None


def _assignment(
    name: str, line: FailingLine, context: ErrorContext
) -> tuple[ast.Assign, CellFrame] | None:
    """The newest ``name = ...`` before the failing line in its own cell (loops and
    blocks included), else at the top level of the cells."""
    tree = line.frame.tree()
    failing = line.statement
    if tree is not None and failing is not None:
        found = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
            and node.lineno <= failing.lineno
        ]
        if found:
            return max(found, key=lambda node: node.lineno), line.frame
    for cell, statement in assignments_in_cells(name, context):
        return statement, cell_frame(cell)
    return None


def _is_pair(value: Any) -> bool:
    return isinstance(value, tuple | list) and len(value) == 2


def _read_pair(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    del error  # any error: the reading alone recognises it
    parts = list(line.frame.header())
    # ``result[0]`` or ``result.values`` takes one of the two: only a bare use counts.
    taken = {
        id(node.value)
        for part in parts
        for node in ast.walk(part)
        if isinstance(node, ast.Subscript | ast.Attribute)
    }
    names = {
        node.id
        for part in parts
        for node in ast.walk(part)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in taken
    }
    for name in sorted(names)[:_MAX_NAMES]:
        found, value = context.lookup(name, line.frame)
        if not found or not _is_pair(value):
            continue
        assigned = _assignment(name, line, context)
        if assigned is None:
            continue
        statement, frame = assigned
        pair_call = _pair_call(statement)
        if pair_call is None:
            continue
        function, call = pair_call
        pair = _PAIRS[function]
        written = frame.segment(call) or function
        rule = (
            f"`{name}` holds both results of {code(written)}: {pair.first} and "
            f"{pair.second}, as a pair, so the line uses the pair where it meant "
            f"{pair.first}. Unpack the two"
        )
        second = pair.second_name if pair.second_name != name else f"{name}_2"
        fixed = rewrite(frame, statement, statement.targets[0], f"{name}, {second}")
        fix = code(fixed) if fixed and "\n" not in fixed else None
        section = LOOP_SECTION if function == "clip_by_global_norm" else None
        return Finding(rule + ".", fix, section=section)
    return None


PAIR_KEPT_WHOLE = ErrorFamily(
    "a function's two results kept in one name",
    messages=(),
    read=_read_pair,
    section=GENERAL_SECTION,
)
