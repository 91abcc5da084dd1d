"""Integer tensors of two widths, one of them made by ``argmax``/``argmin`` at its default.

``tf.argmax`` and ``tf.argmin`` return int64 unless given ``output_type``; ids made by
``tf.range``, ``tf.fill``, ``tf.constant`` of Python ints, a tokenizer or a dataset are
int32. The two meet in ``tf.concat([tokens, next_id[:, None]], axis=1)`` (a decoding loop
that appends the predicted id), ``tf.stack``, a comparison or an arithmetic op, and
TensorFlow refuses: it never converts dtypes by itself. A cast at the failing line runs,
but the cure a teacher names is where the int64 came from: the ``argmax`` call, given
``output_type=tf.int32``, so the name holds int32 wherever it is read.

Two readings, both from the cells' source and the frames' values:

- ``list_operands``: the failing line's ``tf.concat``/``tf.stack``/``tf.add_n`` call
  (``ConcatV2``, ``Pack``, ``AddN``) whose first argument is a list written out: the
  elements the message's input numbers point at;
- ``argmax_origin``: a plain name (or a subscript of one, ``next_id[:, None]``) holding
  int64 whose newest assignment before the failing line (in the function holding it,
  else the cell's top level) is a TensorFlow ``argmax``/``argmin`` call without
  ``output_type``, while the other side is int32: the sentence naming it and that
  statement with ``output_type`` added.
"""

from __future__ import annotations

import ast
from types import ModuleType

from jupyterlab_tfcoach.monitor.errors.cell_sources import last_assignment
from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    code,
    dotted_root,
    innermost_function,
    rewrite,
)

# Ops built from one list argument, each input one element of it, in order.
LIST_OPS: dict[str, tuple[str, ...]] = {
    "ConcatV2": ("concat",),
    "Pack": ("stack",),
    "AddN": ("add_n",),
}
_INDEX_FUNCTIONS = frozenset({"argmax", "argmin"})
# The integer dtypes argmax can be asked for.
_OUTPUT_TYPES = frozenset({"int32", "int16", "uint16"})


def list_operands(
    op: str, frame_list: list[CellFrame]
) -> tuple[CellFrame, ast.Call, list[ast.expr]] | None:
    """The ``tf.concat([a, b, ...], ...)`` call of the failing line (the innermost frame
    that has one) and its list's elements."""
    names = LIST_OPS.get(op)
    if names is None:
        return None
    for frame in frame_list:
        found: list[tuple[ast.Call, list[ast.expr]]] = []
        for part in frame.header():
            for node in ast.walk(part):
                if not (isinstance(node, ast.Call) and node.args):
                    continue
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                values = node.args[0]
                if (
                    name in names
                    and isinstance(values, (ast.List, ast.Tuple))
                    and not any(isinstance(e, ast.Starred) for e in values.elts)
                ):
                    found.append((node, list(values.elts)))
        exact = [one for one in found if frame.at_position(one[0])]
        chosen = exact or found
        if len(chosen) == 1:
            return frame, chosen[0][0], chosen[0][1]
    return None


def _tensorflow_call(call: ast.Call, context: ErrorContext) -> bool:
    """Whether ``call`` is ``tf.argmax``/``tf.math.argmax`` (its root a namespace name
    holding TensorFlow, read through modules only)."""
    node: ast.expr = call.func
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or not parts:
        return False
    root = context.namespace.get(node.id)
    return isinstance(root, ModuleType) and root.__name__.split(".")[0] == "tensorflow"


def argmax_origin(
    operand: ast.expr, frame: CellFrame, context: ErrorContext, wanted: str
) -> tuple[str, str] | None:
    """(the sentence naming the ``argmax`` that made ``operand`` int64, that statement
    with ``output_type``) or None."""
    try:
        return _argmax_origin(operand, frame, context, wanted)
    except Exception:
        return None


def _argmax_origin(
    operand: ast.expr, frame: CellFrame, context: ErrorContext, wanted: str
) -> tuple[str, str] | None:
    if wanted not in _OUTPUT_TYPES:
        return None
    root = dotted_root(operand)
    if root is None:
        return None
    tree = frame.tree()
    if tree is None:
        return None
    line = frame.position.line
    scope: ast.AST = innermost_function(tree, line) or tree
    assignment = last_assignment(scope, root.id, line)
    if assignment is None:
        return None
    call = assignment.value
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in _INDEX_FUNCTIONS
        and not any(k.arg == "output_type" or k.arg is None for k in call.keywords)
        and len(call.args) < 3
        and _tensorflow_call(call, context)
    ):
        return None
    written = frame.segment(call)
    statement = frame.segment(assignment)
    if not written or not statement or "\n" in statement or not written.endswith(")"):
        return None
    tf = frame.segment(call.func)
    tf = tf.rsplit(".", 1)[0] if tf else "tf"
    # ``tf.math.argmax`` -> the module alias ``tf`` for the dtype.
    tf = tf.split(".", 1)[0]
    fixed_call = f"{written[:-1]}, output_type={tf}.{wanted})"
    fixed = rewrite(frame, assignment, call, fixed_call)
    if not fixed or "\n" in fixed:
        return None
    files = context.cell_files
    number = files.get(frame.filename)
    latest = max(files.values()) if files else None
    cell = "this cell" if number is None or number == latest else f"cell In[{number}]"
    where = f"line {assignment.lineno} of {cell}"
    sentence = (
        f"{code(root.id)} was set by {code(statement)} ({where}): "
        f"{code(call.func.attr)} returns int64 unless it is given {code('output_type')}, "
        f"and the other side is {wanted}. Ask it for {wanted} where it is made, so "
        f"{code(root.id)} is {wanted} everywhere it is read"
    )
    return sentence, fixed
