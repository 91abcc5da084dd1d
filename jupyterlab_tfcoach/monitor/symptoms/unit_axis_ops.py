"""argmax, argmin, softmax or log-softmax taken over an axis of size 1 of an array.

``np.argmax(probs, axis=-1)`` on the predictions of a model with one sigmoid output,
``(n, 1)`` or ``(n, h, w, 1)``, picks among one entry: the answer is 0 for every row, so
"the predicted class" is 0 everywhere whatever the model says. ``tf.nn.softmax(scores)``
over a last axis of size 1 is 1.0 everywhere (log-softmax 0.0). Nothing raises: the result
has the right shape. (The same operation inside a model, a layer's ``activation``, is
``training/unit_softmax_layers.py``.)

After a completed cell whose text holds ``argmax``, ``argmin`` or ``softmax`` (one
substring test otherwise), each call of its code outside ``def``/``class`` to a NumPy,
TensorFlow or Keras ``argmax``/``argmin``/``softmax``/``log_softmax`` (``np.argmax(a,
axis=-1)``, ``tf.argmax(a, 1)``, ``tf.nn.softmax(a)``, ``keras.ops.softmax``, the method
``a.argmax(axis=-1)``) whose array is a name, a key of a plain ``dict`` a name holds
(``out["probability"]``, what a served signature returns), under ``.numpy()``,
``np.asarray`` or ``convert_to_numpy``: the value it holds after the cell (a NumPy array
or a tensor: only its shape is read) has size 1 on the axis the call reduces
(``tf.argmax``'s default is 0). The note names the call, the array's shape and the name
the result went to; the fix for argmax/argmin is a threshold on the single column
(``probs[..., 0] > 0.5``), for softmax the sigmoid of the same module.

(NumPy's and Keras ops' argmax without an axis flattens the array: not told here; the
flat index compared with labels is ``class_axis.py``.)
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import unwrap_calls
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    dotted_name,
    outside_scopes,
    parsed_source,
    source_segment,
    subtree_nodes,
)

SECTION = "class-axis"
MAX_NOTES = 2
_OPERATIONS = frozenset({"argmax", "argmin", "softmax", "log_softmax"})
# Module prefixes whose argmax/softmax this reads (the learner's alias is the first part).
_MODULES = frozenset(
    {
        "np",
        "numpy",
        "tf",
        "tf.math",
        "tf.nn",
        "keras.ops",
        "ops",
        "keras.activations",
        "tf.keras.activations",
        "K",
    }
)
# An argmax with no axis: NumPy's and Keras ops' flatten the array (None), TensorFlow's
# reduces axis 0, the Keras backend's the last axis.
_ARG_DEFAULT_AXIS: dict[str, int | None] = {
    "np": None,
    "numpy": None,
    "keras.ops": None,
    "ops": None,
    "K": -1,
}
# Calls that give back the same array (so the same shape): read through them.
_SHAPE_KEEPING = frozenset({"asarray", "array", "convert_to_numpy", "convert_to_tensor"})
_SIGMOID = {
    "tf.nn": "tf.math.sigmoid",
    "tf.math": "tf.math.sigmoid",
    "tf": "tf.math.sigmoid",
    "keras.ops": "keras.ops.sigmoid",
    "ops": "ops.sigmoid",
    "keras.activations": "keras.activations.sigmoid",
    "tf.keras.activations": "tf.keras.activations.sigmoid",
}


def held_shape(value: Any) -> tuple[int | None, ...] | None:
    cls = type(value)
    module = getattr(cls, "__module__", "") or ""
    if not (module.startswith(("numpy", "tensorflow", "keras"))):
        return None
    try:
        shape = value.shape
        return tuple(None if d is None else int(d) for d in shape)
    except Exception:
        return None


def _axis(call: ast.Call, default: int | None, position: int) -> int | str | None:
    """The axis the call reduces: an int, None for none given and no default, "?" when
    it is not a literal."""
    node: ast.AST | None = None
    for keyword in call.keywords:
        if keyword.arg in ("axis", "dim"):
            node = keyword.value
    if node is None and len(call.args) > position:
        node = call.args[position]
    if node is None:
        return default
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = node.operand
        if isinstance(inner, ast.Constant) and type(inner.value) is int:
            return -inner.value
        return "?"
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return "?"


def _array_value(node: ast.AST, namespace: Mapping[str, Any]) -> tuple[bool, Any]:
    """What the array expression holds, read without running it: a name, a key of a
    plain ``dict`` it holds (``out["probability"]``, a served model's outputs), under the
    conversions that keep the shape (``.numpy()``, ``np.asarray``, ``convert_to_numpy``)."""
    node = unwrap_calls(node, _SHAPE_KEEPING)
    if isinstance(node, ast.Call) and call_name(node) == "numpy" and not node.args:
        if isinstance(node.func, ast.Attribute):
            node = unwrap_calls(node.func.value, _SHAPE_KEEPING)
    keys: list[object] = []
    while isinstance(node, ast.Subscript):
        key = node.slice
        if not (isinstance(key, ast.Constant) and type(key.value) in (str, int)):
            return False, None
        keys.append(key.value)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in namespace:
        return False, None
    value = namespace[node.id]
    for key in reversed(keys):
        # Only a plain dict is indexed: its lookup runs no learner code.
        if type(value) is not dict or key not in value:
            return False, None
        value = value[key]
    return True, value


def _read(call: ast.Call, source: str) -> tuple[str, str, ast.AST, str, int | str | None] | None:
    """(operation, module prefix or "" for a method, the array's expression and its text,
    the axis: None when the call flattens the array)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in _OPERATIONS:
        return None
    operation = func.attr
    prefix = dotted_name(func.value)
    if prefix in _MODULES or (prefix or "").split(".")[0] in ("np", "numpy", "tf", "keras"):
        if prefix not in _MODULES or not call.args:
            return None
        array = call.args[0]
        text = source_segment(source, array)
        if not text or "\n" in text:
            return None
        if operation in ("argmax", "argmin"):
            axis = _axis(call, _ARG_DEFAULT_AXIS.get(prefix, 0), 1)
        else:
            if prefix in ("np", "numpy"):
                return None
            axis = _axis(call, -1, 1)
        return operation, prefix, array, text, axis
    # The method form: ``probs.argmax(axis=-1)`` (a NumPy array's own).
    if operation in ("argmax", "argmin") and isinstance(func.value, ast.Name):
        return operation, "", func.value, func.value.id, _axis(call, None, 0)
    return None


def _target(tree: ast.Module, call: ast.Call) -> str | None:
    for node in subtree_nodes(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and any(n is call for n in subtree_nodes(node.value)):
                return target.id
    return None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if "argmax" not in source and "argmin" not in source and "softmax" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    found: list[Note] = []
    for node in outside_scopes(tree):
        if not isinstance(node, ast.Call):
            continue
        reading = _read(node, source)
        if reading is None:
            continue
        operation, prefix, array, name, axis = reading
        if axis == "?":
            continue
        held, value = _array_value(array, namespace)
        shape = held_shape(value) if held else None
        if not shape:
            continue
        if type(axis) is int and -len(shape) <= axis < len(shape):
            if shape[axis] != 1 or len(shape) < 2:
                continue
            found.append(_note(node, operation, prefix, name, axis, shape, tree, source))
        if len(found) >= MAX_NOTES:
            break
    return found


def _shown(shape: tuple[int | None, ...]) -> str:
    return (
        "("
        + ", ".join("None" if d is None else str(d) for d in shape)
        + ("," if len(shape) == 1 else "")
        + ")"
    )


def _note(
    call: ast.Call,
    operation: str,
    prefix: str,
    name: str,
    axis: int,
    shape: tuple[int | None, ...],
    tree: ast.Module,
    source: str,
) -> Note:
    written = ast.get_source_segment(source, call) or f"{operation}({name})"
    target = _target(tree, call)
    shown = _shown(shape)
    where = f"`{written}` (line {call.lineno} of this cell)"
    size = f"`{name}` is {shown}: axis {axis} holds a single value"
    goes = f", so `{target}` is" if target else ", so the result is"
    if operation in ("argmax", "argmin"):
        extreme = "largest" if operation == "argmax" else "smallest"
        text = (
            f"{where} picks the {extreme} entry along an axis of size 1: {size}{goes} "
            f"0 everywhere, whatever the model predicts. {operation} chooses among classes; "
            f"a single column is one sigmoid probability (or one score), which is read by "
            f"a threshold instead."
        )
        last = axis in (-1, len(shape) - 1)
        column = f"{name}[..., 0]" if last else None
        if column is None:
            index = ", ".join([":"] * (axis % len(shape)) + ["0"])
            column = f"{name}[{index}]"
        numpy = prefix in ("np", "numpy") or prefix == ""
        if numpy:
            fixed = f'({column} > 0.5).astype("int64")'
        else:
            fixed = (
                f"tf.cast({column} > 0.5, tf.int64)"
                if prefix.startswith("tf")
                else f"{column} > 0.5"
            )
        assign = f"{target} = {fixed}" if target else fixed
        text += (
            f" Threshold the probability in place of that call: `{assign}` (0.5 for a "
            f"sigmoid output; use 0.0 for raw scores)."
        )
    else:
        constant = "1.0" if operation == "softmax" else "0.0"
        text = (
            f"{where} normalises along an axis of size 1: {size}{goes} {constant} everywhere, "
            f"whatever the scores. Softmax turns several class scores into probabilities; "
            f"one score becomes a probability with a sigmoid."
        )
        sigmoid = _SIGMOID.get(prefix)
        if sigmoid is not None:
            if operation == "log_softmax":
                sigmoid = sigmoid.replace("sigmoid", "log_sigmoid")
            fixed = f"{sigmoid}({name})"
            assign = f"{target} = {fixed}" if target else fixed
            text += f" Use `{assign}` in place of that call."
    return reports.note(text, SECTION)
