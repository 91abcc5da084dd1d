"""TFC018: probabilities (a softmax or sigmoid output) passed where a call takes logits."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis import arguments
from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.model import Binding, Site
from jupyterlab_tfcoach.analysis.rules._common import own_nodes
from jupyterlab_tfcoach.analysis.values import FUNCTION

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
  `loss_fn(y, probs)`) or a loss function called with `from_logits=True`;
- a Keras model whose last layer outputs probabilities, compiled with a cross-entropy object
  made with `from_logits=True` (written in the `compile` call or bound to a name). The last
  layer is `Dense(..., activation="softmax")` (or `"sigmoid"`, or `activation=tf.nn.softmax`,
  `keras.activations.softmax`, ...), `layers.Softmax()` or `layers.Activation("softmax")`:
  the last item of a `Sequential([...])` list, the last `model.add(...)` before the
  `compile`, the layer that makes a functional model's `outputs`, also in a model the
  learner's own function returns. The model and its `compile` must both be in the analysed
  source.

For a compiled model, TensorFlow's Keras notices the activation when the loss is computed
in `fit` or `evaluate`: it takes the scores from before it and warns that the output "does
not represent logits". Training is then right only by that repair; the same loss given the
model's probabilities any other way (`model.predict(x)`, saved predictions) applies the
activation a second time. The fix sets `from_logits=False`, which states what the model
outputs: its predictions stay probabilities, as the learner chose, and every other use of
them is unchanged (dropping the activation would turn `predict`'s output into scores for all
the code that reads it). It is offered when the loss is written in the `compile` call or its
name is read nowhere else (another model may share the object); the message also names the
other way, dropping the activation and keeping `from_logits=True`.

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
    yield from _compiled_models(ctx)


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


def _only_binding(ctx: RuleContext, name: ast.Name, site: Site) -> Binding | None:
    """The one binding ``name`` can hold where it is read, or None when it may hold more."""
    resolution = ctx.bindings.names.resolve(
        site.scope, name.id, (name.lineno, name.col_offset), site.path
    )
    if resolution is None or len(resolution.bindings) != 1:
        return None
    return resolution.bindings[0]


def _only_assignment(
    ctx: RuleContext, name: ast.Name, site: Site
) -> tuple[Binding, ast.expr, Site] | None:
    """The one assignment ``name`` can hold where it is read: the binding, its value and the
    value's site."""
    binding = _only_binding(ctx, name, site)
    if binding is None or binding.kind != "assign" or binding.value is None:
        return None
    return binding, binding.value, Site(binding.value, binding.value_scope, binding.path)


def _activation_of(ctx: RuleContext, node: ast.expr, site: Site) -> tuple[ast.Call, bool] | None:
    """The softmax/sigmoid call ``node`` is, or the one its name is bound to by its only
    assignment; and whether it is written in place (True) or reached through the name."""
    if isinstance(node, ast.Call) and ctx.imports.resolve(node.func) in _ACTIVATIONS:
        return node, True
    if not isinstance(node, ast.Name):
        return None
    binding = _only_binding(ctx, node, site)
    if binding is None:
        return None
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


# A model whose last layer outputs probabilities, compiled with a loss that takes logits.
_SEQUENTIAL = frozenset({"tf.keras.Sequential", "tf.keras.models.Sequential"})
_FUNCTIONAL = frozenset({"tf.keras.Model", "tf.keras.models.Model"})
_ACTIVATION_NAMES = {"softmax": "a softmax", "sigmoid": "a sigmoid"}
# How deep a model is followed through names and the learner's functions: a bound.
_MAX_MODEL_DEPTH = 6


def _compiled_models(ctx: RuleContext) -> Iterator[Finding]:
    """``m.compile(loss=keras.losses.CategoricalCrossentropy(from_logits=True))`` where
    ``m``'s last layer ends in a softmax or a sigmoid, both written in the analysed source."""
    for site in ctx.calls_named("compile"):
        call = site.node
        assert isinstance(call, ast.Call)
        func = call.func
        if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
            continue
        loss = arguments.keyword(call, "loss") or arguments.positional(call, 1)
        if loss is None:
            continue
        made = _logits_loss(ctx, loss, site)
        if made is None:
            continue
        loss_call, flag = made
        last = _last_layer(ctx, func.value, site, 0)
        if last is None:
            continue
        layer, activation = last
        model = func.value.id
        fix = None
        if _only_use_of(ctx, loss, site):
            fix = Fix(
                "Set `from_logits=False`: the model outputs probabilities",
                (ctx.replace(flag, "False"),),
            )
        yield ctx.finding(
            CODE,
            flag,
            f"the last layer of `{model}`, `{_layer_text(ctx, layer)}`, outputs probabilities "
            f"({activation}), but its loss `{ctx.short(loss_call.func)}(from_logits=True)` "
            "is told they are logits (raw scores): TensorFlow's Keras spots the activation, "
            'takes the scores before it and warns that the output "does not represent '
            'logits", so training is right only by that repair, and the same loss given '
            f"other probabilities (`{model}.predict(x)`) applies {activation} to them again; "
            "set `from_logits=False`, or drop the activation from the last layer and keep "
            "`from_logits=True`",
            fix,
        )


def _layer_text(ctx: RuleContext, layer: ast.Call) -> str:
    """``keras.layers.Dense(..., activation="softmax")``: the layer and its activation, the
    other arguments left out when the whole call is long."""
    text = ctx.text(layer)
    activation = arguments.keyword(layer, "activation")
    if len(text) <= 50 or activation is None:
        return ctx.short(layer, 50)
    return f"{ctx.short(layer.func)}(..., activation={ctx.short(activation, 30)})"


def _logits_loss(ctx: RuleContext, loss: ast.expr, site: Site) -> tuple[ast.Call, ast.expr] | None:
    """The cross-entropy object made with ``from_logits=True`` that ``loss`` is (in place,
    or a name every binding of which makes one), with its ``True``."""
    made: ast.expr | None = loss
    if isinstance(loss, ast.Name):
        binding = _only_binding(ctx, loss, site)
        if binding is None:
            return None
        made = binding.value if binding.kind == "assign" else None
    if not isinstance(made, ast.Call) or ctx.imports.resolve(made.func) not in _LOSS_CLASSES:
        return None
    flag = arguments.keyword(made, "from_logits")
    if not (isinstance(flag, ast.Constant) and flag.value is True):
        return None
    return made, flag


def _only_use_of(ctx: RuleContext, loss: ast.expr, site: Site) -> bool:
    """Whether changing the loss changes nothing else: it is written in the ``compile``
    call, or its name is read nowhere else (another model may share the object)."""
    if not isinstance(loss, ast.Name):
        return True
    reads = [
        node
        for node in ast.walk(ctx.model.tree)
        if isinstance(node, ast.Name) and node.id == loss.id and isinstance(node.ctx, ast.Load)
    ]
    return reads == [loss]


def _last_layer(
    ctx: RuleContext, model: ast.expr, site: Site, depth: int
) -> tuple[ast.Call, str] | None:
    """The layer call that makes the model's output, when it applies a softmax or a
    sigmoid: with the activation's name in words (``a softmax``)."""
    if depth > _MAX_MODEL_DEPTH:
        return None
    if isinstance(model, ast.Name):
        assigned = _only_assignment(ctx, model, site)
        if assigned is None:
            return None
        binding, value, made = assigned
        found = _last_layer(ctx, value, made, depth + 1)
        if found is None and _makes_sequential(ctx, value):
            added = _last_added(ctx, binding, site)
            return _probability_layer(ctx, added, made) if added is not None else None
        return found
    if not isinstance(model, ast.Call):
        return None
    canonical = ctx.imports.resolve(model.func)
    if canonical in _SEQUENTIAL:
        layers = arguments.keyword(model, "layers") or arguments.positional(model, 0)
        if isinstance(layers, (ast.List, ast.Tuple)) and layers.elts:
            last = layers.elts[-1]
            return _probability_layer(ctx, last, site) if isinstance(last, ast.Call) else None
        return None
    if canonical in _FUNCTIONAL:
        outputs = arguments.keyword(model, "outputs") or arguments.positional(model, 1)
        return _output_layer(ctx, outputs, site, depth + 1) if outputs is not None else None
    if isinstance(model.func, ast.Name) and ctx.value(model.func, site).kind == FUNCTION:
        # ``make_model()``: the model the learner's function returns, from its one return.
        function = ctx.value(model.func, site).node
        scope = next((s for s in ctx.model.scopes if s.node is function), None)
        if function is None or scope is None:
            return None
        returns = [
            node.value
            for node in own_nodes(function)
            if isinstance(node, ast.Return) and node.value is not None
        ]
        if len(returns) != 1:
            return None
        return _last_layer(ctx, returns[0], Site(returns[0], scope, ()), depth + 1)
    return None


def _makes_sequential(ctx: RuleContext, value: ast.expr) -> bool:
    return isinstance(value, ast.Call) and ctx.imports.resolve(value.func) in _SEQUENTIAL


def _last_added(ctx: RuleContext, binding: Binding, compiled: Site) -> ast.Call | None:
    """The layer of the last ``model.add(layer)`` before the ``compile``, in the scope that
    binds the model."""
    last: ast.Call | None = None
    position = (compiled.node.lineno, compiled.node.col_offset)  # type: ignore[attr-defined]
    for site in ctx.calls_named("add"):
        call = site.node
        assert isinstance(call, ast.Call)
        func = call.func
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == binding.name
            and site.scope is binding.scope
            and binding.pos <= (call.lineno, call.col_offset) < position
            and len(call.args) == 1
            and isinstance(call.args[0], ast.Call)
        ):
            last = call.args[0]
    return last


def _output_layer(
    ctx: RuleContext, outputs: ast.expr, site: Site, depth: int
) -> tuple[ast.Call, str] | None:
    """``Dense(3, activation="softmax")(h)``, in place or bound to the name given as the
    functional model's outputs."""
    if depth > _MAX_MODEL_DEPTH:
        return None
    if isinstance(outputs, ast.Name):
        assigned = _only_assignment(ctx, outputs, site)
        if assigned is None:
            return None
        _, value, made = assigned
        return _output_layer(ctx, value, made, depth + 1)
    if isinstance(outputs, ast.Call) and isinstance(outputs.func, ast.Call):
        return _probability_layer(ctx, outputs.func, site)
    if isinstance(outputs, ast.Call) and ctx.imports.resolve(outputs.func) in _ACTIVATIONS:
        return outputs, _activation_words(ctx.imports.resolve(outputs.func) or "")
    return None


def _activation_words(name: str) -> str:
    return "a sigmoid" if "sigmoid" in name else "a softmax"


def _probability_layer(
    ctx: RuleContext, layer: ast.Call, site: Site
) -> tuple[ast.Call, str] | None:
    """``Dense(k, activation="softmax")``, ``Dense(k, activation=tf.nn.softmax)``,
    ``layers.Softmax()``, ``Activation("sigmoid")``: the layer and its activation in words."""
    canonical = ctx.imports.resolve(layer.func)
    if canonical is None or not canonical.startswith("tf.keras."):
        return None
    if canonical in ("tf.keras.layers.Softmax", "tf.keras.layers.activations.Softmax"):
        return layer, "a softmax"
    if canonical == "tf.keras.layers.Activation":
        activation = arguments.keyword(layer, "activation") or arguments.positional(layer, 0)
    else:
        activation = arguments.keyword(layer, "activation")
        if activation is None and canonical == "tf.keras.layers.Dense":
            activation = arguments.positional(layer, 1)
    if activation is None:
        return None
    if isinstance(activation, ast.Constant) and isinstance(activation.value, str):
        words = _ACTIVATION_NAMES.get(activation.value)
        return (layer, words) if words is not None else None
    name = ctx.imports.resolve(activation)
    if name in _ACTIVATIONS:
        return layer, _activation_words(name)
    return None
