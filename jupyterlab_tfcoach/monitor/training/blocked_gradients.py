"""A weight of the user's own layer that ``fit`` barely moved because the layer passes it
through an op with no gradient (issue "explain code it has never seen").

``tf.round``, ``tf.floor``, ``tf.ceil``, ``tf.sign`` (and ``keras.ops``'s, and a cast to
an integer dtype, an ``argmax``, a comparison) are flat almost everywhere: TensorFlow
gives them no gradient. A layer that quantises or binarises its weight with one of them
(``q = tf.round(self.w / step) * step``) trains nothing through that path; the
weight moves only where another path reaches it (the step's ``reduce_max`` touches one
entry), or not at all. Nothing raises, and the loss still falls a little through the
biases.

Symptom first (``fit_watch.py`` counts the entries of each weight that changed during
``fit``): a weight of ``MIN_ENTRIES`` values or more of which at most
``MOVED_SHARE`` changed, while another weight of the model changed in most of its
entries. Then its cause, read with ``ast`` from the methods of the user's class that
holds it (``call`` and the methods of ``self`` it calls; ``user_code.method_source``,
never run): a call of such an op whose argument reads ``self.<the weight's attribute>``,
directly or through names the method computed from it. A method with ``stop_gradient``
in it (a straight-through estimator already written) is not blamed.

The fix, for rounding-like ops (the result stands for the weight): the straight-through
estimator, the rounded value forward and the identity backward, written after the
statement that assigns it (``q = self.w + tf.stop_gradient(q - self.w)``),
else around the call itself. Other ops are named with no fix.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, keras_layers
from jupyterlab_tfcoach.monitor.training import model_source, user_code
from jupyterlab_tfcoach.monitor.training.fit_watch import FitRun, WeightOutcome

SECTION = "gradient-tape"
MIN_ENTRIES = 16
MOVED_SHARE = 0.25
MOSTLY_MOVED = 0.5
MAX_METHODS = 6
# Ops whose result stands for their input (a rounded or binarised weight): the
# straight-through estimator keeps the forward value and passes the gradient through.
_ROUNDING = frozenset({"round", "rint", "floor", "ceil", "sign"})
# Ops with no gradient whose result does not stand for the input (indices, booleans).
_OTHER_FLAT = frozenset(
    {"argmax", "argmin", "equal", "not_equal", "greater", "greater_equal", "less", "less_equal"}
)
_INTEGER_DTYPES = ("int8", "int16", "int32", "int64", "uint8")
_ROOTS = ("tf", "ops", "keras", "math", "K")
_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Expr)


def _dotted(node: ast.AST) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _flat_op(call: ast.Call) -> str | None:
    """ "round" for ``tf.round(...)``/``keras.ops.round(...)``, "cast" for a cast to an
    integer dtype, else None."""
    name = _dotted(call.func)
    if name is None or "." not in name or name.split(".")[0] not in _ROOTS:
        return None
    last = name.rsplit(".", 1)[1]
    if last in _ROUNDING or last in _OTHER_FLAT:
        return last
    if last == "cast":
        dtype = call.args[1] if len(call.args) > 1 else None
        for keyword in call.keywords:
            if keyword.arg == "dtype":
                dtype = keyword.value
        written = _dotted(dtype) if dtype is not None else None
        if isinstance(dtype, ast.Constant) and isinstance(dtype.value, str):
            written = dtype.value
        if written and written.rsplit(".", 1)[-1] in _INTEGER_DTYPES:
            return "cast"
    return None


def _reads(node: ast.AST, attribute: str, names: set[str]) -> bool:
    for inner in ast.walk(node):
        if (
            isinstance(inner, ast.Attribute)
            and inner.attr == attribute
            and isinstance(inner.value, ast.Name)
            and inner.value.id == "self"
        ):
            return True
        if isinstance(inner, ast.Name) and inner.id in names:
            return True
    return False


class _Cut:
    """A call of a no-gradient op on the weight, in one method."""

    def __init__(
        self, method: str, op: str, call: ast.Call, statement: ast.stmt, source: str
    ) -> None:
        self.method = method
        self.op = op
        self.call = call
        self.statement = statement
        self.source = source

    def text(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.source, node) or ""


def _cuts_in(method_name: str, function: Any, attribute: str) -> list[_Cut]:
    method = user_code.method_source(function)
    if method is None or "stop_gradient" in method.source:
        return []
    definition = next(
        (n for n in method.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))),
        None,
    )
    if definition is None:
        return []
    derived: set[str] = set()
    cuts: list[_Cut] = []
    for statement in ast.walk(definition):
        if not isinstance(statement, ast.stmt) or statement is definition:
            continue
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if not isinstance(statement, _SIMPLE):
            continue
        value = getattr(statement, "value", None)
        if value is None:
            continue
        for call in ast.walk(value):
            if not isinstance(call, ast.Call):
                continue
            op = _flat_op(call)
            if op is None or not call.args or not _reads(call.args[0], attribute, derived):
                continue
            cuts.append(_Cut(method_name, op, call, statement, method.source))
        if isinstance(statement, ast.Assign) and _reads(value, attribute, derived):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    derived.add(target.id)
    return cuts


def _methods(cls: type) -> list[tuple[str, Any]]:
    """``call`` and the methods of the user's class it calls on ``self``."""
    call = model_source.own_function(cls, "call")
    if call is None:
        return []
    found = [("call", call)]
    method = user_code.method_source(call)
    if method is None:
        return found
    for node in ast.walk(method.tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "self"
            and len(found) < MAX_METHODS
            and all(node.func.attr != name for name, _ in found)
        ):
            other = model_source.own_function(cls, node.func.attr)
            if other is not None and getattr(other, "__code__", None) is not None:
                found.append((node.func.attr, other))
    return found


def _attribute_of(instance: Any, variable_ids: set[int]) -> list[tuple[str, int]]:
    attributes = instance_dict(instance) or {}
    return [
        (name, id(value))
        for name, value in list(attributes.items())
        if type(name) is str and id(value) in variable_ids
    ]


def _fix(cut: _Cut, attribute: str) -> str | None:
    if cut.op not in _ROUNDING:
        return None
    weight = f"self.{attribute}"
    statement = cut.statement
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and statement.value is not None
        and weight in cut.text(cut.call.args[0])
    ):
        name = statement.targets[0].id
        return f"{name} = {weight} + tf.stop_gradient({name} - {weight})"
    inner = cut.text(cut.call.args[0])
    written = cut.text(cut.call)
    if not inner or not written or "\n" in written:
        return None
    return f"({inner} + tf.stop_gradient({written} - ({inner})))"


def _note(cls: type, attribute: str, cut: _Cut, weights: list[WeightOutcome]) -> Note:
    class_name = model_source.class_display_name(cls)
    moved = sum(w.changed_entries for w in weights)
    size = sum(w.size for w in weights)
    line = cut.text(cut.statement).strip().splitlines()[0]
    which = (
        f"the `{attribute}` of each of the {len(weights)} `{class_name}` layers"
        if len(weights) > 1
        else f"the `{attribute}` of the `{class_name}` layer"
    )
    op_name = ast.get_source_segment(cut.source, cut.call.func) or cut.op
    text = (
        f"`fit` changed {which} in only {moved:,} of {size:,} entries, while the model's "
        f"other weights moved. `{class_name}.{cut.method}` computes `{line}`: `{op_name}` has "
        f"no gradient (it is flat almost everywhere), so no gradient reaches `self.{attribute}` "
        "through it, and the weight keeps (almost) its starting values while the rest of the "
        "model trains around it."
    )
    fix = _fix(cut, attribute)
    if fix is None:
        text += (
            f" Keep `{op_name}` out of the path from `self.{attribute}` to the output (use "
            "it for metrics or predictions)."
        )
    elif fix.startswith("("):
        text += (
            " Write it as a straight-through estimator, its value forward and the identity "
            f"backward, in place of `{cut.text(cut.call)}`. Fix: `{fix}`."
        )
    else:
        text += (
            " Write it as a straight-through estimator, its value forward and the identity "
            f"backward, with one line after it in `{cut.method}`. Fix: `{fix}`."
        )
    return reports.note(text, SECTION)


def blocked_gradient_notes(
    fits: list[FitRun], namespace: Mapping[str, Any], cell_source: str, explained: set[int]
) -> list[Note]:
    """One note per user class and weight attribute that fit barely moved for a no-gradient
    op its methods apply to it."""
    notes: list[Note] = []
    told: set[tuple[int, str]] = set()
    for run in fits:
        if not run.compared:
            continue
        mostly = any(
            w.size >= MIN_ENTRIES and w.changed_entries > MOSTLY_MOVED * w.size for w in run.weights
        )
        stuck = {
            w.variable_id: w
            for w in run.weights
            if w.size >= MIN_ENTRIES
            and w.changed_entries <= MOVED_SHARE * w.size
            and w.variable_id not in explained
        }
        if not mostly or not stuck:
            continue
        model = run.model() if isinstance(run.model, weakref.ReferenceType) else None
        if model is None:
            continue
        for cls, _instance in model_source.user_classes(model):
            by_attribute: dict[str, list[WeightOutcome]] = {}
            for layer in _instances_of(model, cls):
                for name, variable_id in _attribute_of(layer, set(stuck)):
                    by_attribute.setdefault(name, []).append(stuck[variable_id])
            for attribute, weights in by_attribute.items():
                if (id(cls), attribute) in told:
                    continue
                cuts = [
                    cut
                    for method_name, function in _methods(cls)
                    for cut in _cuts_in(method_name, function, attribute)
                ]
                if not cuts:
                    continue
                told.add((id(cls), attribute))
                notes.append(_note(cls, attribute, cuts[0], weights))
                explained.update(w.variable_id for w in weights)
    return notes


def _instances_of(model: Any, cls: type) -> list[Any]:
    return [layer for layer in keras_layers(model, model_source.MAX_LAYERS) if type(layer) is cls]
