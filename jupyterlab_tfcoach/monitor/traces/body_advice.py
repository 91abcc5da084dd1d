"""The advice for what ``body_scan.py`` finds in a traced function's Python body, which
runs only while tracing: its side effects, and Python values frozen into a trace that have
changed since, each told with a fix in the user's own names (the call as the cell wrote
it, the function whose body runs, a TensorFlow op for a NumPy draw)."""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
import types
from typing import Any

from jupyterlab_tfcoach.monitor.traces import body_scan as fx
from jupyterlab_tfcoach.monitor.traces import signatures as sig
from jupyterlab_tfcoach.monitor.traces.identity import KERAS, USER, origin_of, unwrap
from jupyterlab_tfcoach.monitor.traces.retrace_reasons import tensor_dtype_for


def effect_source(
    function: Any, roots: dict[str, str]
) -> tuple[types.FunctionType, Any | None, bool] | None:
    """The user's Python function whose body runs while this tf.function traces, the
    object its ``self`` is (None for a plain function), and whether Keras runs it."""
    unwrapped = unwrap(function, roots)
    target = unwrapped.target
    if type(target) is not types.FunctionType:
        return None
    if unwrapped.origin == USER:
        return target, unwrapped.instance if unwrapped.is_method else None, False
    if unwrapped.origin != KERAS:
        return None
    # Keras' step function closes over the model's own train_step/test_step/predict_step:
    # a user override runs while it traces.
    code = target.__code__
    for name, cell in zip(code.co_freevars, target.__closure__ or (), strict=False):
        if name not in ("step_function", "step_func"):
            continue
        try:
            content = cell.cell_contents
        except ValueError:
            return None
        if type(content) is not types.MethodType:
            return None
        inner = content.__func__
        if type(inner) is types.FunctionType and (
            origin_of(inner.__code__.co_filename, roots) == USER
        ):
            return inner, content.__self__, True
    return None


def calling_line(frame: Any) -> str | None:
    """The source line that made a call (read only when the call traced)."""
    if frame is None:
        return None
    try:
        line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    except Exception:
        return None
    return line if line and len(line) <= 300 else None


def call_as_written(line: str | None, owner: str, instance_name: str | None) -> str | None:
    """``train_step(x_train, y_train)`` as the calling line wrote it, or None."""
    if line is None:
        return None
    short = owner.rsplit(".", 1)[-1]
    wanted = instance_name if short == "__call__" else short
    if wanted is None:
        return None
    try:
        tree = ast.parse(line + " pass" if line.endswith(":") else line)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if called == wanted:
            return ast.get_source_segment(line, node)
    return None


# NumPy / random module functions and the TensorFlow op that draws inside the graph.
_TF_RANDOM = {
    "normal": "tf.random.normal(shape, mean, stddev)",
    "randn": "tf.random.normal(shape)",
    "standard_normal": "tf.random.normal(shape)",
    "gauss": "tf.random.normal([], mu, sigma)",
    "normalvariate": "tf.random.normal([], mu, sigma)",
    "uniform": "tf.random.uniform(shape, low, high)",
    "rand": "tf.random.uniform(shape)",
    "random": "tf.random.uniform([])",
    "randint": "tf.random.uniform(shape, low, high, dtype=tf.int32)",
    "shuffle": "tf.random.shuffle(x)",
    "permutation": "tf.random.shuffle(x)",
}


def _random_in_graph(scope: fx.Scope, effect: fx.Effect) -> str | None:
    """The TensorFlow draw for the user's own ``np.random.normal(0.0, 0.1)`` call, with its
    arguments: ``tf.random.normal([], 0.0, 0.1)``. Read from the function's source."""
    function = scope.function
    if function is None:
        return None
    try:
        source = textwrap.dedent(inspect.getsource(function))
        tree = ast.parse(source)
    except Exception:
        return None
    wanted = effect.detail.rsplit(".", 1)[-1]
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == wanted
        ):
            return tf_random_equivalent(wanted, node, source, function_globals(function))
    return None


def function_globals(function: object) -> dict[str, object]:
    """The function's globals, whose values' types ``_as_shape`` reads (nothing else)."""
    namespace = getattr(function, "__globals__", None)
    return namespace if type(namespace) is dict else {}


def _as_shape(size: str, namespace: dict[str, object]) -> str:
    """NumPy's ``size`` as a TensorFlow shape: an int (``3``, ``n_features``,
    ``x.shape[0]``, ``2 * k``) becomes ``[size]``, since TensorFlow reads a bare number as a
    shape of the wrong rank; a tuple or list, a ``.shape`` or ``tf.shape(...)`` stays."""
    try:
        node = ast.parse(size, mode="eval").body
    except SyntaxError:
        return size
    if isinstance(node, (ast.Tuple, ast.List)):
        return size
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return size
    if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "shape":
        return size
    if isinstance(node, ast.Name) and type(namespace.get(node.id)) in (tuple, list):
        return size
    return f"[{size}]"


def tf_random_equivalent(
    name: str,
    call: ast.Call,
    source: str,
    namespace: dict[str, object] | None = None,
    shape_of: str | None = None,
) -> str | None:
    """The ``tf.random`` draw for a NumPy (or Python ``random``) draw ``<name>(...)`` in
    ``source``, with the user's own arguments (``namespace``: what names in a size hold);
    None for a draw with no TensorFlow equivalent. Also used for ``Dataset.map`` functions
    (``symptoms/datasets.py``), which give ``shape_of`` (``tf.shape(x)``) for a sized draw
    added to a batched element: the written size would be one draw shared by its rows."""
    args = [ast.get_source_segment(source, a) or "" for a in call.args]
    keywords = {k.arg: ast.get_source_segment(source, k.value) or "" for k in call.keywords}

    def pick(index: int, key: str, default: str | None) -> str | None:
        if key in keywords:
            return keywords[key]
        return args[index] if index < len(args) else default

    def shape(size: str | None) -> str:
        if size is None:
            return "[]"  # NumPy without a size draws one number
        if shape_of is not None:
            return shape_of
        return _as_shape(size, namespace or {})

    if name == "normal":
        return (
            f"tf.random.normal({shape(pick(2, 'size', None))}, {pick(0, 'loc', '0.0')}, "
            f"{pick(1, 'scale', '1.0')})"
        )
    if name == "uniform":
        return (
            f"tf.random.uniform({shape(pick(2, 'size', None))}, {pick(0, 'low', '0.0')}, "
            f"{pick(1, 'high', '1.0')})"
        )
    if name in ("rand", "randn"):
        op = "uniform" if name == "rand" else "normal"
        return f"tf.random.{op}([{', '.join(args)}])"
    if name == "random" and not args:
        return "tf.random.uniform([])"
    if name in ("gauss", "normalvariate") and len(args) == 2:
        return f"tf.random.normal([], {args[0]}, {args[1]})"
    return None


def _call_example(owner: str, facts: fx.CodeFacts, instance_name: str | None = None) -> str:
    """``train_step(x, y)``; for a method ``counter(x)`` / ``counter.step(x)``."""
    short = owner.rsplit(".", 1)[-1]
    arguments = ", ".join(facts.parameters)
    if facts.self_name is None:
        return f"{short}({arguments})"
    obj = instance_name or "obj"
    return f"{obj}({arguments})" if short == "__call__" else f"{obj}.{short}({arguments})"


def side_effect_text(
    effect: fx.Effect,
    owner: str,
    facts: fx.CodeFacts,
    keras_step: bool,
    scope: fx.Scope,
    instance_name: str | None,
    call_text: str | None = None,
) -> str:
    label = effect.label
    only = "runs only while TensorFlow traces it, not on every call"
    if effect.action == fx.RANDOM:
        replacement = _random_in_graph(scope, effect) or _TF_RANDOM.get(
            effect.detail.rsplit(".", 1)[-1], "tf.random.uniform([])"
        )
        return (
            f"`{label}(...)` in `{owner}` {only}: it draws its numbers once, while tracing, "
            "and the graph keeps them as a constant, so every call gets the same values. Draw "
            f"inside the graph with TensorFlow's random ops instead: `{replacement}`."
        )
    if effect.action == fx.PRINT:
        return (
            f"`print(...)` in `{owner}` {only}: it prints once per trace (showing symbolic "
            "tensors, not values). Use `tf.print(...)` to print on every call."
        )
    if effect.action == fx.COUNTER:
        operator = effect.detail or "+="
        operand = effect.operand or "..."
        method = {"+=": "assign_add", "-=": "assign_sub"}.get(operator)
        _, current = scope.lookup(effect.scope, effect.name)
        start = "0" if type(current) is int else "0.0"
        update = (
            f"`{label}.{method}({operand})`"
            if method
            else f"`{label}.assign({label} {operator[:-1]} {operand})`"
        )
        if effect.scope == fx.SELF:
            where = f"`self.{effect.name} = tf.Variable({start})` in `__init__`"
        elif effect.scope == fx.CLOSURE:
            where = (
                f"`{label} = tf.Variable({start})` once in the enclosing function (then "
                f"`nonlocal {label}` is not needed)"
            )
        else:
            where = (
                f"`{label} = tf.Variable({start})` once, outside the function (then "
                f"`global {label}` is not needed)"
            )
        return (
            f"`{label} {operator} {operand}` in `{owner}` {only}: `{label}` counts traces, "
            f"not calls. Keep it in a variable: {where}, and inside {update}."
        )
    if effect.action in (fx.MUTATION, fx.SUBSCRIPT):
        what = (
            f"`{label}.{effect.detail}(...)`"
            if effect.action == fx.MUTATION
            else f"`{label}[...] = ...`"
        )
        changes = (
            f"`{label}` changes once per trace (and keeps symbolic tensors that hold no "
            "values), not once per call"
        )
        call = call_text or _call_example(owner, facts, instance_name)
        if keras_step:
            fix = (
                'Return the value in the logs instead (`return {"loss": loss}`): fit() '
                'averages it per epoch into `history.history["loss"]`; for one value per '
                "batch, read `logs` in a keras.callbacks.Callback's on_train_batch_end."
            )
        elif effect.action == fx.MUTATION and effect.detail in ("append", "extend"):
            target = f"{instance_name or 'obj'}.{effect.name}" if effect.scope == fx.SELF else label
            fix = (
                f"Return the value from `{owner}` and append it outside, after each call: "
                f"`{target}.append(float({call}))`, or collect values inside with a "
                "tf.TensorArray."
            )
        else:
            fix = (
                f"Return the value from `{owner}` and update `{label}` outside, after the "
                "call, or keep it in a tf.Variable."
            )
        return f"{what} in `{owner}` {only}: {changes}. {fix}"
    # A plain value assigned to an outer name.
    return (
        f"`{label} = ...` in `{owner}` {only}: `{label}` is set once per trace. Return the "
        f"value from `{owner}` and assign it outside, or keep it in a tf.Variable "
        f"(`{label}.assign(...)`)."
    )


def stale_text(
    owner: str,
    key: tuple[str, str],
    old: Any,
    new: Any,
    facts: fx.CodeFacts,
    signature: sig.Signature | None,
    instance_name: str | None,
    call_text: str | None = None,
) -> str:
    scope, name = key
    label = f"self.{name}" if scope == fx.SELF else name
    old_text, new_text = fx.value_text(old), fx.value_text(new)
    head = (
        f"`{owner}` still uses {label} = {old_text} from its trace; it is now {new_text}. "
        "Python values read while tracing become constants of the graph, and calls that "
        "reuse the trace do not see later changes."
    )
    parameters = list(facts.parameters)
    if type(new) in (int, float):
        dtype = tensor_dtype_for(signature, fx.value_text(new))
        if scope == fx.SELF:
            return (
                f"{head} Keep it in a variable: `self.{name} = tf.Variable({old_text})` in "
                f"`__init__`, then change it with "
                f"`{instance_name or 'obj'}.{name}.assign({new_text})`."
            )
        extra = f"tf.constant({name}, tf.{dtype})"
        if call_text is not None and call_text.endswith(")") and "\n" not in call_text:
            # The call as the cell wrote it, with the new argument last.
            empty = call_text.endswith("()")
            call = f"{call_text[:-1]}{'' if empty else ', '}{extra})"
        else:
            arguments = ", ".join([*parameters, extra])
            call = f"{owner.rsplit('.', 1)[-1]}({arguments})"
        return (
            f"{head} Pass it as an argument (add a `{name}` parameter and call "
            f"`{call}`), or keep it in a variable: `{name} = tf.Variable({old_text})`, "
            f"then `{name}.assign({new_text})`."
        )
    return (
        f"{head} Pass it as an argument instead (a Python {type(new).__name__} argument "
        "traces once per value, which suits a switch), or run the cell that defines "
        f"`{owner}` again after changing it."
    )
