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
(`random.random()`, `random.gauss(0, 1)`), or with a generator object of either
(`rng.beta(a, b)` with `rng = np.random.default_rng(7)`, `np.random.RandomState(0)`,
`random.Random(3)`; every binding of the name that reaches the draw makes one) in code that
runs while a `tf.function` traces: the body of a tf.function, a helper it calls, `call()` /
`train_step()` of a Keras layer or model that a compiled model traces, and the function (a
`def` or a `lambda`) given to a `tf.data` dataset's `map`, `filter` or `flat_map`. A
function only handed to `tf.numpy_function` or `tf.py_function` runs as Python on every
element and is not reported. Code under `if tf.executing_eagerly():` or
`with tf.init_scope():` runs eagerly and is not reported.

The fix swaps the draw for the TensorFlow op that draws the same distribution on every call:
`np.random.normal(loc, scale, size)` becomes `tf.random.normal(size, loc, scale)`,
`np.random.uniform(low, high, size)` becomes `tf.random.uniform(size, low, high)`,
`np.random.randn(a, b)` / `np.random.rand(a, b)` become `tf.random.normal((a, b))` /
`tf.random.uniform((a, b))`, and `random.random()` / `random.gauss(mu, sigma)` /
`random.uniform(a, b)` become the scalar draws. NumPy draws in float64, so the op is given
`dtype=tf.float64` unless the draw is cast to float32 on the spot (`.astype("float32")`,
which the fix then drops); Python's draws become float32 ops, as a Python float takes the
dtype of the tensor it meets. No fix is offered for other draws (`np.random.choice`,
`np.random.permutation`, `rng.beta`, `rng.integers`) or for arguments the op does not take;
the message then says to draw with a `tf.random` op (a `tf.random.Generator` made outside
the function, or a `tf.random.stateless_*` op given a seed, when the draws must repeat from
run to run) and, for `beta(a, b)`, which has no op of its own, gives it as two Gamma draws:
`g / (g + h)` with `g = tf.random.gamma([], a)` and `h = tf.random.gamma([], b)`. A
generator's methods take the module's parameters, so their fixes are the same.

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
Module 2, *NumPy in graphs* (`numpy-in-graphs`); for `Dataset.map` functions, Module 5,
*tf.data* (`tf-data`), shows a NumPy draw frozen by `map` beside a `tf.random` one.
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


# Constructors of random generator objects whose methods draw as the module's functions do.
_GENERATOR_CLASSES = {
    "numpy.random.default_rng": "numpy.random",
    "numpy.random.RandomState": "numpy.random",
    "numpy.random.Generator": "numpy.random",
    "random.Random": "random",
}


def check(ctx: RuleContext) -> Iterator[Finding]:
    roots = _random_roots(ctx)
    if not roots:
        return
    generators = _generator_names(ctx, roots)
    eager_spans = init_scope_spans(ctx)
    for scope, reach in ctx.traced_scopes().items():
        yield from _draws_in(ctx, scope, reach, roots, generators, eager_spans)


def _generator_names(ctx: RuleContext, roots: dict[str, str]) -> dict[str, str]:
    """Names the file binds to a NumPy or Python random generator (``rng =
    np.random.default_rng(7)``, ``gen = random.Random(0)``) -> the module whose draws its
    methods are (``numpy.random``, ``random``). Each use is resolved again in ``_draw_name``:
    a name is a generator only where every binding that reaches it makes one."""
    found: dict[str, str] = {}
    for binding in ctx.model.call_assignments:
        constructor = _generator_module(binding.value, roots)
        if constructor is not None:
            found[binding.name] = constructor
    return found


def _generator_module(value: ast.AST | None, roots: dict[str, str]) -> str | None:
    if not isinstance(value, ast.Call):
        return None
    dotted = dotted_parts(value.func)
    if dotted is None or dotted[0] not in roots:
        return None
    return _GENERATOR_CLASSES.get(".".join([roots[dotted[0]], *dotted[1]]))


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


def _draw_name(
    ctx: RuleContext, site: Site, roots: dict[str, str], generators: dict[str, str]
) -> str | None:
    """``numpy.random.normal`` or ``random.gauss`` for a call of a random draw, bound by an
    import the read really resolves to (a local ``random = ...`` is something else), or a
    method of a generator object every binding of its name makes (``rng.beta(...)`` with
    ``rng = np.random.default_rng(7)`` is ``numpy.random.beta``)."""
    call = site.node
    assert isinstance(call, ast.Call)
    dotted = dotted_parts(call.func)
    if dotted is None or (dotted[0] not in roots and dotted[0] not in generators):
        return None
    root, attrs = dotted
    resolution = ctx.bindings.names.resolve(
        site.scope, root, (call.func.lineno, call.func.col_offset), site.path
    )
    if resolution is None or not resolution.bindings:
        return None
    if root in generators and len(attrs) == 1:
        made = {
            _generator_module(binding.value, roots) if binding.kind == "assign" else None
            for binding in resolution.bindings
        }
        if len(made) != 1 or None in made:
            return None
        full = f"{made.pop()}.{attrs[0]}"
    elif root not in roots or any(binding.kind != "import" for binding in resolution.bindings):
        return None
    else:
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
    generators: dict[str, str],
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
        if type(root) is not ast.Name or (
            root.id not in roots  # type: ignore[attr-defined]
            and root.id not in generators  # type: ignore[attr-defined]
        ):
            continue
        if in_eager_only_branch(ctx.imports, site.path) or in_spans(call, eager_spans):
            continue
        full = _draw_name(ctx, site, roots, generators)
        if full is None:
            continue
        cast = casts.get(id(call))
        replacement = _replacement(ctx, call, full, cast)
        fix = None
        advice = (
            "draw with a `tf.random` op inside the function instead (for draws that repeat "
            "from run to run: a `tf.random.Generator` made outside it, or a "
            "`tf.random.stateless_*` op given a seed)"
        )
        recipe = _beta_recipe(ctx, call, full)
        if replacement is not None:
            target, text = replacement
            fix = Fix(f"Draw with `{text.split('(', 1)[0]}`", (ctx.replace(target, text),))
            advice = f"draw with `{text.split('(', 1)[0]}` instead"
        yield ctx.finding(
            CODE,
            call,
            f"{traced_code(reach, f'`{ctx.short(call)}`')} draws its numbers once, while "
            f"tracing: every call reuses the same values; {advice}, so each call gets new ones"
            + ("" if recipe is None else f" ({recipe})"),
            fix,
        )


def _beta_recipe(ctx: RuleContext, call: ast.Call, full: str) -> str | None:
    """A Beta draw has no ``tf.random`` op of its own: it is ``g / (g + h)`` of two Gamma
    draws, written with the call's own parameters (one number, as ``beta(a, b)`` without a
    size draws)."""
    if full != "numpy.random.beta" or len(call.args) != 2 or call.keywords:
        return None
    gamma = ctx.tf_ref("tf.random.gamma")
    if gamma is None:
        return None
    a, b = (ctx.text(argument) for argument in call.args)
    return f"a Beta draw is `g / (g + h)` with `g = {gamma}([], {a})` and `h = {gamma}([], {b})`"


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
