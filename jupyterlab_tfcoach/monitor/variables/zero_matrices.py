"""A layer class of the learner's whose weight matrices all start at zero.

``self.w = tf.Variable(tf.zeros([n_in, n_out]))`` in a ``tf.Module`` or Keras layer meant
to be stacked: every hidden unit computes the same value, receives the same gradient and
stays identical to the others (no symmetry breaking); with ReLU the zeros even stop the
gradient to the first layer, and only the biases learn. Nothing raises, the loss moves a
little. ``zero_start.py`` tells it from the symptom after training (weights that started
at zero and never moved); this module tells it where the class is written, before
anything trains.

After a completed cell whose text holds ``zeros`` (one substring test otherwise): each class
the cell defines at its top level whose name holds a TensorFlow ``Module`` or Keras
``Layer`` subclass after the cell. In its methods, the weights it makes: ``self.<a> =
tf.Variable(<init>)`` and ``self.<a> = self.add_weight(...)``. A weight is a matrix when its
shape is written with two or more entries (``[n_in, n_out]``, ``shape=(d, k)``); it starts
at zero when made with ``tf.zeros``/``np.zeros``/``zeros_like`` or ``initializer="zeros"``.
Told when every matrix the class makes starts at zero and either there are two or more
(a whole network) or the class is a layer made to be stacked (its ``__init__`` takes an
``activation``, or its methods apply one). A single linear layer with zeros (a linear or
logistic regression) is silent: it learns fine from zero. The fix is the same line with a
small random start (``tf.random.normal(shape, stddev=0.1)``; biases stay zeros).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import dotted_name, parsed_source
from jupyterlab_tfcoach.monitor.variables.zero_start import SECTION

_ZEROS = frozenset({"zeros", "zeros_like"})
_ACTIVATIONS = frozenset({"relu", "tanh", "sigmoid", "gelu", "elu", "selu", "leaky_relu", "swish"})


def _layer_class(value: Any) -> bool:
    if not isinstance(value, type):
        return False
    try:
        return any(
            (k.__name__ == "Module" and str(k.__module__).startswith("tensorflow"))
            or (k.__name__ == "Layer" and str(k.__module__).startswith("keras"))
            for k in value.__mro__
        )
    except Exception:
        return False


def _shape_rank(node: ast.AST | None) -> int | None:
    if isinstance(node, ast.List | ast.Tuple):
        return len(node.elts)
    return None


def _weight(call: ast.Call) -> tuple[int | None, bool, ast.Call | None] | None:
    """(rank of the written shape, starts at zero, the zeros call) of a weight-making
    call: ``tf.Variable(<init>)`` or ``self.add_weight(...)``; None for another call."""
    name = dotted_name(call.func) or ""
    if name.endswith("Variable") and call.args:
        init = call.args[0]
        if isinstance(init, ast.Call):
            called = (dotted_name(init.func) or "").rsplit(".", 1)[-1]
            shape = init.args[0] if init.args else None
            for keyword in init.keywords:
                if keyword.arg == "shape":
                    shape = keyword.value
            rank = _shape_rank(shape)
            if called in _ZEROS:
                return rank, True, init
            if called == "zeros_initializer" or called == "Zeros":
                return None, True, init
            return rank, False, None
        return None, False, None
    if name.endswith("add_weight"):
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        rank = _shape_rank(keywords.get("shape", call.args[0] if call.args else None))
        init = keywords.get("initializer")
        zero = (isinstance(init, ast.Constant) and init.value == "zeros") or (
            isinstance(init, ast.Call)
            and (dotted_name(init.func) or "").rsplit(".", 1)[-1] in ("Zeros", "zeros")
        )
        return rank, zero, None
    return None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if "zeros" not in source or "class " not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    found: list[Note] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and _layer_class(namespace.get(node.name)):
            note = _class_note(node, source, namespace)
            if note is not None:
                found.append(note)
    return found[:2]


def _class_note(cls: ast.ClassDef, source: str, namespace: Mapping[str, Any]) -> Note | None:
    zero: list[tuple[ast.Assign, str, ast.Call | None]] = []
    others = 0
    stacked = False
    for node in ast.walk(cls):
        if isinstance(node, ast.arg) and node.arg == "activation":
            stacked = True
        if isinstance(node, ast.Attribute) and node.attr in _ACTIVATIONS:
            stacked = True
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        target = node.targets[0]
        if not (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
        ):
            continue
        weight = _weight(node.value)
        if weight is None:
            continue
        rank, starts_zero, zeros_call = weight
        if rank is None or rank < 2:
            continue
        if starts_zero:
            zero.append((node, f"self.{target.attr}", zeros_call))
        else:
            others += 1
    if not zero or others or not (len(zero) >= 2 or stacked):
        return None
    statement, attribute, zeros_call = zero[0]
    written = ast.get_source_segment(source, statement) or attribute
    listed = ", ".join(f"`{a}`" for _s, a, _c in zero)
    kind = "matrices" if len(zero) > 1 else "matrix"
    text = (
        f"`{cls.name}` starts its weight {kind} {listed} at zero (line {statement.lineno}: "
        f"`{written}`). Stacked as hidden layers, every unit then computes the same value, "
        f"gets the same gradient and stays identical to the others (nothing breaks the "
        f"symmetry); with ReLU the zeros also stop the gradient reaching the first layer, "
        f"so only the biases learn and the network stays near the class prior. Nothing "
        f"raises. Zeros are fine for biases, not for weight matrices."
    )
    if zeros_call is not None:
        called = dotted_name(zeros_call.func) or ""
        shape = ast.get_source_segment(source, zeros_call.args[0]) if zeros_call.args else None
        module = called.rsplit(".", 1)[0] if "." in called else ""
        if shape and module in ("tf", "tensorflow"):
            fixed_init = f"{module}.random.normal({shape}, stddev=0.1)"
        elif shape and module in ("np", "numpy"):
            fixed_init = f'{module}.random.normal(0.0, 0.1, {shape}).astype("float32")'
        else:
            fixed_init = None
        zeros_text = ast.get_source_segment(source, zeros_call)
        if fixed_init and zeros_text and zeros_text in written:
            fixed = written.replace(zeros_text, fixed_init, 1)
            text += f" Start it small and random: `{fixed}`."
            return reports.note(text, SECTION)
    if '"zeros"' in written:
        fixed = written.replace('"zeros"', '"glorot_uniform"', 1)
        text += f" Start it small and random: `{fixed}`."
    else:
        text += ' Start it small and random (initializer="glorot_uniform", or tf.random.normal).'
    return reports.note(text, SECTION)
