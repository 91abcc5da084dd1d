"""TFC018: probabilities (a softmax or sigmoid output) passed where a call takes logits."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis import arguments
from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.model import Site

CODE = "TFC018"
NAME = "probabilities-as-logits"
SEVERITY = Severity.WARNING
SECTION = "from-logits"

DOCS = """
## What it does
Flags a softmax or sigmoid output (`tf.nn.softmax(z)`, `tf.sigmoid(z)`, `keras.ops.softmax(z)`,
... written in the call or bound to a name by one assignment) passed where the call takes
logits, the raw scores before any activation:
- the first argument of `tf.random.categorical`;
- `logits` of `tf.nn.softmax_cross_entropy_with_logits`,
  `tf.nn.sparse_softmax_cross_entropy_with_logits`, `tf.nn.sigmoid_cross_entropy_with_logits`
  and `tf.nn.weighted_cross_entropy_with_logits`;
- the predictions given to a Keras cross-entropy made with `from_logits=True`: a loss object
  (`loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)`, then
  `loss_fn(y, probs)`) or a loss function called with `from_logits=True`.

The fix passes the scores the softmax or sigmoid was given, when the call can name them: the
activation written in the call (`tf.random.categorical(tf.nn.softmax(z), 1)` becomes
`tf.random.categorical(z, 1)`), or a name bound to it whose argument is a name that still holds
the same value where the probabilities are used. For `tf.random.categorical` it otherwise
takes their logarithm, `tf.math.log(probs)`, which draws from the same distribution.

## Why is this bad?
A logits parameter applies the softmax (or sigmoid) itself. Given probabilities, it applies it
a second time: the values in [0, 1] are squashed towards a uniform distribution, so
`tf.random.categorical` samples almost at random whatever the model prefers, and a loss
computes the cross-entropy of the wrong distribution, whose gradients are small and point the
wrong way. Nothing raises, the numbers look plausible, and training learns slowly or not at
all.

## Example
```python
probs = tf.nn.softmax(policy(states))
actions = tf.random.categorical(probs, 1)
```

## Use instead
```python
logits = policy(states)
actions = tf.random.categorical(logits, 1)
```

## Course module
Module 6, *Probabilities or raw scores: from_logits* (`from-logits`).
"""

_ACTIVATIONS = frozenset(
    {
        "tf.nn.softmax",
        "tf.math.softmax",
        "tf.keras.activations.softmax",
        "tf.keras.ops.softmax",
        "tf.nn.sigmoid",
        "tf.math.sigmoid",
        "tf.sigmoid",
        "tf.keras.activations.sigmoid",
        "tf.keras.ops.sigmoid",
    }
)
# Calls that take logits: canonical name -> (position, keyword) of the logits argument.
_LOGITS_CALLS: dict[str, tuple[int | None, str]] = {
    "tf.random.categorical": (0, "logits"),
    "tf.nn.softmax_cross_entropy_with_logits": (None, "logits"),
    "tf.nn.sparse_softmax_cross_entropy_with_logits": (None, "logits"),
    "tf.nn.sigmoid_cross_entropy_with_logits": (None, "logits"),
    "tf.nn.weighted_cross_entropy_with_logits": (None, "logits"),
}
_LOSS_FUNCTIONS = frozenset(
    f"tf.keras.losses.{name}"
    for name in (
        "categorical_crossentropy",
        "sparse_categorical_crossentropy",
        "binary_crossentropy",
        "binary_focal_crossentropy",
        "categorical_focal_crossentropy",
    )
)
_LOSS_CLASSES = frozenset(
    f"tf.keras.losses.{name}"
    for name in (
        "CategoricalCrossentropy",
        "SparseCategoricalCrossentropy",
        "BinaryCrossentropy",
        "BinaryFocalCrossentropy",
        "CategoricalFocalCrossentropy",
    )
)


def check(ctx: RuleContext) -> Iterator[Finding]:
    for canonical, (position, name) in _LOGITS_CALLS.items():
        for site in ctx.calls_to(canonical):
            call = site.node
            assert isinstance(call, ast.Call)
            operand = arguments.keyword(call, name)
            if operand is None and position is not None:
                operand = arguments.positional(call, position)
            if operand is not None:
                yield from _report(ctx, site, operand, f"`{ctx.short(call.func)}`")
    for canonical in _LOSS_FUNCTIONS:
        for site in ctx.calls_to(canonical):
            call = site.node
            assert isinstance(call, ast.Call)
            if not _from_logits(call):
                continue
            operand = arguments.keyword(call, "y_pred") or arguments.positional(call, 1)
            if operand is not None:
                yield from _report(ctx, site, operand, f"`{ctx.short(call.func)}`")
    yield from _loss_object_calls(ctx)


def _from_logits(call: ast.Call) -> bool:
    flag = arguments.keyword(call, "from_logits")
    return isinstance(flag, ast.Constant) and flag.value is True


def _loss_object_calls(ctx: RuleContext) -> Iterator[Finding]:
    """``loss_fn(y, probs)`` where ``loss_fn`` is only ever a cross-entropy object made with
    ``from_logits=True``."""
    for canonical in _LOSS_CLASSES:
        for made in ctx.calls_to(canonical):
            call = made.node
            assert isinstance(call, ast.Call)
            if not _from_logits(call):
                continue
            for binding in made.scope.bindings.values():
                for bound in binding:
                    if bound.kind != "assign" or bound.value is not call:
                        continue
                    for use in ctx.calls_named(bound.name):
                        func = use.node.func  # type: ignore[attr-defined]
                        if not isinstance(func, ast.Name) or func.id != bound.name:
                            continue
                        resolution = ctx.bindings.names.resolve(
                            use.scope, func.id, (func.lineno, func.col_offset), use.path
                        )
                        if resolution is None or list(resolution.bindings) != [bound]:
                            continue
                        operand = arguments.keyword(use.node, "y_pred") or arguments.positional(  # type: ignore[arg-type]
                            use.node,  # type: ignore[arg-type]
                            1,
                        )
                        if operand is not None:
                            label = f"`{bound.name}` (made with `from_logits=True`)"
                            yield from _report(ctx, use, operand, label)


def _activation_of(ctx: RuleContext, node: ast.expr, site: Site) -> tuple[ast.Call, bool] | None:
    """The softmax/sigmoid call ``node`` is, or the one its name is bound to by its only
    assignment; and whether it is written in place (True) or reached through the name."""
    if isinstance(node, ast.Call) and ctx.imports.resolve(node.func) in _ACTIVATIONS:
        return node, True
    if not isinstance(node, ast.Name):
        return None
    resolution = ctx.bindings.names.resolve(
        site.scope, node.id, (node.lineno, node.col_offset), site.path
    )
    if resolution is None or len(resolution.bindings) != 1:
        return None
    [binding] = resolution.bindings
    value = binding.value
    if (
        binding.kind == "assign"
        and isinstance(value, ast.Call)
        and isinstance(getattr(binding, "target", None), ast.Name)
        and ctx.imports.resolve(value.func) in _ACTIVATIONS
    ):
        return value, False
    return None


def _report(ctx: RuleContext, site: Site, operand: ast.expr, label: str) -> Iterator[Finding]:
    found = _activation_of(ctx, operand, site)
    if found is None:
        return
    activation, in_place = found
    kind = ctx.short(activation.func)
    again = (
        "a sigmoid" if "sigmoid" in (ctx.imports.resolve(activation.func) or "") else "a softmax"
    )
    what = f"`{ctx.short(operand)}`" + ("" if in_place else f" (from `{kind}(...)`)")
    fix = _fix(ctx, site, operand, activation, in_place, label == "`tf.random.categorical`")
    yield ctx.finding(
        CODE,
        operand,
        f"{what} holds probabilities, but {label} takes logits (raw scores) and applies "
        f"{again} to them again, so it works on a flattened distribution and nothing raises; "
        "pass the scores before the activation",
        fix,
    )


def _same_value_at(
    ctx: RuleContext, scores: ast.expr, activation: ast.Call, operand: ast.expr, site: Site
) -> bool:
    """Whether the name ``scores`` holds, where the probabilities are used, the value the
    activation was given: the same bindings reach both places."""
    if not isinstance(scores, ast.Name):
        return False
    canonical = ctx.imports.resolve(activation.func)
    made = next((s for s in ctx.calls_to(canonical or "") if s.node is activation), None)
    if made is None:
        return False
    names = ctx.bindings.names
    there = names.resolve(made.scope, scores.id, (scores.lineno, scores.col_offset), made.path)
    here = names.resolve(site.scope, scores.id, (operand.lineno, operand.col_offset), site.path)
    return (
        there is not None
        and here is not None
        and bool(there.bindings)
        and list(there.bindings) == list(here.bindings)
    )


def _fix(
    ctx: RuleContext,
    site: Site,
    operand: ast.expr,
    activation: ast.Call,
    in_place: bool,
    samples: bool,
) -> Fix | None:
    scores = arguments.positional(activation, 0)
    if scores is None or len(activation.args) != 1 or activation.keywords:
        return None  # ``softmax(z, axis=0)``: the scores alone do not mean the same
    if in_place or _same_value_at(ctx, scores, activation, operand, site):
        text = ctx.text(scores)
        return Fix(f"Pass `{shorten(text)}`, the scores", (ctx.replace(operand, text),))
    if samples:
        # The log of the probabilities is a set of logits of the same distribution.
        log = ctx.tf_ref("tf.math.log")
        if log is not None:
            text = f"{log}({ctx.text(operand)})"
            return Fix(f"Pass `{shorten(text)}`", (ctx.replace(operand, text),))
    return None


def shorten(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."
