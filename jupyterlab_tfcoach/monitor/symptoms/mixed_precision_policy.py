"""What a mixed-precision global policy still does after the cell: two silent slips.

- ``keras.backend.set_floatx("float32")`` meant to go back to full precision while
  Keras's global dtype policy is ``mixed_float16``: ``set_floatx`` only changes the
  default float type; a policy set with ``set_global_policy`` stays, so every layer
  created after it still computes in float16. Told after a completed cell whose last
  call among ``set_floatx`` and ``set_global_policy`` (top level, in order) is
  ``set_floatx`` with a literal ``"float32"``/``"float64"`` while the global policy is a
  mixed one; the models or layers the cell then binds that compute in 16 bits are named.
  Fix: the line written as ``keras.mixed_precision.set_global_policy("float32")``.
- A model whose output layer turns scores into probabilities (a ``softmax`` or
  ``sigmoid`` activation, a ``Softmax`` layer) and computes in float16 or bfloat16: the
  probabilities keep about 3 significant digits, the small ones round to 0 and the loss's
  log of them to -inf. Told for a model the cell binds at its top level whose every
  output is a 16-bit tensor made by such a layer. Fix: that layer's creation, found in
  the cell by its class and activation, given ``dtype="float32"``.

Read from the cell's syntax, Keras's global policy and the models' stored outputs
(``sys.modules`` only, never an import). A cell that never names ``set_floatx`` nor holds
a 16-bit model costs a substring test and a dtype read per bound model.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import describe
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import keras_layers, library_attribute
from jupyterlab_tfcoach.monitor.syntax import call_name, dotted_name, parsed_source

SECTION = "mixed-precision"
MAX_CELL_CHARS = 30_000
MAX_LAYERS = 200
_SIXTEEN = frozenset({"float16", "bfloat16"})
_FULL = frozenset({"float32", "float64"})
_PROBABILITIES = frozenset({"softmax", "sigmoid"})


def global_mixed_policy() -> str | None:
    """The name of Keras's global dtype policy when it was set to a mixed one
    (``mixed_float16``), read from Keras's own state; None otherwise."""
    state = sys.modules.get("keras.src.backend.common.global_state")
    tracker = getattr(state, "GLOBAL_STATE_TRACKER", None) if state is not None else None
    policy = getattr(tracker, "dtype_policy", None) if tracker is not None else None
    if policy is None or not str(type(policy).__module__).startswith("keras."):
        return None
    name = library_attribute(policy, "name")
    return name if type(name) is str and name.startswith("mixed_") else None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS or "(" not in source:
        return []
    if "keras" not in sys.modules:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    found: list[Note] = []
    if "set_floatx" in source:
        floatx = _floatx_note(tree, source, namespace)
        if floatx is not None:
            found.append(floatx)
    head = _head_note(tree, source, namespace)
    if head is not None:
        found.append(head)
    return found


# ------------------------------------------------------------------ set_floatx under a policy
def _policy_calls(tree: ast.Module) -> list[tuple[ast.Expr, ast.Call, str]]:
    """The cell's top-level ``set_floatx(...)`` and ``set_global_policy(...)`` calls, in
    order: (the statement, the call, its function's name)."""
    found = []
    for statement in tree.body:
        if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
            continue
        name = call_name(statement.value)
        if name in ("set_floatx", "set_global_policy"):
            found.append((statement, statement.value, name))
    return found


def _sixteen_bit_models(
    tree: ast.Module, after: int, namespace: Mapping[str, Any]
) -> list[tuple[str, str]]:
    """(name, compute dtype) of the models and layers bound by the cell's top-level
    assignments after line ``after`` that have a layer computing in 16 bits."""
    found: list[tuple[str, str]] = []
    for statement in tree.body:
        if not isinstance(statement, ast.Assign) or statement.lineno <= after:
            continue
        for target in statement.targets:
            if not isinstance(target, ast.Name) or any(n == target.id for n, _ in found):
                continue
            described = describe("", namespace.get(target.id))
            if described is None or described.kind not in ("layer", "model"):
                continue
            for layer in keras_layers(described.value, MAX_LAYERS):
                dtype = library_attribute(layer, "compute_dtype")
                if dtype in _SIXTEEN:
                    found.append((target.id, dtype))
                    break
    return found


def _floatx_note(tree: ast.Module, source: str, namespace: Mapping[str, Any]) -> Note | None:
    policy = global_mixed_policy()
    if policy is None:
        return None
    calls = _policy_calls(tree)
    if not calls or calls[-1][2] != "set_floatx":
        return None
    statement, call, _ = calls[-1]
    if len(call.args) != 1 or call.keywords:
        return None
    wanted = call.args[0]
    if not (isinstance(wanted, ast.Constant) and wanted.value in _FULL):
        return None
    written = ast.get_source_segment(source, statement)
    function = dotted_name(call.func)
    if written is None or "\n" in written or function is None:
        return None
    root = function.split(".", 1)[0] if "." in function else None
    keras = root if root is not None and namespace.get(root) is sys.modules.get("keras") else None
    fix_root = keras if keras is not None else "keras"
    fixed = f'{fix_root}.mixed_precision.set_global_policy("{wanted.value}")'
    models = _sixteen_bit_models(tree, statement.lineno, namespace)
    text = (
        f"`{written}` (line {statement.lineno} of this cell) changes only Keras's default "
        f"float type; the global dtype policy is still `{policy}`, set with "
        "`set_global_policy`, and a layer takes its dtypes from the policy: every layer "
        f"created after this line still computes in {policy.removeprefix('mixed_')}"
    )
    if models:
        shown = ", ".join(f"`{name}`" for name, _ in models[:3])
        text += f" ({shown} {'does' if len(models) == 1 else 'do'} here)"
    text += (
        f", and only its variables are kept in {wanted.value}. Nothing raises: a model whose "
        "last layer was given float32 even prints a float32 output. To go back to "
        f"{wanted.value}, set the policy itself. Fix: line {statement.lineno} written as "
        f"`{fixed}`."
    )
    return reports.note(text, SECTION)


# ------------------------------------------------------------------ a 16-bit probability head
def _probability_layer(layer: Any) -> str | None:
    """``"softmax"`` or ``"sigmoid"`` when the layer ends in that activation."""
    activation = library_attribute(layer, "activation")
    name = getattr(activation, "__name__", None) if activation is not None else None
    if type(name) is str and name in _PROBABILITIES:
        return name
    if type(layer).__name__ == "Softmax" and str(type(layer).__module__).startswith("keras."):
        return "softmax"
    return None


def _output_layers(model: Any) -> list[Any] | None:
    """The layers that make the model's outputs, or None when one is not a 16-bit tensor
    (or the model keeps no symbolic outputs, a subclassed model)."""
    outputs = library_attribute(model, "outputs")
    if type(outputs) not in (list, tuple) or not outputs:
        return None
    layers = []
    for output in outputs:
        if library_attribute(output, "dtype") not in _SIXTEEN:
            return None
        history = library_attribute(output, "_keras_history")
        layer = getattr(history, "operation", None) if history is not None else None
        if layer is None:
            return None
        layers.append(layer)
    return layers


def _created(tree: ast.Module, source: str, layer: Any, activation: str) -> ast.Call | None:
    """The one call of the cell (functions included) that creates a layer of ``layer``'s
    class with that activation: ``Dense(k, activation="softmax")``, ``Softmax()``."""
    class_name = type(layer).__name__
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or call_name(node) != class_name:
            continue
        if class_name == "Softmax":
            found.append(node)
            continue
        given = next((k.value for k in node.keywords if k.arg == "activation"), None)
        if given is None and class_name == "Activation" and node.args:
            given = node.args[0]
        if isinstance(given, ast.Constant) and given.value == activation:
            found.append(node)
    if len(found) != 1 or any(k.arg in ("dtype", None) for k in found[0].keywords):
        return None
    text = ast.get_source_segment(source, found[0])
    return found[0] if text is not None and "\n" not in text else None


def _head_note(tree: ast.Module, source: str, namespace: Mapping[str, Any]) -> Note | None:
    for statement in tree.body:
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            continue
        target = statement.targets[0]
        if not isinstance(target, ast.Name):
            continue
        described = describe("", namespace.get(target.id))
        if described is None or described.kind != "model":
            continue
        layers = _output_layers(described.value)
        if not layers or len(layers) != 1:
            continue
        layer = layers[0]
        activation = _probability_layer(layer)
        if activation is None:
            continue
        dtype = library_attribute(layer, "compute_dtype")
        if dtype not in _SIXTEEN:
            continue
        return _head_text(tree, source, statement, target.id, layer, activation, dtype)
    return None


def _head_text(
    tree: ast.Module,
    source: str,
    statement: ast.Assign,
    name: str,
    layer: Any,
    activation: str,
    dtype: str,
) -> Note:
    policy = library_attribute(library_attribute(layer, "dtype_policy"), "name")
    why = f"its dtype policy is `{policy}`" if type(policy) is str else "a 16-bit policy"
    made = ast.get_source_segment(source, statement.value) or name
    text = (
        f"`{name}` (line {statement.lineno} of this cell, `{made}`) gives {dtype} "
        f"probabilities: its last layer applies the {activation} in {dtype} ({why}, as every "
        f"layer created under a mixed policy). {dtype} keeps about 3 significant digits: "
        f"small probabilities round to 0, and a loss or log computed from them gets -inf, "
        "NaN or a coarse value. Nothing raises. Mixed precision keeps the model's output "
        "in float32"
    )
    created = _created(tree, source, layer, activation)
    if created is not None:
        written = ast.get_source_segment(source, created) or ""
        inner = written[: written.rstrip().rfind(")")].rstrip()
        separator = "" if inner.endswith("(") else ", "
        fixed = f'{inner}{separator}dtype="float32")'
        text += (
            f': create that layer with `dtype="float32"` (line {created.lineno}). '
            f"Fix: `{fixed}`. (Or keep the scores in {dtype} and add a last "
            f'`Activation("{activation}", dtype="float32")` layer.)'
        )
    else:
        text += (
            f': give its last layer `dtype="float32"`, or end it with '
            f'`Activation("{activation}", dtype="float32")`.'
        )
    return reports.note(text, SECTION)
