"""A probability loss given raw scores: one cause of "nothing trained" in a custom loop.

Keras's cross-entropies (``BinaryCrossentropy``, ``CategoricalCrossentropy``,
``SparseCategoricalCrossentropy`` and their focal kinds, as objects or as the
``keras.losses`` functions) expect probabilities unless ``from_logits=True``. Given raw
scores, they clip them into ``[1e-7, 1 - 1e-7]``: a score the clip cuts gets a
gradient of exactly 0, so a model whose scores all start outside that range (zero
weights give scores of exactly 0) never moves.

Read from the training scope's source (``ast``) and the namespace, never by running
user code:

- the loss: a call ``<name>(y, pred)`` whose name is bound to one of those Keras loss
  objects with ``from_logits`` False (read from what Keras stores, ``_fn_kwargs``), a
  call of such a class written inline, or a call of one of the functions
  (``keras.losses.binary_crossentropy(y, pred)``) without ``from_logits=True``;
- the prediction is not a probability: written as a matmul, ``@`` or a bias added to
  one (following the scope's assignments to the name, and one level of the user's own
  helper function's ``return``) with no sigmoid or softmax on the way; or its value
  after the cell (a tensor bound to that name in the namespace) falls outside
  ``[0, 1]``, or its rows do not sum to 1 for a categorical loss. A sigmoid or softmax
  written on the way means probabilities: nothing is said.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor.stored_state import instance_dict, library_attribute
from jupyterlab_tfcoach.monitor.syntax import call_name as _callee
from jupyterlab_tfcoach.monitor.variables.training_causes import Scope

SECTION = "from-logits"
_LOSS_CLASSES = {
    "BinaryCrossentropy": "tf.sigmoid",
    "BinaryFocalCrossentropy": "tf.sigmoid",
    "CategoricalCrossentropy": "tf.nn.softmax",
    "CategoricalFocalCrossentropy": "tf.nn.softmax",
    "SparseCategoricalCrossentropy": "tf.nn.softmax",
}
_LOSS_FUNCTIONS = {
    "binary_crossentropy": "tf.sigmoid",
    "binary_focal_crossentropy": "tf.sigmoid",
    "categorical_crossentropy": "tf.nn.softmax",
    "categorical_focal_crossentropy": "tf.nn.softmax",
    "sparse_categorical_crossentropy": "tf.nn.softmax",
}
_PROBABILITY_CALLS = frozenset({"sigmoid", "softmax"})
_SCORE_CALLS = frozenset({"matmul", "tensordot", "einsum"})
_MAX_DEPTH = 4
_MAX_ELEMENTS = 1_000_000
_ROW_SUM_TOLERANCE = 1e-3


@dataclass
class ScoresGivenToProbabilityLoss:
    loss: str  # "bce", or "keras.losses.binary_crossentropy"
    loss_object: bool  # a loss object (``bce``) rather than a function
    prediction: str  # "logits", as written in the call
    evidence: str  # why it is not a probability, one clause
    activation: str  # "tf.sigmoid", "tf.nn.softmax"
    fix: str  # code to run instead


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _from_logits_keyword(call: ast.Call) -> ast.AST | None:
    return next((k.value for k in call.keywords if k.arg == "from_logits"), None)


def _is_false(node: ast.AST | None) -> bool:
    return node is None or (isinstance(node, ast.Constant) and node.value is False)


def _with_from_logits(call: ast.Call) -> str:
    """The call as written, with ``from_logits=True``."""
    fixed = ast.Call(
        func=call.func,
        args=call.args,
        keywords=[
            *(k for k in call.keywords if k.arg != "from_logits"),
            ast.keyword(arg="from_logits", value=ast.Constant(True)),
        ],
    )
    return ast.unparse(fixed)


def _stored_from_logits(loss: Any) -> bool | None:
    """``from_logits`` of a Keras loss object, from the arguments Keras stores."""
    attributes = instance_dict(loss)
    arguments = attributes.get("_fn_kwargs") if attributes is not None else None
    if type(arguments) is not dict:
        return None
    value = arguments.get("from_logits")
    return value if type(value) is bool else None


def _loss_object_class(value: Any) -> str | None:
    cls = type(value)
    module = getattr(cls, "__module__", "")
    if type(module) is str and module.startswith("keras") and cls.__name__ in _LOSS_CLASSES:
        return cls.__name__
    return None


def _is_module(value: Any) -> bool:
    return type(value) is types.ModuleType


def _assignments(tree: ast.AST, before_line: int) -> dict[str, ast.AST]:
    """``name -> value`` of the last plain assignment to each name before a line."""
    found: dict[str, tuple[int, ast.AST]] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.lineno < before_line
        ):
            name = node.targets[0].id
            if name not in found or node.lineno > found[name][0]:
                found[name] = (node.lineno, node.value)
    return {name: value for name, (_, value) in found.items()}


def _helper_returns(function: Any) -> tuple[list[ast.AST], dict[str, ast.AST]] | None:
    """The ``return`` expressions of a plain function of the user's, and its assignments."""
    if type(function) is not types.FunctionType:
        return None
    code = function.__code__
    try:
        lines = linecache.getlines(code.co_filename)
        block = inspect.getblock(lines[code.co_firstlineno - 1 :])
        tree = ast.parse(textwrap.dedent("".join(block)))
    except Exception:
        return None
    returns = [n.value for n in ast.walk(tree) if isinstance(n, ast.Return) and n.value]
    return returns, _assignments(tree, 10**9)


def _written_kind(
    node: ast.AST, assignments: dict[str, ast.AST], namespace: Mapping[str, Any], depth: int = 0
) -> tuple[str | None, ast.AST]:
    """("probability" | "scores" | None, the expression that decided) for a prediction."""
    if depth > _MAX_DEPTH:
        return None, node
    if isinstance(node, ast.Name) and node.id in assignments:
        return _written_kind(assignments.pop(node.id), assignments, namespace, depth + 1)
    if any(
        isinstance(inner, ast.Call) and _callee(inner) in _PROBABILITY_CALLS
        for inner in ast.walk(node)
    ):
        return "probability", node
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.MatMult):
            return "scores", node
        if isinstance(node.op, ast.Add | ast.Sub):
            for side in (node.left, node.right):
                kind, _ = _written_kind(side, dict(assignments), namespace, depth + 1)
                if kind is not None:
                    return kind, node
        return None, node
    if isinstance(node, ast.Call):
        if _callee(node) in _SCORE_CALLS:
            return "scores", node
        if isinstance(node.func, ast.Name):
            helper = _helper_returns(namespace.get(node.func.id))
            if helper is not None and len(helper[0]) == 1:
                kind, _ = _written_kind(helper[0][0], helper[1], namespace, depth + 1)
                return kind, node
    return None, node


def _value_evidence(value: Any, categorical: bool) -> str | None:
    """Why a tensor's values are not probabilities, or None when they could be."""
    shape = library_attribute(value, "shape")
    read = library_attribute(value, "numpy")
    dtype = library_attribute(value, "dtype")
    dtype_name = dtype if type(dtype) is str else library_attribute(dtype, "name", "")
    if shape is None or read is None or type(dtype_name) is not str:
        return None
    if not dtype_name.startswith(("float", "bfloat")):
        return None
    try:
        size = 1
        for dim in tuple(shape):
            size *= int(dim)
        if size == 0 or size > _MAX_ELEMENTS:
            return None
        array = read()
        low, high = float(array.min()), float(array.max())
        if low < 0.0 or high > 1.0:
            return f"its values run from {low:.3g} to {high:.3g}, outside [0, 1]"
        if categorical and array.ndim >= 2 and array.shape[-1] > 1:
            sums = array.sum(axis=-1)
            worst = float(abs(sums - 1.0).max())
            if worst > _ROW_SUM_TOLERANCE:
                return "its rows do not sum to 1"
    except Exception:
        return None
    return None


def _construction(source: str, name: str) -> ast.Call | None:
    """The last ``<name> = <call>`` in a source (the loss object's construction)."""
    try:
        tree = ast.parse(source)
    except Exception:
        return None
    found: ast.Call | None = None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
            and isinstance(node.value, ast.Call)
        ):
            found = node.value
    return found


def _segment(source: str, node: ast.AST) -> str:
    text = ast.get_source_segment(source, node)
    return " ".join((text if text is not None else ast.unparse(node)).split())


def scores_given_to_probability_loss(
    scope: Scope, namespace: Mapping[str, Any], cell_source: str
) -> ScoresGivenToProbabilityLoss | None:
    """The first probability loss in the scope given a value that is not a probability."""
    try:
        return _first_scores_given(scope, namespace, cell_source)
    except Exception:
        return None  # no cause named rather than a report that fails


def _first_scores_given(
    scope: Scope, namespace: Mapping[str, Any], cell_source: str
) -> ScoresGivenToProbabilityLoss | None:
    for call in ast.walk(scope.tree):
        if not isinstance(call, ast.Call) or len(call.args) < 2:
            continue
        found = _probability_loss(call, namespace, cell_source)
        if found is None:
            continue
        loss, loss_object, activation, fix = found
        prediction = call.args[1]
        assignments = _assignments(scope.tree, call.lineno + 1)
        kind, decided = _written_kind(prediction, dict(assignments), namespace)
        if kind == "probability":
            continue
        evidence = None
        if kind == "scores":
            written = _segment(scope.source, decided)
            shown = _segment(scope.source, prediction)
            evidence = (
                f"it is computed as `{written}`, with no sigmoid or softmax"
                if written != shown
                else "it is a raw score, with no sigmoid or softmax"
            )
        elif scope.function is None and isinstance(prediction, ast.Name):
            evidence = _value_evidence(namespace.get(prediction.id), activation == "tf.nn.softmax")
        if evidence is None:
            continue
        return ScoresGivenToProbabilityLoss(
            loss=loss,
            loss_object=loss_object,
            prediction=_segment(scope.source, prediction),
            evidence=evidence,
            activation=activation,
            fix=fix,
        )
    return None


def _probability_loss(
    call: ast.Call, namespace: Mapping[str, Any], cell_source: str
) -> tuple[str, bool, str, str] | None:
    """(the loss as written, whether an object, its activation, the fix) when ``call``
    calls a probability loss that expects probabilities; else None."""
    func = call.func
    if isinstance(func, ast.Name):
        class_name = _loss_object_class(namespace.get(func.id))
        if class_name is None or _stored_from_logits(namespace.get(func.id)) is not False:
            return None
        written = _construction(cell_source, func.id)
        if written is not None and _callee(written) == class_name:
            fix = f"{func.id} = {_with_from_logits(written)}"
        else:
            prefix = "keras" if _is_module(namespace.get("keras")) else "tf.keras"
            fix = f"{func.id} = {prefix}.losses.{class_name}(from_logits=True)"
        return func.id, True, _LOSS_CLASSES[class_name], fix
    if isinstance(func, ast.Call):
        # ``keras.losses.BinaryCrossentropy()(y, pred)``: the object made inline.
        class_name = _callee(func)
        root = _root_name(func.func)
        if (
            class_name in _LOSS_CLASSES
            and root is not None
            and _is_module(namespace.get(root))
            and _is_false(_from_logits_keyword(func))
            and (not func.args or _is_false(func.args[0]))
        ):
            fix = f"{_with_from_logits(func)}({', '.join(ast.unparse(a) for a in call.args)})"
            return ast.unparse(func), True, _LOSS_CLASSES[class_name], fix
        return None
    if isinstance(func, ast.Attribute) and func.attr in _LOSS_FUNCTIONS:
        root = _root_name(func)
        if root is None or not _is_module(namespace.get(root)):
            return None
        if not _is_false(_from_logits_keyword(call)) or (
            len(call.args) > 2 and not _is_false(call.args[2])
        ):
            return None
        return ast.unparse(func), False, _LOSS_FUNCTIONS[func.attr], _with_from_logits(call)
    return None
