"""A TensorFlow function's two results kept in one name (issue #25).

``grads = tf.clip_by_global_norm(grads, 1.0)`` keeps the pair (the clipped tensors, the
global norm) in ``grads``; a later ``zip(grads, model.trainable_variables)`` then pairs the
whole list and the norm with the first two variables, and the error that follows (a
shape mismatch deep in the optimizer) says nothing about the assignment. The same with
``tf.nn.moments`` (mean, variance), ``tf.unique`` (values, indices), ``tf.math.top_k``
(values, indices), ``tf.linalg.eigh``, ``tf.linalg.qr``, ``tf.linalg.normalize`` (the
unit-norm tensor, the norms: ``tf.math.l2_normalize`` returns one), ``tf.linalg.slogdet``
and ``tf.nn.weighted_moments``.

Recognised by its reading alone, for any error TensorFlow or Keras raised: a name on the
failing line holds a tuple of two and its newest assignment (in the failing cell, at any
depth, else at the top of the cells) is a call of one of those functions, not unpacked.
Python's own error on the pair is claimed too, though the traceback never reached the
library: ``scores.shape`` on the pair an attention layer returned with
``return_attention_scores=True`` (``'tuple' object has no attribute 'shape'``): the
attribute the message names, read on that name. The fix unpacks it, the learner's name
kept for the result it names (``_, scores = ...`` for the scores).
"""

from __future__ import annotations

import ast
import re
from typing import Any, NamedTuple

from jupyterlab_tfcoach.monitor.errors.cell_sources import assignments_in_cells, cell_frame
from jupyterlab_tfcoach.monitor.errors.context import CellFrame, ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine
from jupyterlab_tfcoach.monitor.errors.family_record import (
    GENERAL_SECTION,
    ErrorFamily,
    Finding,
    Recognised,
    raised_through_library,
)

# Python's message for an attribute read on the pair itself.
_PAIR_ATTRIBUTE = re.compile(r"^'(?:tuple|list)' object has no attribute '(?P<attr>\w+)'")


class Pair(NamedTuple):
    first: str  # what the first result is, in words
    second: str
    second_name: str  # the name the fix gives the second result when the learner's is first


_PAIRS = {
    "clip_by_global_norm": Pair(
        "the clipped tensors", "the global norm before clipping", "global_norm"
    ),
    "moments": Pair("the mean", "the variance", "variance"),
    "unique": Pair("the unique values", "each input's index into them", "idx"),
    "top_k": Pair("the k largest values", "their indices", "indices"),
    "eigh": Pair("the eigenvalues", "the eigenvectors", "eigenvectors"),
    "qr": Pair("q", "r", "r"),
    # ``tf.linalg.normalize``: unlike ``tf.math.l2_normalize`` it returns the norm too.
    "normalize": Pair("the tensor scaled to unit norm", "the norms it was divided by", "norms"),
    "slogdet": Pair("the sign of the determinant", "the log of its absolute value", "logdet"),
    "weighted_moments": Pair("the weighted mean", "the weighted variance", "variance"),
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
    parsed = error.parsed
    attribute = None
    if not raised_through_library(context, parsed):
        # Python refused an attribute of the pair: the name it was read on counts.
        found_attribute = _PAIR_ATTRIBUTE.match(parsed.message)
        if parsed.type != "AttributeError" or found_attribute is None:
            return None
        attribute = found_attribute.group("attr")
    parts = list(line.frame.header())
    # ``result[0]`` or ``result.values`` takes one of the two: only a bare use counts,
    # or the attribute Python's message says the pair has not.
    taken = {
        id(node.value)
        for part in parts
        for node in ast.walk(part)
        if isinstance(node, ast.Subscript | ast.Attribute)
        and not (isinstance(node, ast.Attribute) and node.attr == attribute)
    }
    if attribute is not None:
        taken |= {
            id(node)
            for part in parts
            for node in ast.walk(part)
            if isinstance(node, ast.Name)
            and not any(
                isinstance(outer, ast.Attribute) and outer.value is node and outer.attr == attribute
                for other in parts
                for outer in ast.walk(other)
            )
        }
    names = {
        node.id
        for part in parts
        for node in ast.walk(part)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in taken
    }
    for name in sorted(names)[:_MAX_NAMES]:
        found, value = context.lookup(name, line.frame)
        several = attribute is not None and _is_several(value)
        if not found or not (_is_pair(value) or several):
            continue
        assigned = _assignment(name, line, context)
        if assigned is None:
            continue
        statement, frame = assigned
        pair_call = _pair_call(statement) if _is_pair(value) else None
        if pair_call is None:
            if several:
                finding = _library_results(name, value, statement, frame, attribute, context)
                if finding is not None:
                    return finding
            continue
        function, call = pair_call
        pair = _PAIRS[function]
        written = frame.segment(call) or function
        # The learner's name says which result was meant: ``scores`` the attention scores.
        wants_second = pair.second_name in name.lower()
        meant = pair.second if wants_second else pair.first
        rule = (
            f"`{name}` holds both results of {code(written)}: {pair.first} and "
            f"{pair.second}, as a pair, so the line uses the pair where it meant "
            f"{meant}"
        )
        if attribute is not None:
            rule += f" (a {type(value).__name__} has no `.{attribute}`)"
        rule += ". Unpack the two"
        if wants_second:
            unpacked = f"_, {name}"
        else:
            second = pair.second_name if pair.second_name != name else f"{name}_2"
            unpacked = f"{name}, {second}"
        fixed = rewrite(frame, statement, statement.targets[0], unpacked)
        fix = code(fixed) if fixed and "\n" not in fixed else None
        section = LOOP_SECTION if function == "clip_by_global_norm" else None
        return Finding(rule + ".", fix, section=section)
    return None


_MAX_RESULTS = 8


def _is_several(value: Any) -> bool:
    return type(value) in (tuple, list) and 2 <= len(value) <= _MAX_RESULTS


def _library_results(
    name: str,
    value: Any,
    statement: ast.Assign,
    frame: CellFrame,
    attribute: str | None,
    context: ErrorContext,
) -> Finding | None:
    """Any TensorFlow/Keras call (a library function, or a Keras layer or model called)
    whose several results one name kept, read with an attribute of one result: what the
    call returned, item by item."""
    call = statement.value
    if not isinstance(call, ast.Call) or not isinstance(statement.targets[0], ast.Name):
        return None
    from jupyterlab_tfcoach.monitor.errors.context import value_kind
    from jupyterlab_tfcoach.monitor.errors.failing_line import describe, value_of
    from jupyterlab_tfcoach.monitor.errors.families_arguments import library_callable

    found, owner = value_of(call.func, frame, context)
    library = library_callable(call.func, frame, context) is not None
    if not library and not (found and value_kind(owner) in ("layer", "model")):
        return None
    written = frame.segment(call)
    described = describe(name, value)
    if not written or "\n" in written or described is None:
        return None
    names = ", ".join(f"{name}_{index}" for index in range(len(value)))
    fixed = rewrite(frame, statement, statement.targets[0], names)
    rule = (
        f"`{name}` holds what {code(written)} returned: {described.description}. The call "
        f"returns {len(value)} results, and the line reads `.{attribute}` on them all at "
        f"once (a {type(value).__name__} has none). Unpack them"
        + (f", {code(fixed)}," if fixed and "\n" not in fixed else "")
        + " and use the one meant"
    )
    return Finding(rule + ".", None)


PAIR_KEPT_WHOLE = ErrorFamily(
    "a function's two results kept in one name",
    messages=(),
    read=_read_pair,
    section=GENERAL_SECTION,
    without_library=True,
)
