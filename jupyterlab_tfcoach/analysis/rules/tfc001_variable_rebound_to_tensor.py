"""TFC001: a tf.Variable (or Keras variable) rebound to the tensor that arithmetic on it
returns."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.api_results import KERAS_ORIGIN
from jupyterlab_tfcoach.analysis.arguments import keyword, positional
from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.model import Site, refers_to
from jupyterlab_tfcoach.analysis.rules._common import (
    OPERATOR_TEXT,
    number_literal,
    parenthesized,
    same_reference,
)
from jupyterlab_tfcoach.analysis.values import PY_NUMBER, VARIABLE

CODE = "TFC001"
NAME = "variable-rebound-to-tensor"
SEVERITY = Severity.WARNING
SECTION = "rebinding-variables"

DOCS = """
## What it does
Flags a name or attribute bound to a `tf.Variable` that is rebound by arithmetic on itself, such
as `w = w - lr * g`, `self.w = self.w * 2` or `w -= lr * g`. Keras 3 variables count the same:
`keras.Variable(...)` (imported as `keras`, `tf.keras` or `from keras import Variable`) and a
layer's weight from `self.add_weight(...)`, with or without TensorFlow imported.

The same is reported on an entry of a dict or list built from variables (`params["w"] =
params["w"] - lr * g`, `ws[0] -= lr * g`, `for k in params: params[k] = params[k] - lr *
grads[k]`), on each variable of a tuple assignment (`w, b = w - lr * dw, b - lr * db`), and for
TensorFlow ops that compute an updated value from the variable (`w = tf.subtract(w, lr * g)`,
`w = tf.clip_by_value(w, 0.0, 1.0)`; not `tf.reshape` or `tf.cast`, which use it as data).

A local name that only borrows a variable someone else holds (`kernel = self.kernel`, then
`kernel = kernel * mask`) is not reported: the owner still has the variable.

## Why is this bad?
Arithmetic on a variable returns a new, immutable tensor. Assigning it back to the name
replaces the variable with that tensor: the optimizer, `model.trainable_variables` and any
checkpoint still hold the old variable, so the update is lost and the weight stops being
trained. Inside a `tf.function` the rebinding is a trace-time Python operation. Augmented
assignment (`w -= ...`) raises a RuntimeError on a `tf.Variable` in TF 2.21, but on a Keras 3
variable (`keras.Variable`, a layer weight from `add_weight`) it raises nothing and rebinds the
name or attribute to a tensor, silently.

## Example
```python
w = tf.Variable(1.0)
w = w - 0.1 * grad
```

With Keras 3, in a layer:
```python
class Decay(keras.layers.Layer):
    def build(self, input_shape):
        self.scale = self.add_weight(shape=(), initializer="ones")

    def call(self, x):
        self.scale -= 0.01          # silently a tensor from now on
        return x * self.scale
```

## Use instead
```python
w = tf.Variable(1.0)
w.assign_sub(0.1 * grad)   # or w.assign_add(...) / w.assign(...)
```

```python
class Decay(keras.layers.Layer):
    def build(self, input_shape):
        self.scale = self.add_weight(shape=(), initializer="ones")

    def call(self, x):
        self.scale.assign_sub(0.01)  # keras.Variable has assign / assign_add / assign_sub
        return x * self.scale
```

`assign_sub` and `assign_add` take a value of the variable's own shape: they do not
broadcast. So the fix uses them only for a step that may have the variable's shape
(`lr * grad`); a step known to be a single number (a Python number such as `0.5` or `lr`, a
`tf.reduce_mean(...)` without `axis`) gets `w.assign(w - step)` instead, which broadcasts
like the original expression.

## Course module
Module 3, *Rebinding a variable to a tensor* (`rebinding-variables`).
"""

_ASSIGN_METHOD = {ast.Sub: "assign_sub", ast.Add: "assign_add"}


def _same_entry(a: ast.AST, b: ast.Subscript) -> bool:
    """``params["w"]`` read in the value and ``params["w"]`` assigned (load vs store)."""
    return (
        isinstance(a, ast.Subscript)
        and ast.dump(a.value) == ast.dump(b.value)
        and ast.dump(a.slice) == ast.dump(b.slice)
    )


def _same_target(a: ast.AST, b: ast.expr) -> bool:
    """``w``/``w``, ``self.w``/``self.w`` or ``params["w"]``/``params["w"]``."""
    return same_reference(a, b) or (isinstance(b, ast.Subscript) and _same_entry(a, b))


# TensorFlow ops that compute an updated value of their argument (``w = tf.subtract(w, g)``,
# ``w = tf.clip_by_value(w, 0, 1)``). Reshaping, casting or slicing a variable into a tensor
# (``x = tf.reshape(x, (1, 6, 8, 1))`` to feed a layer) uses it as data, not as a weight being
# updated, and is left alone.
_UPDATE_OPS = frozenset(
    {
        f"tf.{prefix}{name}"
        for prefix in ("", "math.")
        for name in ("add", "subtract", "multiply", "divide", "truediv", "maximum", "minimum")
    }
    | {"tf.clip_by_value", "tf.clip_by_norm", "tf.math.l2_normalize", "tf.math.scalar_mul"}
)
_UPDATE_OP_NAMES = frozenset(canonical.rsplit(".", 1)[1] for canonical in _UPDATE_OPS)
_IN_PLACE_OPS = {
    "tf.subtract": "assign_sub",
    "tf.math.subtract": "assign_sub",
    "tf.add": "assign_add",
    "tf.math.add": "assign_add",
}


def _op_name(ctx: RuleContext, value: ast.expr) -> str | None:
    """``tf.subtract`` for ``tf.subtract(w, g)`` (any alias), if it is an update op."""
    if not isinstance(value, ast.Call):
        return None
    canonical = ctx.imports.resolve(value.func)
    return canonical if canonical in _UPDATE_OPS else None


def _update_op_spellings(ctx: RuleContext) -> frozenset[str]:
    """The names an update op can be called by in this file: its own last name
    (``tf.subtract``, ``tm.subtract``) or a local alias (``from tensorflow import subtract
    as sub``). A call by any other name is not one, with no import lookup."""
    aliases = {local for local, bound in ctx.imports.names.items() if bound in _UPDATE_OPS}
    return _UPDATE_OP_NAMES | aliases


# Reductions that return a single number unless given an axis.
_REDUCTIONS = frozenset(
    {
        f"tf.{prefix}reduce_{name}"
        for prefix in ("", "math.")
        for name in ("sum", "mean", "max", "min", "prod", "std", "variance", "logsumexp")
    }
    | {"tf.norm", "tf.linalg.norm"}
)


def _scalar_step(ctx: RuleContext, node: ast.expr, site: Site) -> bool:
    """Whether the step is surely a single number: ``assign_sub``/``assign_add`` do not
    broadcast, so ``v.assign_sub(0.5)`` or ``v.assign_sub(tf.reduce_mean(g))`` fails for a
    vector ``v`` where ``v.assign(v - 0.5)`` works (measured on TF 2.21)."""
    if number_literal(node) is not None:
        return True
    node_type = type(node)
    if node_type is ast.UnaryOp:
        return _scalar_step(ctx, node.operand, site)  # type: ignore[attr-defined]
    if node_type is ast.BinOp:
        return _scalar_step(ctx, node.left, site) and _scalar_step(ctx, node.right, site)  # type: ignore[attr-defined]
    if node_type is ast.Name:
        return ctx.value(node, site).kind == PY_NUMBER
    if node_type is ast.Call:
        assert isinstance(node, ast.Call)
        canonical = ctx.imports.resolve(node.func)
        if canonical in _REDUCTIONS:
            return positional(node, 1) is None and keyword(node, "axis") is None
        if canonical in ("tf.constant", "tf.convert_to_tensor"):
            first = positional(node, 0)
            return first is not None and number_literal(first) is not None
    return False


def _any_scalar_step(ctx: RuleContext, site: Site, *operands: ast.expr) -> bool:
    return any(_scalar_step(ctx, operand, site) for operand in operands)


def _replacement(
    ctx: RuleContext, site: Site, statement: ast.stmt, target: ast.expr, value: ast.expr
) -> str:
    """The ``assign*`` call that updates the variable in place with the same value."""
    owner = ctx.text(target)
    if isinstance(statement, ast.AugAssign):
        method = _ASSIGN_METHOD.get(type(statement.op))
        if method and not _scalar_step(ctx, value, site):
            return f"{owner}.{method}({ctx.text(value)})"
        operator = OPERATOR_TEXT[type(statement.op)]
        return f"{owner}.assign({owner} {operator} {parenthesized(ctx.text(value), value)})"
    if isinstance(value, ast.BinOp) and not _any_scalar_step(ctx, site, value.left, value.right):
        if isinstance(value.op, ast.Sub) and _same_target(value.left, target):
            return f"{owner}.assign_sub({ctx.text(value.right)})"
        if isinstance(value.op, ast.Add) and _same_target(value.left, target):
            return f"{owner}.assign_add({ctx.text(value.right)})"
        if isinstance(value.op, ast.Add) and _same_target(value.right, target):
            return f"{owner}.assign_add({ctx.text(value.left)})"
    method = _IN_PLACE_OPS.get(_op_name(ctx, value) or "")
    if (
        method
        and isinstance(value, ast.Call)
        and len(value.args) == 2
        and not value.keywords
        and not _any_scalar_step(ctx, site, *value.args)
        and not any(isinstance(argument, ast.Starred) for argument in value.args)
    ):
        first, second = value.args
        if _same_target(first, target):
            return f"{owner}.{method}({ctx.text(second)})"
        if method == "assign_add" and _same_target(second, target):
            return f"{owner}.assign_add({ctx.text(first)})"
    return f"{owner}.assign({ctx.text(value)})"


def _reads_entry(expression: ast.expr, target: ast.Subscript) -> bool:
    return any(_same_entry(node, target) for node in ast.walk(expression))


def _derives_from(
    ctx: RuleContext, value: ast.expr, target: ast.expr, op_spellings: frozenset[str]
) -> bool:
    """``w - lr * g`` / ``-w`` / ``tf.subtract(w, g)`` for target ``w``: a new tensor from it."""
    value_type = type(value)
    if value_type is ast.Call:
        # A call spelled like an update op with the target itself as an argument
        # (``tf.subtract(w, g)``): cheap to test on every assignment, and the import
        # lookup runs only for those few.
        func = value.func  # type: ignore[attr-defined]
        func_type = type(func)
        spelled = (
            func.id if func_type is ast.Name else func.attr if func_type is ast.Attribute else None
        )
        if spelled not in op_spellings:
            return False
        arguments = value.args  # type: ignore[attr-defined]
        if type(target) is ast.Name:
            name = target.id
            found = any(type(a) is ast.Name and a.id == name for a in arguments)  # type: ignore[attr-defined]
        else:
            found = any(_same_target(argument, target) for argument in arguments)
        return found and _op_name(ctx, value) is not None
    if value_type is not ast.BinOp and value_type is not ast.UnaryOp:
        return False
    if isinstance(target, ast.Subscript):
        return _reads_entry(value, target)
    return refers_to(value, target)


def _valid_target(ctx: RuleContext, target: ast.expr, site: Site) -> bool:
    if isinstance(target, ast.Subscript):
        return isinstance(target.value, ast.Name)
    if isinstance(target, ast.Attribute):
        return ctx.bindings.names.self_attribute_bindings(target, site.scope) is not None
    return isinstance(target, ast.Name)


# The values an assignment can rebind a variable with: ``x = y`` or ``x = obj.attr`` never do,
# and most assignments are those, so they are dismissed by one type test.
_REBINDING_VALUES = frozenset({ast.BinOp, ast.UnaryOp, ast.Call, ast.Tuple, ast.List})


def _rebound_pairs(
    ctx: RuleContext, site: Site, op_spellings: frozenset[str]
) -> list[tuple[ast.expr, ast.expr]]:
    """(target, new value) pairs the statement rebinds from the target itself.

    ``w -= g``, ``w = w - g``, and each element of ``w, b = w - dw, b - db``.
    """
    statement = site.node
    statement_type = type(statement)
    if statement_type is ast.AugAssign:
        pairs = [(statement.target, statement.value)]  # type: ignore[attr-defined]
    elif (
        statement_type is ast.Assign
        and type(statement.value) in _REBINDING_VALUES  # type: ignore[attr-defined]
        and len(statement.targets) == 1  # type: ignore[attr-defined]
    ):
        assert isinstance(statement, ast.Assign)
        target, value = statement.targets[0], statement.value
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)):
            if len(target.elts) != len(value.elts) or any(
                isinstance(e, ast.Starred) for e in (*target.elts, *value.elts)
            ):
                return []
            pairs = [
                (element, new)
                for element, new in zip(target.elts, value.elts, strict=True)
                if _derives_from(ctx, new, element, op_spellings)
            ]
        elif _derives_from(ctx, value, target, op_spellings):
            pairs = [(target, value)]
        else:
            return []
    else:
        return []
    return [(target, value) for target, value in pairs if _valid_target(ctx, target, site)]


# Expressions that read an existing object rather than create one.
_ALIASES = (ast.Name, ast.Attribute, ast.Subscript)


def _is_local_alias(ctx: RuleContext, target: ast.expr, site: Site) -> bool:
    """Whether the name only borrows a variable someone else holds (``k = self.kernel``).

    ``k = k * mask`` then computes a tensor from the weight while the layer keeps the
    variable: nothing stops being trained. Only a plain ``=`` qualifies: augmented
    assignment on a variable raises, whoever holds it.
    """
    if not isinstance(target, ast.Name) or not isinstance(site.node, ast.Assign):
        return False
    resolution = ctx.bindings.names.resolve(
        site.scope, target.id, (target.lineno, target.col_offset), site.path
    )
    return resolution is not None and any(
        binding.kind == "assign" and isinstance(binding.value, _ALIASES)
        for binding in resolution.bindings
    )


def _entries(container: ast.expr, key: ast.expr) -> list[ast.expr] | None:
    """The expressions ``container[key]`` may be, when ``container`` is a literal display.

    A constant key picks its own entry; any other key (a loop variable) may be any entry.
    Comprehensions stand for all their elements.
    """
    if isinstance(container, ast.Dict):
        if isinstance(key, ast.Constant):
            picked = [
                value
                for name, value in zip(container.keys, container.values, strict=True)
                if isinstance(name, ast.Constant) and name.value == key.value
            ]
            if picked:
                return picked[-1:]  # a repeated key keeps its last value
        return list(container.values) if container.keys and None not in container.keys else None
    if isinstance(container, (ast.List, ast.Tuple)):
        elements = container.elts
        if any(isinstance(element, ast.Starred) for element in elements):
            return None
        index = key.value if isinstance(key, ast.Constant) else None
        if (
            isinstance(index, int)
            and not isinstance(index, bool)
            and -len(elements) <= index < len(elements)
        ):
            return [elements[index]]
        return list(elements) or None
    if isinstance(container, (ast.ListComp, ast.DictComp)):
        return [container.elt if isinstance(container, ast.ListComp) else container.value]
    return None


def _holds_variables(ctx: RuleContext, target: ast.Subscript, site: Site) -> bool:
    """Whether every entry ``target`` may name was built as a tf.Variable.

    Only containers bound once by a literal display are followed (``params = {"w":
    tf.Variable(...)}``, ``ws = [tf.Variable(...) for _ in range(3)]``): a container filled
    later or passed in stays unknown, so it is never reported.
    """
    container = target.value
    assert isinstance(container, ast.Name)
    resolution = ctx.bindings.names.resolve(
        site.scope, container.id, (container.lineno, container.col_offset), site.path
    )
    if resolution is None:
        return False
    for binding in resolution.bindings:
        if binding.kind != "assign" or binding.value is None:
            return False
        entries = _entries(binding.value, target.slice)
        if not entries:
            return False
        # A comprehension's element is read in the enclosing scope: what makes it a
        # variable is the constructor call, not the loop names in its arguments.
        scope = binding.value_scope
        if any(
            ctx.bindings.infer(entry, scope, binding.path).kind != VARIABLE for entry in entries
        ):
            return False
    return True


def _is_variable(ctx: RuleContext, target: ast.expr, site: Site) -> bool:
    if isinstance(target, ast.Subscript):
        return _holds_variables(ctx, target, site)
    # The value *before* this statement: lookups at the target see earlier bindings.
    return ctx.value(target, site).kind == VARIABLE and not _is_local_alias(ctx, target, site)


def _variable_kind(ctx: RuleContext, targets: list[ast.expr], site: Site) -> str:
    """``Keras variable`` when each target holds one (``keras.Variable``, ``add_weight``:
    the learner wrote no ``tf.Variable``), else ``tf.Variable``."""
    if all(
        not isinstance(target, ast.Subscript) and ctx.value(target, site).origin == KERAS_ORIGIN
        for target in targets
    ):
        return "Keras variable"
    return "tf.Variable"


def _fix(
    ctx: RuleContext, site: Site, statement: ast.stmt, rebound: list[tuple[ast.expr, ast.expr]]
) -> Fix | None:
    replacements = [_replacement(ctx, site, statement, target, value) for target, value in rebound]
    if isinstance(statement, ast.Assign) and isinstance(
        statement.targets[0], (ast.Tuple, ast.List)
    ):
        # ``w, b = w - dw, b - db`` becomes one update per line, which means the same only
        # when every element is such an update and none reads another's target.
        elements = statement.targets[0].elts
        if len(elements) != len(rebound) or any(
            refers_to(value, other)
            if not isinstance(other, ast.Subscript)
            else _reads_entry(value, other)
            for target, value in rebound
            for other, _ in rebound
            if other is not target
        ):
            return None
        span = ctx.range_of(statement)
        line = ctx.source.line_text(span.line)
        indent = line[: span.column - 1]
        if indent.strip():
            return None  # not at the start of its line: ``if ok: w, b = ...``
        replacement = f"\n{indent}".join(replacements)
    else:
        replacement = replacements[0]
    summary = ", ".join(f"`{r.split('(', 1)[0]}(...)`" for r in replacements)
    return Fix(f"Update the variable in place: {summary}", (ctx.replace(statement, replacement),))


def check(ctx: RuleContext) -> Iterator[Finding]:
    op_spellings = _update_op_spellings(ctx)
    for site in ctx.model.assignments:
        # Type tests first: most assignments bind a call's result (``y = model(x)``), whose
        # callee's name dismisses them, or a name, attribute or literal, which never rebind.
        statement = site.node
        statement_type = type(statement)
        if statement_type is ast.Assign:
            value = statement.value  # type: ignore[attr-defined]
            value_type = type(value)
            if value_type is ast.Call:
                func = value.func
                func_type = type(func)
                if func_type is ast.Attribute:
                    if func.attr not in op_spellings:
                        continue
                elif func_type is not ast.Name or func.id not in op_spellings:
                    continue
            elif value_type not in _REBINDING_VALUES:
                continue
        elif statement_type is not ast.AugAssign:
            continue  # an annotated assignment introduces a name
        pairs = _rebound_pairs(ctx, site, op_spellings)
        if not pairs:
            continue
        rebound = [(target, value) for target, value in pairs if _is_variable(ctx, target, site)]
        if not rebound:
            continue
        statement = site.node
        assert isinstance(statement, ast.stmt)
        names = [ctx.text(target) for target, _ in rebound]
        kind = _variable_kind(ctx, [target for target, _ in rebound], site)
        if len(names) == 1:
            subject = f"`{names[0]}` is a {kind}"
            consequence = "rebinds it to a plain tensor, so it stops being trained"
        else:
            listed = ", ".join(f"`{name}`" for name in names[:-1]) + f" and `{names[-1]}`"
            subject = f"{listed} are {kind}s"
            consequence = "rebinds them to plain tensors, so they stop being trained"
        yield ctx.finding(
            CODE,
            statement,
            f"{subject}; `{ctx.short(statement)}` {consequence}",
            _fix(ctx, site, statement, rebound),
        )
