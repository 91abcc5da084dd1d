"""Probabilities given where raw scores (logits) are expected, in a hand-written loop's code.

A model whose last layer applies a sigmoid or softmax outputs probabilities. Fed to
``tf.nn.sigmoid_cross_entropy_with_logits`` (or the softmax ones), which applies its own
sigmoid, the probability is squashed a second time: a sigmoid of [0, 1] stays in
[0.5, 0.73], the loss can never approach 0 and the gradients shrink; nothing raises.
Keras's own cross-entropies with ``from_logits=True`` recover the scores from a model's
output tensor (Keras 3 keeps them on it, and warns), but not once the output went through
``tf.squeeze``, a reshape or an index: then the same double squash happens, silently. And
a ``BinaryAccuracy(threshold=0.0)`` (a threshold for raw scores) given such probabilities
counts every prediction as 1.

Told in the cell that writes it, from its source: after a completed cell holding
``logits`` or ``threshold`` (substring tests otherwise), in each scope of the cell (top
level, each ``def``), the predictions given to such a loss or metric are followed back
through the scope's assignments (and one level into a helper function of the learner's,
from its source) to a call of a model in the namespace (``model(x)``, ``model.predict(x)``,
``model.predict_on_batch(x)``) whose last layer has a sigmoid or softmax activation
(``loss_agreement.model_ending``: Keras's stored layers, nothing run):

- ``tf.nn.sigmoid_cross_entropy_with_logits`` and ``softmax``/``sparse_softmax`` ones:
  told always; fix, the same loss on probabilities, ``keras.ops.binary_crossentropy(labels,
  probs)`` (element-wise, as the ``tf.nn`` op);
- a Keras cross-entropy object whose stored ``from_logits`` is True, or a ``keras.losses``
  cross-entropy function given ``from_logits=True``: told only when the output was
  squeezed, reshaped or indexed on the way; fix, the loss without ``from_logits=True``;
- ``<metric>.update_state(y, probs)`` of a Keras ``BinaryAccuracy`` whose stored threshold
  is 0 or below and a sigmoid model: fix, the metric made with ``threshold=0.5``.

Nothing is traced or run: only names, source and stored attributes are read.
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

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, is_library_class
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source, scope_nodes
from jupyterlab_tfcoach.monitor.training.loss_agreement import model_ending
from jupyterlab_tfcoach.monitor.variables.probability_losses import (
    _loss_object_class,
    _stored_from_logits,
)

SECTION = "from-logits"
MAX_CELL_CHARS = 50_000
MAX_NOTES = 2
MAX_HELPER_LINES = 200
_TF_LOGIT_LOSSES = {
    "sigmoid_cross_entropy_with_logits": "binary_crossentropy",
    "softmax_cross_entropy_with_logits": "categorical_crossentropy",
    "sparse_softmax_cross_entropy_with_logits": "sparse_categorical_crossentropy",
}
_KERAS_LOSS_FUNCTIONS = frozenset(
    {"binary_crossentropy", "categorical_crossentropy", "sparse_categorical_crossentropy"}
)
_RESHAPES = frozenset({"squeeze", "reshape", "flatten", "ravel"})
_PROBABILITY_ACTIVATIONS = ("sigmoid", "softmax")
_PREDICTIONS = frozenset({"predict", "predict_on_batch", "__call__"})


@dataclass(frozen=True)
class Origin:
    """A model's output a prediction comes from."""

    model: str  # the model's name, as called
    activation: str  # its last layer's activation
    reshaped: bool  # squeezed, reshaped or indexed on the way


class _Scope:
    """One scope's assignments and the model outputs its names hold."""

    def __init__(self, nodes: list[ast.AST], namespace: Mapping[str, Any]) -> None:
        self.namespace = namespace
        self.held: dict[str, Origin] = {}
        self._nodes = nodes

    def origin(self, node: ast.AST, reshaped: bool = False) -> Origin | None:
        if isinstance(node, ast.Name):
            found = self.held.get(node.id)
            if found is None:
                return None
            return Origin(found.model, found.activation, found.reshaped or reshaped)
        if isinstance(node, ast.Subscript):
            return self.origin(node.value, True)
        if not isinstance(node, ast.Call):
            return None
        name = call_name(node)
        if name in _RESHAPES and node.args:
            return self.origin(node.args[0], True)
        # The model called (``model(x)``) or asked for predictions (``model.predict(x)``,
        # ``model.predict_on_batch(x)``): both give its last layer's output.
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _PREDICTIONS:
            func = func.value
        if isinstance(func, ast.Name):
            model = self.namespace.get(func.id)
            if model is None or not _keras_model(model):
                return None
            ending = model_ending(model)
            if ending is not None and ending[0] in _PROBABILITY_ACTIVATIONS:
                return Origin(func.id, ending[0], reshaped)
        return None

    def learn(self, node: ast.AST) -> None:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            found = self.origin(node.value)
            if found is not None:
                self.held[node.targets[0].id] = found
            else:
                self.held.pop(node.targets[0].id, None)


def _keras_model(value: Any) -> bool:
    return any(
        getattr(cls, "__module__", "").startswith("keras") and cls.__name__ == "Model"
        for cls in type(value).__mro__
    )


def _argument(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    for item in call.keywords:
        if item.arg == keyword:
            return item.value
    return call.args[position] if len(call.args) > position else None


def _keras_from_logits_loss(call: ast.Call, namespace: Mapping[str, Any]) -> str | None:
    """The loss as written when ``call`` is a Keras cross-entropy told ``from_logits=True``."""
    if isinstance(call.func, ast.Name):
        value = namespace.get(call.func.id)
        if _loss_object_class(value) is not None and _stored_from_logits(value) is True:
            return call.func.id
    keyword = next((k.value for k in call.keywords if k.arg == "from_logits"), None)
    if (
        call_name(call) in _KERAS_LOSS_FUNCTIONS
        and isinstance(keyword, ast.Constant)
        and keyword.value is True
    ):
        return ast.unparse(call.func)
    return None


def _helper_tree(function: Any) -> ast.FunctionDef | None:
    """A plain function of the learner's, parsed from its cell's source."""
    if type(function) is not types.FunctionType:
        return None
    code = function.__code__
    try:
        lines = linecache.getlines(code.co_filename)
        block = inspect.getblock(lines[code.co_firstlineno - 1 :][:MAX_HELPER_LINES])
        tree = ast.parse(textwrap.dedent("".join(block)))
    except Exception:
        return None
    first = tree.body[0] if tree.body else None
    return first if isinstance(first, ast.FunctionDef) else None


def _keras_spelling(namespace: Mapping[str, Any]) -> str:
    return "keras" if type(namespace.get("keras")) is types.ModuleType else "tf.keras"


def _text_of(source: str, node: ast.AST) -> str:
    text = ast.get_source_segment(source, node)
    return " ".join((text if text is not None else ast.unparse(node)).split())


class _Finder:
    def __init__(self, source: str, namespace: Mapping[str, Any]) -> None:
        self.source = source
        self.namespace = namespace
        self.notes: list[Note] = []
        self.told: set[str] = set()

    def scope(self, scope: ast.AST) -> None:
        reading = _Scope(scope_nodes(scope), self.namespace)
        for node in reading._nodes:
            reading.learn(node)
            if isinstance(node, ast.Call):
                self.call(node, reading)

    def call(self, call: ast.Call, reading: _Scope) -> None:
        name = call_name(call) or ""
        if name in _TF_LOGIT_LOSSES:
            logits = _argument(call, 1, "logits")
            origin = reading.origin(logits) if logits is not None else None
            if origin is not None and logits is not None:
                self.tf_loss(call, name, logits, origin, None)
            return
        loss = _keras_from_logits_loss(call, self.namespace)
        if loss is not None and len(call.args) >= 2:
            origin = reading.origin(call.args[1])
            if origin is not None and origin.reshaped:
                self.keras_loss(call, loss, call.args[1], origin)
            return
        if name == "update_state" and len(call.args) >= 2:
            origin = reading.origin(call.args[1])
            if origin is not None and origin.activation == "sigmoid":
                self.metric(call, origin)
            return
        if isinstance(call.func, ast.Name) and call.args:
            self.helper(call, reading)

    def helper(self, call: ast.Call, reading: _Scope) -> None:
        """One level into a function of the learner's given a model's output."""
        passed = [(i, reading.origin(arg)) for i, arg in enumerate(call.args)]
        passed = [(i, origin) for i, origin in passed if origin is not None]
        if not passed:
            return
        tree = _helper_tree(self.namespace.get(call.func.id))  # type: ignore[union-attr]
        if tree is None:
            return
        parameters = [arg.arg for arg in tree.args.args]
        inner = _Scope([], self.namespace)
        for index, origin in passed:
            if index < len(parameters):
                inner.held[parameters[index]] = origin
        for node in scope_nodes(tree):
            if isinstance(node, ast.Call):
                name = call_name(node) or ""
                if name in _TF_LOGIT_LOSSES:
                    logits = _argument(node, 1, "logits")
                    origin = inner.origin(logits) if logits is not None else None
                    if origin is not None and logits is not None:
                        self.tf_loss(node, name, logits, origin, (call, tree.name))
                    continue
                loss = _keras_from_logits_loss(node, self.namespace)
                if loss is not None and len(node.args) >= 2:
                    origin = inner.origin(node.args[1])
                    if origin is not None and origin.reshaped:
                        self.keras_loss(node, loss, node.args[1], origin, (call, tree.name))

    def _where(self, node: ast.AST, via: tuple[ast.Call, str] | None) -> str:
        if via is None:
            return f"(line {node.lineno} of this cell)"
        outer, helper = via
        return f"(in `{helper}`, called at line {outer.lineno} of this cell)"

    def _add(self, key: str, text: str) -> None:
        if key in self.told or len(self.notes) >= MAX_NOTES:
            return
        self.told.add(key)
        self.notes.append(reports.note(text, SECTION))

    def tf_loss(
        self,
        call: ast.Call,
        name: str,
        logits: ast.expr,
        origin: Origin,
        via: tuple[ast.Call, str] | None,
    ) -> None:
        source = self.source if via is None else None
        shown = _text_of(source, logits) if source else ast.unparse(logits)
        labels = _argument(call, 0, "labels")
        labels_text = (
            (_text_of(source, labels) if source else ast.unparse(labels))
            if labels is not None
            else "labels"
        )
        written = f"tf.nn.{name}(...)"
        keras_name = _keras_spelling(self.namespace)
        fix = f"{keras_name}.ops.{_TF_LOGIT_LOSSES[name]}({labels_text}, {shown})"
        squashed = (
            "a sigmoid of [0, 1] stays in [0.5, 0.73]"
            if "sigmoid" in name
            else "a softmax of probabilities is nearly uniform"
        )
        text = (
            f"`{written}` {self._where(call, via)} takes raw scores (logits) and applies "
            f"its own {'sigmoid' if 'sigmoid' in name else 'softmax'}, but `{shown}` is the "
            f"output of `{origin.model}`, whose last layer already applies a "
            f"{origin.activation}: the probabilities are squashed a second time "
            f"({squashed}), "
            "so the loss cannot approach 0 and the gradients shrink; nothing raises. Give "
            f"the loss probabilities: `{fix}`; or remove the activation of `{origin.model}`'s "
            "last layer and keep this loss."
        )
        self._add(f"{origin.model}:{name}", text)

    def keras_loss(
        self,
        call: ast.Call,
        loss: str,
        prediction: ast.expr,
        origin: Origin,
        via: tuple[ast.Call, str] | None = None,
    ) -> None:
        shown = _text_of(self.source, prediction) if via is None else ast.unparse(prediction)
        if _loss_object_class(self.namespace.get(loss)) is not None:
            cls = _loss_object_class(self.namespace.get(loss))
            fix = f"{loss} = {_keras_spelling(self.namespace)}.losses.{cls}()"
            what = f"`{loss}`, made with `from_logits=True`,"
        else:
            fix = f"{loss}(...)` without `from_logits=True"
            what = f"`{loss}(..., from_logits=True)`"
        text = (
            f"{what} {self._where(call, via)} is given `{shown}`, the output of "
            f"`{origin.model}`, whose last layer already applies a {origin.activation}: "
            "probabilities, not raw scores. Keras recovers the scores from a model's own "
            "output tensor (with a warning), but not after a squeeze, reshape or index: "
            "here the probabilities are squashed a second time, the loss cannot approach 0 "
            f"and the gradients shrink; nothing raises. Tell the loss it gets probabilities: "
            f"`{fix}`."
        )
        self._add(f"{origin.model}:{loss}", text)

    def metric(self, call: ast.Call, origin: Origin) -> None:
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        if not isinstance(receiver, ast.Name):
            return
        metric = self.namespace.get(receiver.id)
        if type(metric).__name__ != "BinaryAccuracy" or not is_library_class(type(metric)):
            return
        arguments = (instance_dict(metric) or {}).get("_fn_kwargs")
        threshold = arguments.get("threshold") if isinstance(arguments, dict) else None
        if type(threshold) not in (int, float) or threshold > 0.0:
            return
        shown = _text_of(self.source, call.args[1])
        keras_name = _keras_spelling(self.namespace)
        fix = f"{receiver.id} = {keras_name}.metrics.BinaryAccuracy(threshold=0.5)"
        text = (
            f"`{receiver.id}`, a `BinaryAccuracy(threshold={threshold:g})` (a threshold for "
            f"raw scores), is updated at line {call.lineno} of this cell with `{shown}`, the "
            f"output of `{origin.model}`, whose last layer applies a sigmoid: probabilities, "
            f"never below 0, so every prediction counts as 1 and the accuracy is the share "
            f"of positive labels, whatever `{origin.model}` learns; nothing raises. Cut "
            f"probabilities at 0.5: `{fix}` (then `{receiver.id}.reset_state()`)."
        )
        self._add(f"{origin.model}:{receiver.id}", text)


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if (
        not source
        or len(source) > MAX_CELL_CHARS
        or ("logits" not in source and "update_state" not in source)
    ):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    finder = _Finder(source, namespace)
    finder.scope(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            finder.scope(node)
        if len(finder.notes) >= MAX_NOTES:
            break
    return finder.notes
