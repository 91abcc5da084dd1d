"""Hover cards: what a TensorFlow API is, the pitfall to remember, and the course
section that teaches it. Keys are canonical names: ``tf.<public name>`` (the
spelling of ``analysis.imports``) for API objects and ``<Class>.<method>`` for
methods of bound objects.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Card:
    title: str
    what: str
    pitfall: str
    section_id: str


CARDS: dict[str, Card] = {
    "tf.function": Card(
        "tf.function",
        "Compiles a Python function into a TensorFlow graph. The Python body runs only "
        "while *tracing*; later calls with compatible inputs reuse the graph.",
        "Python side effects (`print`, `list.append`, counters) run once per trace, not "
        "once per call, and every new Python number passed as an argument triggers a retrace.",
        "tracing",
    ),
    "tf.Variable": Card(
        "tf.Variable",
        "A mutable tensor that keeps its state between calls; optimizers update it and "
        "`GradientTape` watches it automatically when trainable.",
        "`w = w - lr * g` rebinds the name to a plain tensor and the variable silently "
        "stops training; update in place with `w.assign_sub(lr * g)`.",
        "variables",
    ),
    "tf.constant": Card(
        "tf.constant",
        "An immutable tensor built from a Python value; the dtype is inferred "
        "(`int32` for integers, `float32` for floats).",
        "It cannot change in place, and a tape does not watch it: `tape.gradient` with "
        "respect to a constant is `None` unless you call `tape.watch` on it first.",
        "tensors-immutable",
    ),
    "tf.GradientTape": Card(
        "tf.GradientTape",
        "Records the operations run inside its `with` block so that gradients can be "
        "computed afterwards with `tape.gradient(target, sources)`.",
        "A tape computes gradients once: a second `gradient` call raises unless it was "
        "created with `persistent=True` (then `del tape` when done). Only trainable "
        "variables are watched automatically.",
        "gradient-tape",
    ),
    "tf.cast": Card(
        "tf.cast",
        "Converts a tensor to another dtype, e.g. `tf.cast(x, tf.float32)`.",
        "TensorFlow never promotes dtypes implicitly: `int32 + float32` raises. Cast "
        "explicitly, and remember that casting floats to integers truncates.",
        "dtype-casting",
    ),
    "tf.print": Card(
        "tf.print",
        "Prints tensor values when the operation *runs*, inside graphs too.",
        "Python `print` inside a `tf.function` runs only while tracing and shows "
        "symbolic tensors; use `tf.print` to see values on every call.",
        "side-effects",
    ),
    "tf.TensorSpec": Card(
        "tf.TensorSpec",
        "Describes the shape and dtype of a tensor argument, e.g. in a `tf.function`'s "
        "`input_signature`.",
        "Use `None` for the batch dimension (`tf.TensorSpec([None, 28], tf.float32)`): a "
        "fixed leading size rejects every other batch size, including the last partial batch.",
        "batch-dimension",
    ),
    "GradientTape.gradient": Card(
        "GradientTape.gradient",
        "Computes the gradients of `target` with respect to `sources` from the operations "
        "this tape recorded.",
        "A non-persistent tape is released after the first call, so a second `gradient` "
        "raises. Sources that are not trainable variables need `tape.watch`, else their "
        "gradient is `None`.",
        "gradient-tape",
    ),
    "GradientTape.watch": Card(
        "GradientTape.watch",
        "Asks the tape to record operations on a tensor that is not a trainable variable "
        "(a constant, an input).",
        "Call it inside the `with` block *before* the computation that uses the tensor; "
        "watching afterwards records nothing.",
        "tape-watch",
    ),
    "Variable.assign": Card(
        "tf.Variable.assign",
        "Writes a new value into the variable in place; it stays the same trainable object.",
        "Prefer it to `v = new_value`, which only rebinds the Python name to a tensor.",
        "rebinding-variables",
    ),
    "Variable.assign_add": Card(
        "tf.Variable.assign_add",
        "Adds to the variable in place: `v.assign_add(delta)`.",
        "Prefer it to `v = v + delta` or `v += delta`: the first rebinds the name to a "
        "plain tensor (the variable stops training), the second raises in TF 2.21.",
        "rebinding-variables",
    ),
    "Variable.assign_sub": Card(
        "tf.Variable.assign_sub",
        "Subtracts from the variable in place: `w.assign_sub(lr * g)`.",
        "Prefer it to `w = w - lr * g` or `w -= lr * g`: the first rebinds the name to a "
        "plain tensor (the variable stops training), the second raises in TF 2.21.",
        "rebinding-variables",
    ),
}

# Methods offered on names the file binds to these kinds of objects.
METHODS: dict[str, frozenset[str]] = {
    "GradientTape": frozenset({"gradient", "watch"}),
    "Variable": frozenset({"assign", "assign_add", "assign_sub"}),
}
