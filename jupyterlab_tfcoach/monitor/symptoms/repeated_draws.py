"""Repeated passes of a model with random layers that came out identical: Monte Carlo
dropout run in inference mode.

Monte Carlo dropout (and any sampling from a model with ``Dropout``, ``GaussianNoise``,
``GaussianDropout`` or ``AlphaDropout``) calls the same model on the same inputs many times
and reads the spread of the results. ``model.predict`` and a call without ``training``
run the model in inference mode, where those layers pass their input through unchanged:
every pass is the same, the spread is exactly 0, and the "uncertainty" drawn from it
(a standard deviation, an interval) says the model is certain. Nothing raises.

The symptom, read after a cell that completed (a cell without ``for NAME in range(``
costs one regular-expression search): a value the cell assigned from
``np.stack``/``np.array``/``tf.stack`` of repeated passes (a comprehension ``[F for _ in
range(T)]``, or a top-level loop over ``range`` that appends ``F`` to a list then stacked
or kept as the list), where ``F`` calls a Keras model or layer (``m.predict(x)``,
``m.predict_on_batch(x)``, ``m(x)``, ``m(x, training=False)``) with arguments that do not
use the loop's variable; the value (a NumPy array or eager tensor of at most
``MAX_ELEMENTS`` values) has all its slices along the first axis equal, and the model holds
at least one random layer (``training_mode.mode_layers``). A model without one gives
identical passes by design and stays silent, as do passes with ``training=True``.

The fix is the cell's statement with the call run in training mode:
``m(x, training=True).numpy()`` for ``m.predict(x)`` (its other arguments dropped),
``training=True`` added to (or set in) a direct call.
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms import identical_draws
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode, held_array
from jupyterlab_tfcoach.monitor.symptoms.training_mode import mode_layers
from jupyterlab_tfcoach.monitor.syntax import call_name, held_at, reference_path
from jupyterlab_tfcoach.monitor.training import user_code
from jupyterlab_tfcoach.monitor.training.model_source import user_classes

SECTION = "training-argument"
MAX_NOTES = 1
MAX_ELEMENTS = 2_000_000
MAX_LIST_ITEMS = 1_000
# The words a cell needs: a loop over a range (a comprehension's or a statement's).
WANTED = re.compile(r"\bfor\s+\w+\s+in\s+range\s*\(")
_STACKS = frozenset({"stack", "array", "asarray", "convert_to_tensor"})
_PREDICTS = frozenset({"predict", "predict_on_batch"})
_RANDOM_KINDS = frozenset({"Dropout", "GaussianDropout", "GaussianNoise", "AlphaDropout"})


def _loop_names(target: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _uses(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _is_range(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and call_name(node) == "range"


def _model_call(
    element: ast.AST, loop: set[str], namespace: dict[str, Any]
) -> tuple[ast.Call, Any] | None:
    """The call of a Keras model or layer in ``element`` run in inference mode with
    arguments that do not change from pass to pass, and the model."""
    for node in ast.walk(element):
        if not isinstance(node, ast.Call) or _uses(node, loop):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _PREDICTS:
            holder = func.value
        else:
            holder = func
            flag = next((k for k in node.keywords if k.arg == "training"), None)
            if flag is not None and not (
                isinstance(flag.value, ast.Constant) and flag.value.value is False
            ):
                continue
        found, model = held_at(reference_path(holder), namespace)
        if found and random_kinds(model):
            return node, model
    return None


def random_kinds(model: Any) -> list[str]:
    """The kinds of random layers of ``model`` that run only in training mode: Keras's
    (``Dropout``...) and the learner's own classes whose ``call`` samples when told
    ``training`` (read from their source)."""
    kinds = [k for k in mode_layers(model) if k in _RANDOM_KINDS]
    try:
        classes = user_classes(model)
    except Exception:
        return kinds
    for cls, _layer in classes:
        name = getattr(cls, "__name__", "")
        if type(name) is str and name not in kinds and _samples_when_training(cls):
            kinds.append(name)
    return kinds


def _inactive(kinds: list[str]) -> str:
    """What the random layers do in inference mode, in words."""
    keras_kinds = [k for k in kinds if k in _RANDOM_KINDS]
    own = [f"`{k}`" for k in kinds if k not in _RANDOM_KINDS]
    parts = []
    if keras_kinds:
        parts.append(f"its {' and '.join(keras_kinds)} layers pass everything through unchanged")
    if own:
        parts.append(
            f"its {' and '.join(own)} layers draw nothing (their `call` samples only when "
            f"`training` is true)"
        )
    return " and ".join(parts)


def _samples_when_training(cls: type) -> bool:
    """The class's own ``call`` takes ``training``, reads it, and draws random numbers."""
    call = cls.__dict__.get("call")
    method = user_code.method_source(call) if call is not None else None
    if method is None or "training" not in user_code.keyword_parameters(method):
        return False
    reads = any(
        isinstance(n, ast.Name) and n.id == "training" and isinstance(n.ctx, ast.Load)
        for n in ast.walk(method.tree)
    )
    return reads and any(
        isinstance(n, ast.Call) and _draws_random(n.func) for n in ast.walk(method.tree)
    )


def _draws_random(func: ast.AST) -> bool:
    """``tf.random.normal``, ``keras.random.uniform``, ``np.random.normal``,
    ``tf.nn.dropout``, ``self.generator.normal`` of a ``tf.random.Generator``..."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return "random" in parts[1:] or (bool(parts) and parts[0] == "dropout")


def _identical(value: Any) -> int | None:
    """The number of passes when every slice along the first axis equals the first."""
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return None
    if type(value) is list and 1 < len(value) <= MAX_LIST_ITEMS and type(value[0]) is float:
        # Python numbers, one per pass (``accs.append(float(...))``): equal up to the
        # rounding of a sum taken in another order (a relative 1e-6).
        first = value[0]
        tolerance = 1e-6 * max(1.0, abs(first))
        same = all(type(item) is float and abs(item - first) <= tolerance for item in value)
        return len(value) if same else None
    if isinstance(value, list) and 1 < len(value) <= MAX_LIST_ITEMS:
        items = [held_array(item, MAX_ELEMENTS, ("float",)) for item in value]
        if any(item is None for item in items):
            return None
        first = items[0]
        same = all(item.shape == first.shape and numpy.array_equal(item, first) for item in items)
        return len(items) if same else None
    array = held_array(value, MAX_ELEMENTS, ("float",))
    if array is None or array.ndim < 1 or array.shape[0] < 2:
        return None
    return int(array.shape[0]) if bool(numpy.all(array == array[:1])) else None


def _fixed_call(code: CellCode, call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in _PREDICTS:
        holder, inputs = (
            code.segment(func.value),
            (code.segment(call.args[0]) if call.args else None),
        )
        if holder is None or inputs is None:
            return None
        return f"{holder}({inputs}, training=True).numpy()"
    text = code.segment(call)
    holder = code.segment(func)
    if text is None or holder is None:
        return None
    parts = [code.segment(a) for a in call.args]
    parts += [
        (f"{k.arg}={code.segment(k.value)}" if k.arg else f"**{code.segment(k.value)}")
        for k in call.keywords
        if k.arg != "training"
    ]
    if any(p is None for p in parts):
        return None
    return f"{holder}({', '.join(str(p) for p in [*parts, 'training=True'])})"


def _candidates(code: CellCode) -> list[tuple[str, ast.AST, ast.AST, set[str], str]]:
    """(name, statement, element, loop variables, count text) for each value the cell
    builds from repeated passes."""
    found: list[tuple[str, ast.AST, ast.AST, set[str], str]] = []
    appended: dict[str, tuple[ast.AST, ast.AST, set[str], str]] = {}
    for node in code.nodes:
        if isinstance(node, ast.For) and _is_range(node.iter):
            loop = _loop_names(node.target)
            count = code.segment(node.iter) or "range(...)"
            for inner in node.body:
                value = inner.value if isinstance(inner, ast.Expr) else None
                if (
                    isinstance(value, ast.Call)
                    and call_name(value) == "append"
                    and isinstance(value.func, ast.Attribute)
                    and isinstance(value.func.value, ast.Name)
                    and len(value.args) == 1
                ):
                    appended[value.func.value.id] = (inner, value.args[0], loop, count)
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            continue
        value = node.value
        if not (isinstance(value, ast.Call) and call_name(value) in _STACKS and value.args):
            continue
        built = value.args[0]
        name = node.targets[0].id
        if (
            isinstance(built, ast.ListComp)
            and len(built.generators) == 1
            and _is_range(built.generators[0].iter)
        ):
            generator = built.generators[0]
            count = code.segment(generator.iter) or "range(...)"
            found.append((name, node, built.elt, _loop_names(generator.target), count))
        elif isinstance(built, ast.Name) and built.id in appended:
            statement, element, loop, count = appended[built.id]
            found.append((name, statement, element, loop, count))
    for name, (statement, element, loop, count) in appended.items():
        found.append((name, statement, element, loop, count))
    return found


def repeated_draw_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    if WANTED.search(code.source) is None:
        return []
    notes: list[Note] = []
    told: set[int] = set()
    for name, statement, element, loop, count in _candidates(code):
        if len(notes) >= MAX_NOTES or id(statement) in told:
            break
        if code.rebound_after((name,), statement.lineno) and not isinstance(statement, ast.Expr):
            continue
        if name not in namespace:
            continue
        passes = _identical(namespace[name])
        if passes is None:
            continue
        called = _model_call(element, loop, namespace)
        if called is None:
            note = _other_cause(code, name, statement, element, passes, count, namespace)
            if note is not None:
                told.add(id(statement))
                notes.append(note)
            continue
        call, model = called
        fixed_call = _fixed_call(code, call)
        call_text = code.segment(call)
        if fixed_call is None or call_text is None:
            continue
        fixed = code.replaced_in(statement, call, fixed_call)
        if fixed is None:
            continue
        kinds = random_kinds(model)
        holder = code.segment(call.func.value if call_name(call) in _PREDICTS else call.func)
        how = (
            f"`{holder}.{call_name(call)}` runs the model in inference mode"
            if call_name(call) in _PREDICTS
            else f"`{call_text}` without `training=True` runs the model in inference mode"
        )
        text = (
            f"`{name}` holds {passes} passes of `{holder}` over the same inputs ({count}, "
            f"line {statement.lineno} of this cell), and all {passes} are identical: their "
            f"spread along the first axis is exactly 0. {how}, where {_inactive(kinds)}, "
            f"so every pass gives the same output and any standard deviation or interval read from "
            f"`{name}` says the model is certain. Nothing raises. Keep the random layers "
            f"on while sampling by calling the model with `training=True`. Fix: `{fixed}`."
        )
        told.add(id(statement))
        notes.append(reports.note(text, SECTION))
    return notes


def _loop_body(code: CellCode, statement: ast.AST) -> list[ast.stmt]:
    """The body of the top-level ``for`` loop holding ``statement`` (an ``append``)."""
    for node in code.nodes:
        if isinstance(node, ast.For) and any(s is statement for s in node.body):
            return list(node.body)
    return []


def _other_cause(
    code: CellCode,
    name: str,
    statement: ast.AST,
    element: ast.AST,
    passes: int,
    count: str,
    namespace: dict[str, Any],
) -> Note | None:
    """Identical random passes with no model in them: randomness reset in each pass, or a
    permutation under an order-blind statistic (``identical_draws.py``)."""
    if not identical_draws.spread_read(code, name):
        return None
    body = _loop_body(code, statement) if isinstance(statement, ast.Expr) else []
    cause = identical_draws.reset_text(code, name, element, body, namespace)
    section = identical_draws.RESET_SECTION
    if cause is None:
        cause = identical_draws.permutation_text(code, element, body, namespace)
        section = identical_draws.PERMUTATION_SECTION
    if cause is None:
        return None
    text = (
        f"`{name}` holds {passes} random passes ({count}, line {statement.lineno} of this "
        f"cell), and all {passes} are identical: their spread is exactly 0, so any standard "
        f"deviation or interval read from `{name}` is 0 too. Nothing raises. Here {cause}"
    )
    return reports.note(text, section)
