"""TFC017: a ``tf.Variable`` stored on a Keras 3 layer or model, which Keras does not track.

The class is one deriving a Keras ``Layer`` or ``Model`` (any alias, ``tf.keras`` too, or a
class of the file that does: ``traced.TracedCode.keras_class_kind``). A ``tf.Variable`` made
in ``call()`` is TFC015's (made on every call); here it is made once, in ``__init__``,
``build()`` or another method, and the mistake is the kind of variable, not the place.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.model import Scope, Site

CODE = "TFC017"
NAME = "tf-variable-in-keras-layer"
SEVERITY = Severity.WARNING
SECTION = "parameters-are-variables"

DOCS = """
## What it does
Flags `self.<name> = tf.Variable(...)` in a method of a Keras 3 layer or model (a class
deriving `keras.layers.Layer` or `keras.Model`, under any alias, `tf.keras` too, or through
another class of the file that does), other than `call()` (a variable made there is
`TFC015`'s). The fix makes it a `keras.Variable` with the same initial value, name, dtype and
`trainable` flag; no fix is offered for arguments `keras.Variable` does not take (`shape=`,
`constraint=`, a second positional argument) or a name with a `/`.

## Why is this bad?
Keras 3 tracks the variables it creates itself (`self.add_weight(...)`, `keras.Variable`) and
the layers set as attributes, but not a `tf.Variable`: it is missing from `trainable_weights`,
`weights` and the saved model. `fit` and an optimizer given `model.trainable_variables` never
update it, so the parameter keeps its first value while the rest of the model learns, and
nothing raises. A `tf.Module`, by contrast, does track `tf.Variable` attributes.

## Example
```python
class Scale(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.factor = tf.Variable(1.0)

    def call(self, x):
        return x * self.factor
```

## Use instead
```python
class Scale(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.factor = keras.Variable(1.0)   # or self.add_weight(...) in build()

    def call(self, x):
        return x * self.factor
```

## Course module
Module 3, *A parameter must be a variable* (`parameters-are-variables`).
"""

# tf.Variable's keywords that keras.Variable takes with the same meaning (the initial value's
# keyword is named ``initializer`` there).
_SAME_KEYWORDS = frozenset({"trainable", "name", "dtype"})


def check(ctx: RuleContext) -> Iterator[Finding]:
    sites = ctx.calls_to("tf.Variable")
    if not sites:
        return
    traced = ctx.bindings.traced
    for site in sites:
        method = site.scope
        class_scope = method.class_scope
        if method.kind != "function" or class_scope is None or method.self_name is None:
            continue
        if method.parent is not class_scope or method.name == "call":
            continue  # ``call``: TFC015; a nested function: not the layer's own statement
        kind = traced.keras_class_kind(class_scope)
        if kind is None:
            continue
        attribute = _stored_on_self(method, site)
        if attribute is None:
            continue
        frozen = any(
            k.arg == "trainable" and isinstance(k.value, ast.Constant) and k.value.value is False
            for k in site.node.keywords  # type: ignore[attr-defined]
        )
        missed = (
            "it is not in the layer's `weights` and saving leaves it out"
            if frozen
            else "it is not in `trainable_weights`, `fit` never trains it and saving leaves it out"
        )
        callee = ctx.short(site.node.func, 30)  # type: ignore[attr-defined]
        yield ctx.finding(
            CODE,
            site.node,
            f"`self.{attribute} = {callee}(...)` in Keras {kind} `{class_scope.name}`: Keras 3 "
            f"does not track a tf.Variable, so {missed}; make it a `keras.Variable` "
            "(or `self.add_weight(...)`)",
            _fix(ctx, site.node),
        )


def _stored_on_self(method: Scope, site: Site) -> str | None:
    """``attr`` when the call is the whole value of a ``self.attr = ...`` statement."""
    for node in ast.walk(method.node):
        if (
            isinstance(node, ast.Assign)
            and node.value is site.node
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Attribute)
            and isinstance(node.targets[0].value, ast.Name)
            and node.targets[0].value.id == method.self_name
        ):
            return node.targets[0].attr
    return None


def _fix(ctx: RuleContext, call: ast.AST) -> Fix | None:
    assert isinstance(call, ast.Call)
    if len(call.args) > 1 or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    edits = []
    for keyword in call.keywords:
        if keyword.arg == "initial_value" and not call.args:
            continue
        if keyword.arg not in _SAME_KEYWORDS:
            return None
        value = keyword.value
        if keyword.arg == "name" and not (
            isinstance(value, ast.Constant)
            and isinstance(value.value, str)
            and "/" not in value.value
        ):
            return None  # Keras refuses a name with "/"; a computed one may hold one
    if not call.args and not any(k.arg == "initial_value" for k in call.keywords):
        return None
    reference = ctx.tf_ref("tf.keras.Variable")
    if reference is None:
        return None
    edits.append(ctx.replace(call.func, reference))
    for keyword in call.keywords:
        if keyword.arg == "initial_value":
            span = ctx.range_of(keyword)
            edits.append(
                ctx.replace(
                    type(span)(
                        span.line, span.column, span.line, span.column + len("initial_value")
                    ),
                    "initializer",
                )
            )
    return Fix(f"Make it a `{reference}`", tuple(edits))
