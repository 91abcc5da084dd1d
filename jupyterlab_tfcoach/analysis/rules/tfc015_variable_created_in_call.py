"""TFC015: a Keras layer or model creating a variable in ``call()`` instead of ``build()``.

The class is one deriving a Keras ``Layer`` or ``Model`` (any alias, ``tf.keras`` too, or
a class of the file that does: ``traced.TracedCode.keras_class_kind``); its ``call`` is
checked whether or not the file compiles a model, since the creation goes wrong eagerly
too. The fix moves a ``self.<attr> = self.add_weight(...)`` (or ``keras.Variable(...)``)
statement to the end of ``build()``, or into a new ``build(self, input_shape)``, when the
statement reads nothing of ``call``'s own (its input's shape, say): then it means the same
there, once.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.model import Scope, Site
from jupyterlab_tfcoach.analysis.positions import Range
from jupyterlab_tfcoach.analysis.rules._common import in_eager_only_branch

CODE = "TFC015"
NAME = "variable-created-in-call"
SEVERITY = Severity.WARNING
SECTION = "keras-weights-in-build"

DOCS = """
## What it does
Flags a variable created in the `call()` method of a Keras layer or model: `self.add_weight(...)`,
`keras.Variable(...)` or `tf.Variable(...)`, with Keras imported as `keras`, `tf.keras` or
`from keras import layers`, whether TensorFlow is imported or not. Creation under a condition
(`if self.w is None:`) is not reported.

A fix is offered for `self.<name> = self.add_weight(...)` (or `keras.Variable(...)`) when it
reads nothing that only `call()` has (such as its input): it moves to the end of `build()`, or
into a new `build(self, input_shape)`.

## Why is this bad?
`call()` runs on every batch; `build()` runs once, before the first call, with the input's
shape. Weights belong there. Keras 3 locks a layer's state once it is built, so
`self.add_weight` in `call()` raises `ValueError: You cannot add new elements of state ... to a
layer that is already built` on the second call; in a model being built or compiled it fails
at once (`Could not automatically infer the output shape`), and `tf.Variable(...)` in a traced
`call()` raises `tf.function only supports singleton tf.Variables`. A `keras.Variable` kept in
a local is a new, untracked variable on every call: it never trains.

## Example
```python
class Scale(keras.layers.Layer):
    def call(self, x):
        self.scale = self.add_weight(shape=(), initializer="ones")
        return x * self.scale
```

## Use instead
```python
class Scale(keras.layers.Layer):
    def build(self, input_shape):
        self.scale = self.add_weight(shape=(), initializer="ones")

    def call(self, x):
        return x * self.scale
```

A weight whose shape depends on the input takes it from `build`'s `input_shape`
(`shape=(input_shape[-1], units)`), not from the tensor `call()` gets.

## Course module
Module 3, *Keras layers create their weights in build()* (`keras-weights-in-build`).
"""

_CREATORS = frozenset({"tf.Variable", "tf.keras.Variable"})
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _creation(ctx: RuleContext, site: Site, call_scope: Scope) -> str | None:
    """``self.add_weight`` / ``keras.Variable`` / ``tf.Variable``: what the call creates
    a variable with, as the message names it; None for any other call."""
    call = site.node
    assert isinstance(call, ast.Call)
    func = call.func
    if (
        isinstance(func, ast.Attribute)
        and func.attr == "add_weight"
        and isinstance(func.value, ast.Name)
        and func.value.id == call_scope.self_name
    ):
        return ctx.short(func)
    canonical = ctx.imports.resolve(func)
    if canonical not in _CREATORS:
        return None
    if canonical == "tf.Variable" and ctx.tf_function_body(site.scope) is not None:
        return None  # a decorated ``call``: TFC010 reports it
    return canonical.replace("tf.keras.", "keras.")


def _keras_calls(ctx: RuleContext) -> Iterator[Scope]:
    """The ``call`` methods of the file's Keras layers and models."""
    traced = ctx.bindings.traced
    calls = {
        id(site.node)
        for site in ctx.model.defs
        if site.node.name == "call"  # type: ignore[attr-defined]
        and site.scope.kind == "class"
        and traced.keras_class_kind(site.scope) is not None
    }
    if calls:
        for scope in ctx.model.scopes:
            if id(scope.node) in calls and scope.self_name is not None:
                yield scope


def check(ctx: RuleContext) -> Iterator[Finding]:
    if not ctx.model.calls_by_name.get("add_weight") and not any(
        ctx.calls_to(creator) for creator in _CREATORS
    ):
        return  # no variable is created anywhere: no class to look at
    for call_scope in _keras_calls(ctx):
        class_scope = call_scope.class_scope
        assert class_scope is not None
        for site in call_scope.calls:
            created_by = _creation(ctx, site, call_scope)
            if created_by is None:
                continue
            # Under an ``if`` (``if self.w is None:``) / ``while`` / ``try``: a guard may
            # make it once-only; only a plain ``for`` still creates one per call.
            if any(block.kind != "for" or block.branch != 0 for block in site.path):
                continue
            if in_eager_only_branch(ctx.imports, site.path):
                continue
            label = f"`{class_scope.name}.call`"
            yield ctx.finding(
                CODE,
                site.node,
                f"`{created_by}(...)` in {label} creates a variable on every call; create "
                "it once in `build(self, input_shape)` with `self.add_weight(...)`",
                _fix(ctx, site, call_scope, class_scope),
            )


def _statement_of(call_scope: Scope, node: ast.AST) -> ast.Assign | None:
    """The ``self.<attr> = <node>`` statement of ``call``'s own body, if ``node`` is its value."""
    for statement in call_scope.node.body:  # type: ignore[attr-defined]
        if (
            isinstance(statement, ast.Assign)
            and statement.value is node
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Attribute)
            and isinstance(statement.targets[0].value, ast.Name)
            and statement.targets[0].value.id == call_scope.self_name
        ):
            return statement
    return None


def _reads_only_outer_names(value: ast.expr, call_scope: Scope) -> bool:
    """Whether every name ``value`` reads means the same in ``build``: ``self`` or a name
    bound outside ``call`` (a module, a constant); not ``x`` or a local of ``call``."""
    for node in ast.walk(value):
        if isinstance(node, (ast.Lambda, *_COMPREHENSIONS)):
            return False  # their own scopes: not worth following for a fix
        if not isinstance(node, ast.Name) or node.id == call_scope.self_name:
            continue
        if node.id in call_scope.bindings:
            return False
    return True


def _moved_text(ctx: RuleContext, statement: ast.stmt, indent: str) -> str | None:
    """The statement's lines, re-indented to ``indent``; None if it shares a line."""
    span = ctx.range_of(statement)
    first = ctx.source.line_text(span.line)
    own_indent = first[: span.column - 1]
    last = ctx.source.line_text(span.end_line)
    if own_indent.strip() or last[span.end_column - 1 :].strip():
        return None  # ``x = 1; self.w = ...``: not alone on its lines
    lines = [ctx.source.line_text(n) for n in range(span.line, span.end_line + 1)]
    moved = []
    for line in lines:
        if line.strip() and not line.startswith(own_indent):
            return None  # a continuation line less indented than the statement
        moved.append(indent + line[len(own_indent) :] if line.strip() else "")
    return "\n".join(moved)


def _fix(ctx: RuleContext, site: Site, call_scope: Scope, class_scope: Scope) -> Fix | None:
    statement = _statement_of(call_scope, site.node)
    body = call_scope.node.body  # type: ignore[attr-defined]
    if statement is None or len(body) < 2:
        return None  # ``call`` would be left empty
    if not _reads_only_outer_names(statement.value, call_scope):
        return None
    span = ctx.range_of(statement)
    remove = ctx.replace(Range(span.line, 1, span.end_line + 1, 1), "")
    builds = class_scope.bindings.get("build", ())
    if len(builds) > 1 or (builds and builds[0].kind != "def"):
        return None
    if builds:
        build = builds[0].node
        assert isinstance(build, (ast.FunctionDef, ast.AsyncFunctionDef))
        positional = [*build.args.posonlyargs, *build.args.args]
        if not positional or positional[0].arg != call_scope.self_name:
            return None
        last = build.body[-1]
        last_span = ctx.range_of(last)
        first_span = ctx.range_of(build.body[0])
        indent = ctx.source.line_text(first_span.line)[: first_span.column - 1]
        moved = _moved_text(ctx, statement, indent)
        if moved is None or indent.strip():
            return None
        end_text = ctx.source.line_text(last_span.end_line)
        insert = ctx.replace(
            Range(last_span.end_line, len(end_text) + 1, last_span.end_line, len(end_text) + 1),
            "\n" + moved,
        )
        title = "Move the weight to `build()`"
    else:
        call_def = call_scope.node
        first_line = min(
            [call_def.lineno, *(d.lineno for d in call_def.decorator_list)]  # type: ignore[attr-defined]
        )
        def_text = ctx.source.line_text(first_line)
        def_indent = def_text[: len(def_text) - len(def_text.lstrip())]
        body_span = ctx.range_of(body[0])
        body_indent = ctx.source.line_text(body_span.line)[: body_span.column - 1]
        moved = _moved_text(ctx, statement, body_indent)
        if moved is None or body_indent.strip() or not body_indent.startswith(def_indent):
            return None
        new_build = f"{def_indent}def build(self, input_shape):\n{moved}\n\n"
        if call_scope.self_name != "self":
            new_build = new_build.replace("(self,", f"({call_scope.self_name},", 1)
        insert = ctx.replace(Range(first_line, 1, first_line, 1), new_build)
        title = "Create the weight in a new `build()`"
    return Fix(title, (insert, remove))
