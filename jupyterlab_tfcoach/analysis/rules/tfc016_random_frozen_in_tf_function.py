"""TFC016: a NumPy or Python ``random`` draw inside traced code, frozen at trace time."""

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

CODE = "TFC016"
NAME = "random-frozen-in-tf-function"
SEVERITY = Severity.WARNING
SECTION = "numpy-in-graphs"

DOCS = """
## What it does
Flags random numbers drawn with NumPy (`np.random.normal(...)`, `np.random.rand(...)`,
`normal(...)` after `from numpy.random import normal`) or with Python's `random` module
(`random.random()`, `random.gauss(0, 1)`) in code that runs while a `tf.function` traces:
the body of a tf.function, a helper it calls, `call()` / `train_step()` of a Keras layer or
model that a compiled model traces, and a `tf.data` `map` function. Code under
`if tf.executing_eagerly():` or `with tf.init_scope():` runs eagerly and is not reported.

The fix swaps the draw for the TensorFlow op that draws the same distribution on every call:
`np.random.normal(loc, scale, size)` becomes `tf.random.normal(size, loc, scale)`,
`np.random.uniform(low, high, size)` becomes `tf.random.uniform(size, low, high)`,
`np.random.randn(a, b)` / `np.random.rand(a, b)` become `tf.random.normal((a, b))` /
`tf.random.uniform((a, b))`, and `random.random()` / `random.gauss(mu, sigma)` /
`random.uniform(a, b)` become the scalar draws. NumPy draws in float64, so the op is given
`dtype=tf.float64` unless the draw is cast to float32 on the spot (`.astype("float32")`,
which the fix then drops); Python's draws become float32 ops, as a Python float takes the
dtype of the tensor it meets. No fix is offered for other draws (`np.random.choice`,
`np.random.permutation`, a seeded `np.random.default_rng()` generator's methods are not
recognised) or for arguments the op does not take.

## Why is this bad?
A tf.function runs its Python code only while it traces. A NumPy or Python draw is Python
code, not an op: it runs once, during the trace, and its numbers are stored in the graph as a
constant. Every later call replays the same "random" values: the noise of a GAN's generator,
a dropout mask or an exploration step is the same on every step, and nothing raises. A
`tf.random` op is part of the graph and draws new numbers on every call.

## Example
```python
@tf.function
def noisy_step(x):
    noise = np.random.normal(0.0, 0.1, size=(8, 4)).astype("float32")
    return x + noise
```

## Use instead
```python
@tf.function
def noisy_step(x):
    noise = tf.random.normal((8, 4), 0.0, 0.1)
    return x + noise
```

## Course module
Module 2, *NumPy in graphs* (`numpy-in-graphs`).
"""

# A draw's name -> the tf.random op, the NumPy parameters in order mapped to the op's
# (``shape`` is the op's first argument; ``dims`` means the draw takes sizes as separate
# positional arguments, as ``randn(a, b)`` does).
_NUMPY_DRAWS: dict[str, tuple[str, tuple[str, ...], dict[str, str]]] = {
    "normal": ("normal", ("loc", "scale", "size"), {"loc": "mean", "scale": "stddev"}),
    "uniform": ("uniform", ("low", "high", "size"), {"low": "minval", "high": "maxval"}),
    "standard_normal": ("normal", ("size",), {}),
    "random": ("uniform", ("size",), {}),
    "random_sample": ("uniform", ("size",), {}),
    "rand": ("uniform", ("dims",), {}),
    "randn": ("normal", ("dims",), {}),
}
# NumPy random functions the rule reports without a fix.
_NUMPY_OTHER = frozenset(
    {"randint", "choice", "permutation", "shuffle", "binomial", "poisson", "beta", "gamma"}
    | {"exponential", "laplace", "lognormal", "multinomial", "bernoulli", "integers"}
)
# Python's ``random`` module: scalar draws, parameters in order mapped to the op's.
_PYTHON_DRAWS: dict[str, tuple[str, tuple[str, ...]]] = {
    "random": ("uniform", ()),
    "uniform": ("uniform", ("minval", "maxval")),
    "gauss": ("normal", ("mean", "stddev")),
    "normalvariate": ("normal", ("mean", "stddev")),
}
_PYTHON_OTHER = frozenset({"randint", "choice", "shuffle", "sample", "randrange"})


def check(ctx: RuleContext) -> Iterator[Finding]:
    roots = _random_roots(ctx)
    if not roots:
        return
    eager_spans = init_scope_spans(ctx)
    for scope, reach in ctx.traced_scopes().items():
        yield from _draws_in(ctx, scope, reach, roots, eager_spans)


def _random_roots(ctx: RuleContext) -> dict[str, str]:
    """Names the file binds to a random module or draw: ``np`` -> ``numpy``, ``npr`` ->
    ``numpy.random``, ``random`` -> ``random``, ``normal`` -> ``numpy.random.normal``."""
    roots: dict[str, str] = {}
    for statement in ctx.model.import_statements:
        if isinstance(statement, ast.ImportFrom):
            module = statement.module or ""
            if statement.level:
                continue
            for alias in statement.names:
                bound = alias.asname or alias.name
                if module == "numpy" and alias.name == "random":
                    roots[bound] = "numpy.random"
                elif module in ("numpy.random", "random"):
                    roots[bound] = f"{module}.{alias.name}"
            continue
        for alias in statement.names:
            if alias.name in ("numpy", "numpy.random", "random"):
                if alias.asname:
                    roots[alias.asname] = alias.name
                else:
                    roots[alias.name.split(".", 1)[0]] = alias.name.split(".", 1)[0]
    return roots


def _draw_name(ctx: RuleContext, site: Site, roots: dict[str, str]) -> str | None:
    """``numpy.random.normal`` or ``random.gauss`` for a call of a random draw, bound by an
    import the read really resolves to (a local ``random = ...`` is something else)."""
    call = site.node
    assert isinstance(call, ast.Call)
    dotted = dotted_parts(call.func)
    if dotted is None or dotted[0] not in roots:
        return None
    root, attrs = dotted
    resolution = ctx.bindings.names.resolve(
        site.scope, root, (call.func.lineno, call.func.col_offset), site.path
    )
    if resolution is None or not resolution.bindings:
        return None
    if any(binding.kind != "import" for binding in resolution.bindings):
        return None
    full = ".".join([roots[root], *attrs])
    if full.startswith("numpy.random.") and full.count(".") == 2:
        name = full.rsplit(".", 1)[1]
        return full if name in _NUMPY_DRAWS or name in _NUMPY_OTHER else None
    if full.startswith("random.") and full.count(".") == 1:
        name = full.rsplit(".", 1)[1]
        return full if name in _PYTHON_DRAWS or name in _PYTHON_OTHER else None
    return None


def _draws_in(
    ctx: RuleContext,
    scope: Scope,
    reach: TraceReach,
    roots: dict[str, str],
    eager_spans: list[tuple[int, int]],
) -> Iterator[Finding]:
    # ``np.random.normal(...).astype("float32")``: the cast the fix replaces with the op.
    casts: dict[int, ast.Call] = {}
    for site in scope.calls:
        call = site.node
        assert isinstance(call, ast.Call)
        func = call.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "astype"
            and isinstance(func.value, ast.Call)
        ):
            casts[id(func.value)] = call
    for site in scope.calls:
        call = site.node
        assert isinstance(call, ast.Call)
        root = call.func
        while type(root) is ast.Attribute:
            root = root.value  # type: ignore[attr-defined]
        if type(root) is not ast.Name or root.id not in roots:  # type: ignore[attr-defined]
            continue
        if in_eager_only_branch(ctx.imports, site.path) or in_spans(call, eager_spans):
            continue
        full = _draw_name(ctx, site, roots)
        if full is None:
            continue
        cast = casts.get(id(call))
        replacement = _replacement(ctx, call, full, cast)
        fix = None
        advice = "draw with a `tf.random` op inside the function instead"
        if replacement is not None:
            target, text = replacement
            fix = Fix(f"Draw with `{text.split('(', 1)[0]}`", (ctx.replace(target, text),))
            advice = f"draw with `{text.split('(', 1)[0]}` instead"
        yield ctx.finding(
            CODE,
            call,
            f"{traced_code(reach, f'`{ctx.short(call)}`')} draws its numbers once, while "
            f"tracing: every call reuses the same values; {advice}, so each call gets new ones",
            fix,
        )


def _float32_cast(cast: ast.Call | None) -> bool:
    if cast is None or len(cast.args) != 1 or cast.keywords:
        return False
    argument = cast.args[0]
    if isinstance(argument, ast.Constant):
        return argument.value == "float32"
    dotted = dotted_parts(argument)
    return dotted is not None and dotted[1] == ["float32"]


def _replacement(
    ctx: RuleContext, call: ast.Call, full: str, cast: ast.Call | None
) -> tuple[ast.AST, str] | None:
    """The node to replace and the ``tf.random`` call that draws on every call."""
    name = full.rsplit(".", 1)[1]
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None
    arguments: list[str] = []
    if full.startswith("numpy.random."):
        if name not in _NUMPY_DRAWS:
            return None
        op, parameters, renamed = _NUMPY_DRAWS[name]
        if parameters == ("dims",):
            if call.keywords:
                return None
            sizes = [ctx.text(a) for a in call.args]
            shape = "[]" if not sizes else f"({', '.join(sizes)}{',' if len(sizes) == 1 else ''})"
            arguments.append(shape)
        else:
            if len(call.args) > len(parameters):
                return None
            given = dict(zip(parameters, call.args, strict=False))
            for keyword in call.keywords:
                if keyword.arg not in parameters or keyword.arg in given:
                    return None
                given[keyword.arg] = keyword.value
            size = given.pop("size", None)
            arguments.append("[]" if size is None else ctx.text(size))
            arguments.extend(f"{renamed[p]}={ctx.text(v)}" for p, v in given.items())
    else:
        if name not in _PYTHON_DRAWS or call.keywords:
            return None
        op, parameters = _PYTHON_DRAWS[name]
        if len(call.args) != len(parameters):
            return None
        arguments.append("[]")
        arguments.extend(f"{p}={ctx.text(v)}" for p, v in zip(parameters, call.args, strict=True))
    reference = ctx.tf_ref(f"tf.random.{op}")
    if reference is None:
        return None
    target: ast.AST = call
    if _float32_cast(cast):
        assert cast is not None
        target = cast
    elif full.startswith("numpy.random."):
        # A Python float mixes with any float tensor; a NumPy array is float64.
        float64 = ctx.tf_ref("tf.float64")
        if float64 is None:
            return None
        arguments.append(f"dtype={float64}")
    return target, f"{reference}({', '.join(arguments)})"
