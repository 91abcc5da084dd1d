"""A per-example operation over axis 0, or a pooling over the features, in a layer's ``call``.

Keras calls ``call`` with a batch: axis 0 counts the batch's examples. An
``l2_normalize(e, axis=0)``, ``softmax(z, axis=0)`` or TensorFlow's ``argmax(z)`` (axis 0
by default) there works across the examples instead of within each one: no embedding
comes out with length 1, a softmax spreads one unit of probability over the batch, and
every example's output depends on the others in its batch and on the batch size.
Training and prediction run; nothing raises.

After a completed cell holding ``def call`` and one of the operations' names (substring
tests otherwise), each class of the cell whose bases end in ``Model`` or ``Layer``
(``keras.Model``, ``layers.Layer``), or whose class object in the namespace has a Keras
``Layer`` in its method resolution order, is read (``ast``, never run): in its ``call``
(not in nested functions), a call of ``l2_normalize``, ``normalize``, ``softmax``,
``log_softmax``, ``argmax`` or ``argmin`` whose axis is the constant 0 (or left out for
TensorFlow's ``argmax``/``argmin``, as ``compiled_axis.py`` reads it). The note names the
class, the call and the line; the fix is the call over the last axis.

The other wrong axis of a layer's ``call``: a layer named for pooling (``SetMaxPool``,
``GridPooling``; not a channel or feature pooling) whose ``call`` returns a max, mean or
sum of its input over the last axis, without ``keepdims``, while the cell applies it to an
input of rank 3 or more (a name holding one, or ``tf.random.normal((2, 64, 8))`` written in
the cell): it reduces each item's features and returns one number per point or position,
a width set by how many there are. The fix reduces the axes between the batch and the
features (1, or (1, 2) for a grid).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import describe, show_shape
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import whole_number
from jupyterlab_tfcoach.monitor.symptoms.compiled_axis import (
    PER_EXAMPLE,
    _axis,
    _fixed,
    over_examples,
)
from jupyterlab_tfcoach.monitor.symptoms.intent_words import identifier_words
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source
from jupyterlab_tfcoach.monitor.word_gates import word_gate

SECTION = "class-axis"
MAX_CELL_CHARS = 50_000
# ``compiled_axis.py``'s operations, and ``normalize`` (``tf.linalg.normalize``,
# ``keras.utils.normalize``), which a layer's call uses to make unit vectors.
_OPERATIONS = PER_EXAMPLE | {"normalize"}
_EFFECTS = {
    "l2_normalize": "each feature is scaled to length 1 over the batch, so no example's "
    "vector has length 1",
    "normalize": "each feature is scaled to length 1 over the batch, so no example's "
    "vector has length 1",
    "softmax": "one unit of probability is spread over the batch's examples, so no "
    "example's outputs sum to 1",
    "log_softmax": "one unit of probability is spread over the batch's examples, so no "
    "example's outputs sum to 1",
    "argmax": "it picks, for each feature, the example that scores highest, not each "
    "example's highest feature",
    "argmin": "it picks, for each feature, the example that scores lowest, not each "
    "example's lowest feature",
}


def _base_names(node: ast.ClassDef) -> list[str]:
    names = []
    for base in node.bases:
        if isinstance(base, ast.Attribute):
            names.append(base.attr)
        elif isinstance(base, ast.Name):
            names.append(base.id)
    return names


def _keras_layer(node: ast.ClassDef, namespace: Mapping[str, Any]) -> bool:
    if any(name.endswith(("Model", "Layer")) for name in _base_names(node)):
        return True
    value = namespace.get(node.name)
    if not isinstance(value, type):
        return False
    try:
        bases = value.__mro__
    except Exception:
        return False
    return any(
        base.__name__ == "Layer" and base.__module__.startswith(("keras", "tf_keras"))
        for base in bases
    )


def _calls_in(function: ast.FunctionDef) -> list[ast.Call]:
    found: list[ast.Call] = []
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Call) and over_examples(node, _OPERATIONS):
            found.append(node)
    return sorted(found, key=lambda call: (call.lineno, call.col_offset))


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for an operation over the batch axis in a layer's ``call``, if any; else
    for a pooling layer that reduces its input's features axis."""
    if len(source) > MAX_CELL_CHARS or "def call" not in source:
        return []
    if not any(name in source for name in _OPERATIONS):
        return pooled_feature_notes(source, namespace) if _POOL_WORD.search(source) else []
    tree = parsed_source(source)
    if tree is None:
        return []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef) or not _keras_layer(node, namespace):
            continue
        for item in node.body:
            if not (isinstance(item, ast.FunctionDef) and item.name == "call"):
                continue
            for call in _calls_in(item):
                note = _note(source, node.name, call)
                if note is not None:
                    return [note]
    return pooled_feature_notes(source, namespace) if _POOL_WORD.search(source) else []


def _note(source: str, owner: str, call: ast.Call) -> Note | None:
    text = ast.get_source_segment(source, call)
    if not text or "\n" in text:
        return None
    name = call_name(call) or "l2_normalize"
    axis = "over axis 0" if _axis(call) is not None else "over axis 0 (TensorFlow's default)"
    message = (
        f"`{text}` (line {call.lineno} of this cell, in `{owner}.call`) works {axis}, and "
        "Keras calls `call` with a batch, whose axis 0 counts the examples: "
        f"{_EFFECTS[name]}, and each example's output depends on the others in its batch "
        "and on the batch size. It trains and predicts; nothing raises. Within each "
        f"example is the last axis: `{_fixed(call)}`."
    )
    return reports.note(message, SECTION)


# ---------------------------------------------------------------- pooling over the features
# A layer named for pooling (``MaskedMaxPool``, ``SetPooling``) summarises a set or a grid:
# over the points (axis 1 of (batch, points, features)) or the positions (axes 1 and 2 of
# (batch, height, width, channels)), keeping the features. Reduced over the last axis
# instead, it returns one number per point or position: a width set by how many points
# there are, in their order, padding included. Nothing raises when a Dense follows.
_POOL_WORD = word_gate(r"(?i)pool")
_POOL_REDUCTIONS = frozenset({"reduce_max", "reduce_mean", "reduce_sum", "max", "mean", "sum"})
_REDUCING_MODULES = frozenset({"tf", "math", "ops", "K", "backend"})
# Names of layers that pool over the channels on purpose (CBAM's channel pooling).
_CHANNEL_WORDS = frozenset({"channel", "channels", "feature", "features", "depth"})
_RANDOM_MAKERS = frozenset({"normal", "uniform", "zeros", "ones", "truncated_normal"})


def pooled_feature_notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    tree = parsed_source(source)
    if tree is None:
        return []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or not _keras_layer(node, namespace):
            continue
        words = {word.lower() for word in identifier_words(node.name)}
        if not words & {"pool", "pooling"} or words & _CHANNEL_WORDS:
            continue
        call = next(
            (i for i in node.body if isinstance(i, ast.FunctionDef) and i.name == "call"), None
        )
        if call is None or len(call.args.args) < 2:
            continue
        reduction = _features_reduction(call)
        if reduction is None:
            continue
        shape = _applied_shape(tree, node.name, namespace)
        if shape is None or len(shape) < 3:
            continue
        note = _pooling_note(source, node.name, reduction, shape)
        if note is not None:
            return [note]
    return []


def _features_reduction(call: ast.FunctionDef) -> ast.Call | None:
    """The ``return tf.reduce_max(x, axis=-1)`` of ``call``, ``x`` its input (the first
    parameter, or a name the method assigned from it), no ``keepdims``."""
    first = call.args.args[1].arg
    from_input = {first}
    for statement in call.body:
        if isinstance(statement, ast.Assign) and any(
            isinstance(n, ast.Name) and n.id in from_input for n in ast.walk(statement.value)
        ):
            from_input |= {t.id for t in statement.targets if isinstance(t, ast.Name)}
    returned = [s.value for s in call.body if isinstance(s, ast.Return)]
    if len(returned) != 1 or not isinstance(returned[0], ast.Call):
        return None
    reduction = returned[0]
    func = reduction.func
    if not isinstance(func, ast.Attribute) or call_name(reduction) not in _POOL_REDUCTIONS:
        return None
    owner = func.value
    owner_name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", None)
    if owner_name not in _REDUCING_MODULES or not reduction.args:
        return None
    if any(k.arg == "keepdims" for k in reduction.keywords):
        return None
    reduced = reduction.args[0]
    if not (isinstance(reduced, ast.Name) and reduced.id in from_input):
        return None
    axis = _axis(reduction)
    if not (isinstance(axis, ast.UnaryOp) and isinstance(axis.op, ast.USub)):
        return None
    if not (isinstance(axis.operand, ast.Constant) and axis.operand.value == 1):
        return None
    return reduction


def _applied_shape(
    tree: ast.Module, class_name: str, namespace: Mapping[str, Any]
) -> tuple[int, ...] | None:
    """The shape of the first input the cell gives the layer: ``Pool()(x, ...)`` or
    ``pool = Pool()`` then ``pool(x)``, ``x`` a name holding an array or tensor, or a
    ``tf.random.normal((2, 64, 8))``-like call whose shape the cell writes."""
    instances = {
        target.id
        for statement in tree.body
        if isinstance(statement, ast.Assign)
        and isinstance(statement.value, ast.Call)
        and isinstance(statement.value.func, ast.Name)
        and statement.value.func.id == class_name
        for target in statement.targets
        if isinstance(target, ast.Name)
    }
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        made_here = (
            isinstance(func, ast.Call)
            and isinstance(func.func, ast.Name)
            and func.func.id == class_name
        )
        if not made_here and not (isinstance(func, ast.Name) and func.id in instances):
            continue
        shape = _shape_of(node.args[0], namespace)
        if shape is not None:
            return shape
    return None


def _shape_of(node: ast.expr, namespace: Mapping[str, Any]) -> tuple[int, ...] | None:
    if isinstance(node, ast.Name):
        held = namespace.get(node.id)
        operand = describe(node.id, held) if held is not None else None
        shape = operand.shape if operand is not None else None
        if shape is None or any(d is None for d in shape):
            return None
        return tuple(int(d) for d in shape if d is not None)
    if isinstance(node, ast.Call) and call_name(node) in _RANDOM_MAKERS and node.args:
        written = node.args[0]
        if isinstance(written, (ast.Tuple, ast.List)):
            dims = [whole_number(d, namespace) for d in written.elts]
            if dims and all(d is not None for d in dims):
                return tuple(d for d in dims if d is not None)
    return None


def _pooling_note(
    source: str, owner: str, reduction: ast.Call, shape: tuple[int, ...]
) -> Note | None:
    text = ast.get_source_segment(source, reduction)
    reduced = ast.get_source_segment(source, reduction.args[0])
    if not text or not reduced or "\n" in text:
        return None
    kept = shape[:-1]
    pooled_axes = list(range(1, len(shape) - 1))
    axis_text = str(pooled_axes[0]) if len(pooled_axes) == 1 else str(tuple(pooled_axes))
    fixed = ast.Call(
        func=reduction.func,
        args=reduction.args[:1],
        keywords=[
            *(k for k in reduction.keywords if k.arg != "axis"),
            ast.keyword(arg="axis", value=ast.parse(axis_text, mode="eval").body),
        ],
    )
    pooled = (shape[0], shape[-1])
    message = (
        f"`{text}` (line {reduction.lineno} of this cell, in `{owner}.call`) reduces the "
        f"last axis of `{reduced}`, the features: on the {show_shape(shape)} input the cell "
        f"gives `{owner}`, it returns {show_shape(kept)}, one number per "
        f"{'point' if len(shape) == 3 else 'position'} rather than one feature vector per "
        "example, so what follows reads a width set by how many there are, in their "
        "order (padding included, where sets are padded). A pooling layer summarises the "
        "set and keeps the "
        f"features: reduce axis {axis_text}, `return {ast.unparse(fixed)}` "
        f"({show_shape(pooled)})."
    )
    return reports.note(message, SECTION)
