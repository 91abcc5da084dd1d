"""One flat ``metrics`` list, one metric per output, read in another order than Keras
pairs it with the outputs.

Keras 3 accepts ``metrics=[m1, m2]`` for a model with two outputs and pairs the list with
``model.output_names``; for outputs given as a dict (``keras.Model(x, {"b": ..., "a":
...})``) that order is the names sorted, not the order the learner wrote them in. A
classification metric then lands on a regression output (``"accuracy"`` on a price:
Keras picks a binary accuracy there, a meaningless figure) and a regression metric on a
classification one; nothing warns when the shapes agree.

After a completed cell whose text holds ``metrics`` and ``compile`` (substring tests
otherwise): each ``<model>.compile(..., metrics=[...])`` of the cell's code outside
``def``/``class``, ``<model>`` a name holding a Keras model after the cell whose outputs
were given as a dict, the list flat (no inner list or dict) and as long as
``output_names``; the ``loss`` of the same call a dict literal naming every output, each
loss and each metric of a known kind (a cross-entropy, hinge or focal loss and an
accuracy, AUC, precision or recall metric are for classes; a squared, absolute, Huber,
log-cosh or percentage error for numbers). Told when, paired as Keras pairs them, some
metric is of the other kind than its output's loss, while read in the order the loss
dict lists the outputs each metric fits its output. The fix keys the metrics by output
name, in that order.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import stored
from jupyterlab_tfcoach.monitor.symptoms.loss_weight_order import (
    MAX_OUTPUTS,
    _is_keras_model,
    _keyword,
    _names,
)
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    outside_scopes,
    parsed_source,
    source_segment,
)

SECTION = "functional-api"
CLASSES, NUMBERS = "classification", "regression"
_METRIC_KINDS = {
    "accuracy": CLASSES,
    "acc": CLASSES,
    "binary_accuracy": CLASSES,
    "categorical_accuracy": CLASSES,
    "sparse_categorical_accuracy": CLASSES,
    "top_k_categorical_accuracy": CLASSES,
    "sparse_top_k_categorical_accuracy": CLASSES,
    "auc": CLASSES,
    "precision": CLASSES,
    "recall": CLASSES,
    "mae": NUMBERS,
    "mse": NUMBERS,
    "rmse": NUMBERS,
    "mape": NUMBERS,
    "msle": NUMBERS,
    "mean_absolute_error": NUMBERS,
    "mean_squared_error": NUMBERS,
    "root_mean_squared_error": NUMBERS,
    "mean_absolute_percentage_error": NUMBERS,
    "mean_squared_logarithmic_error": NUMBERS,
    "r2score": NUMBERS,
}
_LOSS_WORDS = {
    CLASSES: ("crossentropy", "hinge", "focal"),
    NUMBERS: ("squared", "absolute", "huber", "log_cosh", "logcosh", "percentage", "mse", "mae"),
}


def _snake(name: str) -> str:
    out = []
    for index, char in enumerate(name):
        if char.isupper() and index and not name[index - 1].isupper():
            out.append("_")
        out.append(char.lower())
    return "".join(out)


def _metric_kind(node: ast.expr) -> str | None:
    """A metric written as a string or a ``keras.metrics.X(...)`` construction."""
    if isinstance(node, ast.Constant) and type(node.value) is str:
        return _METRIC_KINDS.get(node.value.lower())
    if isinstance(node, ast.Call):
        name = call_name(node)
        if name is None or not name[:1].isupper():
            return None
        snake = _snake(name)
        if snake in _METRIC_KINDS:
            return _METRIC_KINDS[snake]
        return _METRIC_KINDS.get(snake.replace("_", ""))
    return None


def _loss_kind(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and type(node.value) is str:
        text = node.value.lower()
    elif isinstance(node, ast.Call) and (name := call_name(node)) is not None:
        text = _snake(name)
    else:
        return None
    kinds = [kind for kind, words in _LOSS_WORDS.items() if any(w in text for w in words)]
    return kinds[0] if len(kinds) == 1 else None


def _loss_dict(call: ast.Call) -> ast.Dict | None:
    losses = _keyword(call, "loss")
    if losses is None and len(call.args) > 1:
        losses = call.args[1]
    return losses if isinstance(losses, ast.Dict) else None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if "metrics" not in source or "compile" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for node in outside_scopes(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "compile"
            and isinstance(node.func.value, ast.Name)
        ):
            continue
        note = _compile_note(node, node.func.value.id, source, namespace)
        if note is not None:
            return [note]
    return []


def _compile_note(
    call: ast.Call, model_name: str, source: str, namespace: Mapping[str, Any]
) -> Note | None:
    metrics = _keyword(call, "metrics")
    if not isinstance(metrics, ast.List | ast.Tuple) or not 2 <= len(metrics.elts) <= MAX_OUTPUTS:
        return None
    metric_kinds = [_metric_kind(item) for item in metrics.elts]
    if any(kind is None for kind in metric_kinds):
        return None
    losses = _loss_dict(call)
    if losses is None:
        return None
    model = namespace.get(model_name)
    if not _is_keras_model(model) or type(stored(model, "_outputs_struct")) is not dict:
        return None
    applied = _names(stored(model, "output_names"))
    if applied is None or len(applied) != len(metric_kinds):
        return None
    written = [k.value for k in losses.keys if isinstance(k, ast.Constant)]
    if len(written) != len(losses.keys) or sorted(written) != sorted(applied):  # type: ignore[type-var]
        return None
    loss_of = {
        key: (value, _loss_kind(value)) for key, value in zip(written, losses.values, strict=True)
    }
    if any(kind is None for _, kind in loss_of.values()):
        return None

    def misses(order: list[str]) -> list[int]:
        return [i for i, name in enumerate(order) if loss_of[name][1] != metric_kinds[i]]

    wrong = misses(applied)
    if not wrong or misses(written):  # type: ignore[arg-type]
        return None
    shown = [source_segment(source, item) or "" for item in metrics.elts]
    if not all(shown):
        return None
    landed = ", ".join(
        f"`{shown[i]}` on {applied[i]}, a {loss_of[applied[i]][1]} output "
        f"(loss `{source_segment(source, loss_of[applied[i]][0]) or '?'}`)"
        for i in wrong
    )
    keyed = (
        "{"
        + ", ".join(f'"{name}": [{metric}]' for name, metric in zip(written, shown, strict=True))
        + "}"
    )
    given = source_segment(source, metrics) or ""
    text = (
        f"`metrics={given}` (line {metrics.lineno} of this cell) is one flat list for "
        f"`{model_name}`'s {len(applied)} outputs, and Keras pairs it with "
        f"`{model_name}.output_names` order, {', '.join(applied)} (the names of the dict "
        f"the outputs were given as, sorted): it measures {landed}. Read in the order the "
        f"`loss` dict lists the outputs ({', '.join(written)}), each metric fits its "  # type: ignore[arg-type]
        "output. When the shapes agree nothing warns, and the figure logged under that "
        "metric's name measures nothing useful (when they do not, fit raises a shape error "
        "inside the metric). A dict keyed by output name says which metric is "
        f"whose. Fix: `metrics={keyed}`."
    )
    return reports.note(text, SECTION)
