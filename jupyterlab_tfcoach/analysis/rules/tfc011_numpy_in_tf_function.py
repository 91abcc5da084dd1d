"""TFC011: ``.numpy()`` and NumPy functions on tensors inside a tf.function."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.model import Scope, Site
from jupyterlab_tfcoach.analysis.rules._common import (
    dotted_parts,
    in_eager_only_branch,
    in_spans,
    init_scope_spans,
    traced_code,
)
from jupyterlab_tfcoach.analysis.traced import TraceReach

CODE = "TFC011"
NAME = "numpy-in-tf-function"
SEVERITY = Severity.WARNING
SECTION = "numpy-in-graphs"

DOCS = """
## What it does
Flags `.numpy()` calls and NumPy functions on tensors that run while a `tf.function` traces.
Keras 3 code is traced too: `call()` of a layer and `call()` / `train_step()` / `test_step()` /
`predict_step()` of a model, when the file compiles a model without `run_eagerly=True` (its
`fit` runs them in a tf.function), and the function a `tf.data` dataset's `map` / `filter` /
`flat_map` gets. There `keras.ops.convert_to_numpy(x)` is flagged as `.numpy()` is.

`.numpy()` is reported in the function's body, in a function nested in it that the body calls,
and in a plain function the body calls by name (`helper(x)`, or `self.helper(x)` from a
tf.function method; one call deep). A nested function that is only handed to `tf.py_function` /
`tf.numpy_function` runs eagerly and is not reported, nor is code under
`if tf.executing_eagerly():` or `with tf.init_scope():` (both run eagerly).

In the same places it flags NumPy functions (`np.mean(x)`, `numpy.exp(x)`, or `mean(x)` after
`from numpy import mean`) called on a tf.function's parameter or on a value known to be a
tensor. A parameter with a Python constant as its default (`sigma=0.15`) is taken for that
Python value: `np.random.normal(0, sigma, size=x.shape)` gets no tensor and runs (it draws while
tracing only: TFC016 tells that). NumPy on Python constants (`np.float32(0.5)`, `np.arange(3)`)
is fine: it runs once while tracing and becomes a constant of the graph. A fix is offered where
a TensorFlow op means the same: `mean` / `sum` / `max` / `min` / `prod` become `tf.reduce_*`
(with at most `axis` and `keepdims`), `exp` / `sqrt` / `square` / `abs` / `tanh` / `maximum` /
`minimum` / `matmul` become the `tf.*` op, `log` becomes `tf.math.log` (TensorFlow 2 has no
`tf.log`), and `argmax` / `argmin` become `tf.argmax` / `tf.argmin` when an `axis` is given.

The fix is not offered (the finding stays, saying "use TensorFlow ops instead") for a NumPy
function without such an op (`np.std`), for `argmax` / `argmin` without an `axis` (NumPy
flattens the array first, TensorFlow reduces axis 0), for arguments TensorFlow's op does not
take (`dtype=`, `out=`), and for `mean` / `exp` / `log` / `sqrt` / `tanh` of an integer tensor
(NumPy computes those in floating point, TensorFlow keeps or rejects the integer dtype).

## Why is this bad?
While tracing, tensors are symbolic: they describe values the graph will compute later and
have no value yet. `.numpy()` on them raises
`AttributeError: 'SymbolicTensor' object has no attribute 'numpy'`, and NumPy functions
(which first turn their argument into an array) raise `NotImplementedError: Cannot convert a
symbolic tf.Tensor to a numpy array`. NumPy code in a graph must
be expressed with TensorFlow ops (or `tf.experimental.numpy`).

## Example
```python
@tf.function
def normalize(x):
    mean = x.numpy().mean()
    return (x - mean) / np.std(x)
```

With Keras 3, in a layer of a compiled model:
```python
class Standardize(keras.layers.Layer):
    def call(self, x):
        mean = keras.ops.convert_to_numpy(x).mean()
        return (x - mean) / np.std(x)
```

## Use instead
```python
@tf.function
def normalize(x):
    mean = tf.reduce_mean(x)
    return (x - mean) / tf.math.reduce_std(x)
```

```python
class Standardize(keras.layers.Layer):
    def call(self, x):
        return (x - keras.ops.mean(x)) / keras.ops.std(x)
```

## Course module
Module 2, *NumPy in graphs* (`numpy-in-graphs`).
"""


def check(ctx: RuleContext) -> Iterator[Finding]:
    yield from _numpy_function_findings(ctx)
    yield from _convert_to_numpy_findings(ctx)
    # ``with tf.init_scope():`` lifts its body out of the graph: values there are eager.
    eager_spans = init_scope_spans(ctx)
    for site in ctx.calls_named("numpy"):
        call = site.node
        assert isinstance(call, ast.Call)
        func = call.func
        if not isinstance(func, ast.Attribute) or func.attr != "numpy":
            continue
        if call.args or call.keywords or ctx.imports.resolve(func) is not None:
            continue  # ``tf.experimental.numpy`` and friends are modules, not tensors
        reach = ctx.trace_reach(site.scope)
        if reach is None or in_eager_only_branch(ctx.imports, site.path):
            continue
        if in_spans(call, eager_spans):
            continue
        where = traced_code(reach, f"`{ctx.short(call)}`")
        # The helper form needs the reason spelled out: it may also run eagerly elsewhere.
        when = ": graph" if reach.helper is None else " runs while tracing, where graph"
        yield ctx.finding(
            CODE,
            call,
            f"{where}{when} tensors have no value to convert; use TensorFlow ops instead",
        )


def _convert_to_numpy_findings(ctx: RuleContext) -> Iterator[Finding]:
    """``keras.ops.convert_to_numpy(x)`` (any alias, ``tf.keras`` too): Keras 3's
    ``.numpy()``, and as impossible on a symbolic tensor."""
    for site in ctx.calls_to("tf.keras.ops.convert_to_numpy"):
        reach = ctx.trace_reach(site.scope)
        if reach is None or in_eager_only_branch(ctx.imports, site.path):
            continue
        yield ctx.finding(
            CODE,
            site.node,
            f"{traced_code(reach, f'`{ctx.short(site.node)}`')} runs while tracing on a "
            "symbolic tensor and fails; use `keras.ops` functions on the tensor instead",
        )


# NumPy functions with a TensorFlow op of the same meaning: the op, the keywords both take
# alike, and how many leading positional arguments carry over (NumPy's next ones differ).
# Every op is a name TensorFlow 2 has (a test looks each up in the installed TensorFlow):
# ``np.log`` is ``tf.math.log``, TensorFlow 2 has no ``tf.log``.
_NUMPY_TO_TF: dict[str, tuple[str, frozenset[str], int]] = {
    **{
        name: (f"tf.reduce_{name}", frozenset({"axis", "keepdims"}), 2)
        for name in ("mean", "sum", "max", "min", "prod")
    },
    **{name: (f"tf.{name}", frozenset(), 1) for name in ("exp", "sqrt", "square", "abs")},
    "log": ("tf.math.log", frozenset(), 1),
    "tanh": ("tf.tanh", frozenset(), 1),
    "maximum": ("tf.maximum", frozenset(), 2),
    "minimum": ("tf.minimum", frozenset(), 2),
    "matmul": ("tf.matmul", frozenset(), 2),
    "argmax": ("tf.argmax", frozenset({"axis"}), 2),
    "argmin": ("tf.argmin", frozenset({"axis"}), 2),
}
# NumPy computes these in floating point whatever the input; the TensorFlow op keeps an
# integer tensor's dtype (or rejects it), so the fix is offered only for non-integer input.
_FLOAT_RESULT = frozenset({"mean", "exp", "log", "sqrt", "tanh"})


def _numpy_function(ctx: RuleContext, func: ast.expr, site: Site) -> str | None:
    """``np.mean`` (numpy under any alias) or ``mean`` from ``from numpy import mean``:
    the dotted name under numpy (``mean``, ``linalg.norm``); None for anything else."""
    parts = dotted_parts(func)
    if parts is None:
        return None
    root_id, attrs = parts
    resolution = ctx.bindings.names.resolve(
        site.scope, root_id, (func.lineno, func.col_offset), site.path
    )
    if resolution is None or not resolution.bindings:
        return None
    found: set[str] = set()
    for binding in resolution.bindings:
        statement = binding.node
        if binding.kind != "import":
            return None
        if isinstance(statement, ast.Import) and attrs:
            module = next(
                (a.name for a in statement.names if (a.asname or a.name) == root_id), None
            )
            if module != "numpy":
                return None
            found.add(".".join(attrs))
        elif isinstance(statement, ast.ImportFrom) and statement.module == "numpy":
            name = next((a.name for a in statement.names if (a.asname or a.name) == root_id), "")
            found.add(".".join([name, *attrs]))
        else:
            return None
    return found.pop() if len(found) == 1 else None


def _tensor_argument(
    ctx: RuleContext, argument: ast.expr, site: Site, reach: TraceReach, depth: int = 0
) -> bool:
    """A parameter of the tf.function itself (a tensor in practice), arithmetic on one
    (``logits / temperature``, directly or through a local name bound to it: an operator
    with a tensor operand gives a tensor), or a known tensor."""
    if depth <= _MAX_ARITHMETIC_DEPTH:
        if isinstance(argument, ast.BinOp):
            return _tensor_argument(ctx, argument.left, site, reach, depth + 1) or _tensor_argument(
                ctx, argument.right, site, reach, depth + 1
            )
        if isinstance(argument, ast.UnaryOp) and not isinstance(argument.op, ast.Not):
            return _tensor_argument(ctx, argument.operand, site, reach, depth + 1)
    if isinstance(argument, ast.Name):
        resolution = ctx.bindings.names.resolve(
            site.scope, argument.id, (argument.lineno, argument.col_offset), site.path
        )
        if (
            resolution is not None
            and resolution.owner is reach.function
            and argument.id != reach.function.self_name
            and resolution.bindings
        ):
            bindings = resolution.bindings
            if all(binding.kind == "param" for binding in bindings):
                # ``sigma=0.15``: a parameter with a Python default holds that Python value
                # in the calls that leave it out; NumPy on it never meets a tensor.
                return not any(
                    _python_default(reach.function.node, binding.node) for binding in bindings
                )
            if depth < _MAX_ARITHMETIC_DEPTH and all(
                binding.kind == "assign"
                and isinstance(binding.value, (ast.BinOp, ast.UnaryOp))
                and _tensor_argument(ctx, binding.value, site, reach, depth + 1)
                for binding in bindings
            ):
                return True
    return ctx.value(argument, site).is_tensor_like


def _python_default(function: ast.AST, parameter: ast.AST) -> bool:
    """Whether ``parameter`` (an ``ast.arg`` of ``function``) has a Python constant as its
    default (``0.15``, ``-1``, ``(3, 3)``, ``None``, ``"same"``)."""
    arguments = getattr(function, "args", None)
    if not isinstance(arguments, ast.arguments):
        return False
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults))
    pairs = [
        *zip(positional, [*defaults, *arguments.defaults], strict=False),
        *zip(arguments.kwonlyargs, arguments.kw_defaults, strict=False),
    ]
    default = next((d for a, d in pairs if a is parameter), None)
    return default is not None and _constant(default)


def _constant(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return _constant(node.operand)
    if isinstance(node, ast.Tuple | ast.List):
        return all(_constant(element) for element in node.elts)
    return False


# How far ``_tensor_argument`` follows operators and local names (``e = exp(z)`` with
# ``z = (x - m) / t``): a few steps cover what learners write, and bound the work per call.
_MAX_ARITHMETIC_DEPTH = 4


def _numpy_fix(ctx: RuleContext, call: ast.Call, name: str, site: Site) -> tuple[str, Fix] | None:
    """The TensorFlow op to call instead, and the fix that swaps it in."""
    entry = _NUMPY_TO_TF.get(name)
    if entry is None:
        return None
    canonical, keywords, positions = entry
    if len(call.args) > positions or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    if any(k.arg not in keywords for k in call.keywords):
        return None  # ``dtype=``, ``out=``, ``**kw``: no TensorFlow counterpart
    if name in ("argmax", "argmin") and len(call.args) < 2 and not call.keywords:
        return None  # no axis: NumPy flattens, TensorFlow reduces axis 0
    if name in _FLOAT_RESULT:
        dtype = ctx.value(call.args[0], site).dtype if call.args else None
        if dtype is not None and not dtype.startswith(("float", "bfloat", "complex")):
            return None
    reference = ctx.tf_ref(canonical)
    if reference is None:
        return None
    return reference, Fix(f"Replace with `{reference}`", (ctx.replace(call.func, reference),))


def _numpy_import_names(ctx: RuleContext) -> frozenset[str]:
    """Names the file binds by importing numpy or something from it (``np``, ``mean``)."""
    names: set[str] = set()
    for statement in ctx.model.import_statements:
        if isinstance(statement, ast.ImportFrom):
            module = statement.module or ""
            if not statement.level and (module == "numpy" or module.startswith("numpy.")):
                names.update(alias.asname or alias.name for alias in statement.names)
            continue
        for alias in statement.names:
            if alias.name == "numpy" or alias.name.startswith("numpy."):
                names.add(alias.asname or alias.name.split(".", 1)[0])
    return frozenset(names)


def _numpy_function_findings(ctx: RuleContext) -> Iterator[Finding]:
    numpy_names = _numpy_import_names(ctx)
    if not numpy_names:
        return
    for scope, reach in ctx.traced_scopes().items():
        yield from _numpy_calls_in(ctx, scope, reach, numpy_names)


def _numpy_calls_in(
    ctx: RuleContext, scope: Scope, reach: TraceReach, numpy_names: frozenset[str]
) -> Iterator[Finding]:
    for site in scope.calls:
        call = site.node
        assert isinstance(call, ast.Call)
        # Cheap test first (most calls are not NumPy's): the callee's root name.
        root = call.func
        while type(root) is ast.Attribute:
            root = root.value  # type: ignore[attr-defined]
        if not call.args or type(root) is not ast.Name or root.id not in numpy_names:  # type: ignore[attr-defined]
            continue
        if in_eager_only_branch(ctx.imports, site.path):
            continue
        name = _numpy_function(ctx, call.func, site)
        if name is None:
            continue
        if not any(
            not isinstance(a, ast.Starred) and _tensor_argument(ctx, a, site, reach)
            for a in call.args
        ):
            continue
        replacement = _numpy_fix(ctx, call, name, site)
        fix = None
        advice = "use TensorFlow ops instead"
        if replacement is not None:
            reference, fix = replacement
            advice = f"use `{reference}`"
        yield ctx.finding(
            CODE,
            call,
            f"{traced_code(reach, f'`{ctx.short(call)}`')} runs while tracing on a symbolic "
            f"tensor and fails; {advice}",
            fix,
        )
