"""Integer class ids mixed by a float weight: ``w * labels + (1 - w) * other``.

Mixup, CutMix and hand-made label smoothing blend labels with a float weight. Written for
integer class ids (the labels of a sparse loss), the blend fails on the dtypes (a float
weight times an int tensor), and casting the ids to float would make it run and be
wrong: the blend of class 0 and class 3 is 1.5, a class number that means nothing, which
a sparse loss reads as class 1. Class ids are mixed as one-hot rows
(``tf.one_hot(labels, classes)``), which a categorical loss then reads as the share of
each class.

Told for a dtype error (``Mul`` of a float and an integer) raised on a line that blends
two terms with complementary weights (``w * a + (1 - w) * b``, either order, either
side), one term an integer name (or a ``tf.gather``/``tf.reverse``/slice of it) whose
values read as class ids: whole numbers from 0 with at least three values, most of
0..max present. The values are the name's own (an eager tensor or a NumPy array) or,
inside a function ``Dataset.map`` traces, the component of the ``from_tensor_slices``
source the function's parameter receives (the dataset the cell's ``.map(...)`` call
was given, reached through links that keep elements whole: batch, shuffle, cache...).
0/1 labels are left to the cast: mixed 0/1 labels are soft binary targets, which a
sigmoid's binary cross-entropy reads as they are.

Nothing runs: names resolved as ``ErrorContext`` resolves them, values copied from eager
tensors and arrays the dataset stores (at most ``MAX_LABELS``).
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    code,
    innermost_function,
    kind_of,
)
from jupyterlab_tfcoach.monitor.errors.held_values import INTEGERS, held_array
from jupyterlab_tfcoach.monitor.stored_state import instance_dict

SECTION = "labels-and-loss"
MAX_LABELS = 1_000_000
MAX_CLASSES = 10_000
_ELEMENT_KEEPING = frozenset({"batch", "shuffle", "cache", "prefetch", "repeat", "take", "skip"})
# Calls whose result holds the same values as their first argument, reordered.
_REORDERING = frozenset({"gather", "reverse", "roll", "shuffle"})


def _is_one(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value == 1


def _complement(node: ast.AST, weight: ast.AST) -> bool:
    """Whether ``node`` is ``1 - weight``."""
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Sub)
        and _is_one(node.left)
        and ast.dump(node.right) == ast.dump(weight)
    )


def blended_terms(node: ast.AST) -> tuple[ast.expr, ast.expr] | None:
    """The two terms ``a`` and ``b`` of ``w * a + (1 - w) * b`` (factors in either order,
    the complement on either side); None for another expression."""
    if not (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Add)
        and isinstance(node.left, ast.BinOp)
        and isinstance(node.left.op, ast.Mult)
        and isinstance(node.right, ast.BinOp)
        and isinstance(node.right.op, ast.Mult)
    ):
        return None
    left, right = node.left, node.right
    for weight_a, term_a in ((left.left, left.right), (left.right, left.left)):
        for weight_b, term_b in ((right.left, right.right), (right.right, right.left)):
            if _complement(weight_b, weight_a) or _complement(weight_a, weight_b):
                return term_a, term_b
    return None


def _root_name(node: ast.expr) -> ast.Name | None:
    """The name a term reads its values from: itself, or the first argument of a
    reordering call (``tf.gather(labels, idx)``), or the value of a subscript."""
    if isinstance(node, ast.Name):
        return node
    if isinstance(node, ast.Subscript):
        return _root_name(node.value)
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if called in _REORDERING:
            return _root_name(node.args[0])
    return None


def _integer_dtype(value: Any) -> bool:
    try:
        kind = kind_of(value)
        if kind not in ("tensor", "symbolic", "array"):
            return False
        name = str(value.dtype) if kind == "array" else value.dtype.name
    except Exception:
        return False
    return type(name) is str and name.startswith(INTEGERS)


def _class_ids(values: Any) -> int | None:
    """The number of classes when ``values`` read as class ids (whole numbers from 0, at
    least three distinct, most of 0..max present); else None."""
    numpy = sys.modules.get("numpy")
    if numpy is None or values is None or values.size < 3:
        return None
    low, high = int(values.min()), int(values.max())
    if low < 0 or high >= MAX_CLASSES:
        return None
    distinct = int(numpy.unique(values).shape[0])
    if distinct < 3 or 2 * distinct < high + 1:
        return None
    return high + 1


def _parameter_index(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> int | None:
    arguments = function.args
    if arguments.vararg is not None or arguments.kwonlyargs:
        return None
    parameters = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
    return parameters.index(name) if name in parameters else None


def _mapped_dataset(function_name: str, context: ErrorContext) -> Any | None:
    """The dataset whose ``.map(<function_name>)`` the running cell's statement called."""
    for frame in reversed(context.frames()):
        statement = frame.statement()
        if statement is None:
            continue
        for node in ast.walk(statement):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "map"
                and node.args
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id == function_name
            ):
                found, dataset = context.resolve(node.func.value, frame)
                if found:
                    return dataset
    return None


def _source_component(dataset: Any, index: int, count: int) -> Any | None:
    """Component ``index`` of the ``from_tensor_slices`` source of ``dataset`` when every
    link above it keeps elements whole and the elements have ``count`` components."""
    from jupyterlab_tfcoach.monitor.symptoms.dataset_order import chain_of, operation

    chain = chain_of(dataset)
    if not chain or any(operation(link) not in _ELEMENT_KEEPING for link in chain[:-1]):
        return None
    if type(chain[-1]).__name__ != "_TensorSliceDataset":
        return None
    tensors = (instance_dict(chain[-1]) or {}).get("_tensors")
    if type(tensors) not in (list, tuple) or len(tensors) != count:
        return None
    return tensors[index]


def _values(name: ast.Name, frame: CellFrame, context: ErrorContext) -> Any | None:
    """The values ``name`` holds (eager), or those its parameter slot receives from the
    dataset the cell maps the function over (traced)."""
    found, value = context.resolve(name, frame)
    if found:
        held = held_array(value, MAX_LABELS, INTEGERS)
        if held is not None:
            return held.reshape(-1)
    tree = frame.tree()
    function = innermost_function(tree, frame.position.line) if tree is not None else None
    if function is None:
        return None
    index = _parameter_index(function, name.id)
    if index is None:
        return None
    dataset = _mapped_dataset(function.name, context)
    if dataset is None:
        return None
    count = len(function.args.posonlyargs) + len(function.args.args)
    component = _source_component(dataset, index, count)
    held = held_array(component, MAX_LABELS, INTEGERS, ndim=1) if component is not None else None
    return held


def classes_name(classes: int, context: ErrorContext, frame: CellFrame) -> str:
    """A name of the namespace holding the number of classes that the cells use, else the
    number itself."""
    from jupyterlab_tfcoach.monitor.errors.cell_sources import error_cells

    try:
        sources = [frame.source(), *(cell.source for cell in error_cells(context))]
    except Exception:
        sources = [frame.source()]
    candidates = [
        name
        for name, value in context.namespace.items()
        if type(value) is int
        and value == classes
        and type(name) is str
        and name.isidentifier()
        and not name.startswith("_")
    ]
    for source in sources:
        used = [n for n in candidates if re.search(rf"\b{re.escape(n)}\b", source)]
        if used:
            # A name that says what it counts reads best in the fix.
            return next((n for n in used if "class" in n.lower()), used[0])
    return str(classes)


def explain_mixed_class_ids(
    op: str, dtypes: tuple[str, str], index: int, context: ErrorContext
) -> str | None:
    """The blend of integer class ids, its cause and fix; None when the failing line holds
    no such blend."""
    if op != "Mul":
        return None
    tf = context.module_alias("tensorflow", "tf")
    for frame in context.frames()[:1]:
        for part in frame.header():
            for node in ast.walk(part):
                terms = blended_terms(node)
                if terms is None:
                    continue
                for term in terms:
                    name = _root_name(term)
                    if name is None:
                        continue
                    found, value = context.resolve(name, frame)
                    if found and not _integer_dtype(value):
                        continue
                    classes = _class_ids(_values(name, frame, context))
                    if classes is None:
                        continue
                    return _text(node, terms, name.id, dtypes[index], classes, frame, context, tf)
    return None


def _text(
    blend: ast.AST,
    terms: tuple[ast.expr, ast.expr],
    name: str,
    dtype: str,
    classes: int,
    frame: CellFrame,
    context: ErrorContext,
    tf: str,
) -> str:
    blend_source = " ".join((frame.segment(blend) or "").split())
    shown = " and ".join(code(" ".join((frame.segment(t) or "").split())) for t in terms)
    depth = classes_name(classes, context, frame)
    one_hot = f"{name} = {tf}.one_hot({name}, {depth})"
    tree = frame.tree()
    function = innermost_function(tree, frame.position.line) if tree is not None else None
    parameter = function is not None and _parameter_index(function, name) is not None
    where = (
        f"as the first line of {code(function.name)}"
        if parameter and function is not None
        else "on a line before the mix"
    )
    return (
        f"{code(blend_source)} mixes {shown} with a float weight, but {code(name)} holds "
        f"{dtype} class ids (0 to {classes - 1}), and TensorFlow does not multiply a float "
        f"by an integer tensor. Casting them to float would run and be wrong: half of "
        f"class 0 and half of class {classes - 1} make {(classes - 1) / 2:g}, a class "
        f"number that means neither (a sparse loss reads it as class "
        f"{int((classes - 1) / 2)}). Mix "
        f"labels as one-hot rows, which then hold the share of each class, and train on "
        f"them with a categorical loss (`CategoricalCrossentropy`, not the sparse one, "
        f"which takes class ids). Fix: {where}, {code(one_hot)}."
    )
