"""TFC026: the result of a TensorFlow op that changes nothing, written as a statement alone."""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.model import Site
from jupyterlab_tfcoach.analysis.values import VARIABLE

CODE = "TFC026"
NAME = "discarded-op-result"
SEVERITY = Severity.WARNING
SECTION = "tensors-immutable"

DOCS = """
## What it does
Flags a call of a TensorFlow function that only computes a new tensor, written as a
statement on its own with a name as its first argument: `tf.clip_by_value(image, 0.0, 1.0)`,
`tf.cast(labels, tf.float32)`, `tf.nn.relu(h)`, `tf.reshape(x, [-1, 4])`. The result is
thrown away and the name is unchanged.

The functions are those that have no effect besides their result: `tf.math.*`, the `tf.nn`
activations and `tf.nn.l2_normalize`, `tf.clip_by_value` / `tf.clip_by_norm`, `tf.cast`,
`tf.reshape`, `tf.squeeze`, `tf.expand_dims`, `tf.transpose`, the reductions
(`tf.reduce_sum`, ...), element-wise ops (`tf.abs`, `tf.square`, `tf.maximum`, ...),
`tf.gather`, `tf.sort`, `tf.one_hot`, `tf.matmul` and a few `tf.image` ones
(`tf.image.flip_left_right`, `tf.image.resize`, ...). Calls with effects are never
reported: `assign*`, `tf.print`, `tf.debugging.*` checks, `tf.summary.*`,
`tf.py_function`, and the learner's own functions.

The last statement of a notebook cell is not reported: IPython shows its value, so it is
used (unless a `;` ends it, which hides the value).

The fix binds the result to the name (`image = tf.clip_by_value(image, 0.0, 1.0)`). When the
name holds a `tf.Variable` (the analysed code makes it with `tf.Variable(...)`), the fix
writes into it: `image.assign(tf.clip_by_value(image, 0.0, 1.0))`, for ops that keep the
shape and the dtype (clipping, activations, element-wise ops); a reshape or a cast of a
variable gets no fix, as `assign` would refuse the new shape or dtype. No fix is offered
either where binding the name would make it local to a function that reads it from outside
(Python would then fail on the earlier read); the message says what to write.

## Why is this bad?
A tensor never changes: every TensorFlow op returns a new tensor and leaves its inputs as
they were, and a variable changes only through its `assign` methods. An op whose result is
not kept does nothing at all, and nothing raises: the pixels are never clipped, the labels
keep their dtype, the activation is never applied.

## Example
```python
@tf.function
def train_step():
    ...
    optimizer.apply_gradients([(grad, image)])
    tf.clip_by_value(image, 0.0, 1.0)  # image is a tf.Variable
```

## Use instead
```python
@tf.function
def train_step():
    ...
    optimizer.apply_gradients([(grad, image)])
    image.assign(tf.clip_by_value(image, 0.0, 1.0))
```

For a tensor: `x = tf.clip_by_value(x, 0.0, 1.0)`.

## Course module
Module 1, *Tensors are immutable values* (`tensors-immutable`).
"""

# Ops that keep their first argument's shape and dtype: a variable can be assigned the result.
_SAME_SHAPE = frozenset(
    {"clip_by_value", "clip_by_norm", "abs", "sqrt", "square", "exp", "round", "sign"}
    | {"sigmoid", "tanh", "floor", "ceil", "negative", "reciprocal", "rsqrt", "log"}
    | {f"nn.{name}" for name in ("relu", "relu6", "elu", "selu", "gelu", "sigmoid", "tanh")}
    | {f"nn.{name}" for name in ("leaky_relu", "softplus", "softmax", "log_softmax")}
    | {"nn.l2_normalize", "image.flip_left_right", "image.flip_up_down"}
    | {"image.adjust_brightness", "image.adjust_contrast", "image.per_image_standardization"}
    | {f"math.{name}" for name in ("abs", "sqrt", "square", "exp", "round", "sign", "log")}
    | {f"math.{name}" for name in ("sigmoid", "tanh", "floor", "ceil", "negative")}
    | {"math.reciprocal", "math.rsqrt", "math.l2_normalize", "math.softplus"}
)
# Ops that only compute a result (their other effects: none), beyond those above.
_PURE = _SAME_SHAPE | frozenset(
    {"cast", "reshape", "squeeze", "expand_dims", "transpose", "maximum", "minimum"}
    | {"add", "subtract", "multiply", "divide", "pow", "gather", "sort", "reverse", "tile"}
    | {"one_hot", "argmax", "argmin", "norm", "matmul", "linalg.matmul", "stop_gradient"}
    | {f"reduce_{name}" for name in ("sum", "mean", "max", "min", "prod", "std", "variance")}
    | {"image.resize", "image.rot90", "image.convert_image_dtype", "image.rgb_to_grayscale"}
)
# Under ``tf.math`` every function computes a value and nothing else.
_PURE_MODULE = "tf.math."


def _pure_op(canonical: str | None) -> str | None:
    """The op's name under ``tf.`` (``nn.relu``) when it only computes a result."""
    if canonical is None or not canonical.startswith("tf."):
        return None
    name = canonical[len("tf.") :]
    if name in _PURE or canonical.startswith(_PURE_MODULE):
        return name
    return None


def check(ctx: RuleContext) -> Iterator[Finding]:
    candidates: list[Site] = []
    last_parts = {name.rsplit(".", 1)[-1] for name in _PURE}
    for name, sites in ctx.model.calls_by_name.items():
        math_name = name not in last_parts
        for site in sites:
            call = site.node
            assert isinstance(call, ast.Call)
            if not call.args or not isinstance(call.args[0], ast.Name):
                continue
            if math_name and not (ctx.imports.resolve(call.func) or "").startswith(_PURE_MODULE):
                continue
            candidates.append(site)
    if not candidates:
        return
    # The calls that are whole statements: one walk, only in files that have candidates.
    statements = {
        id(node.value): node for node in ast.walk(ctx.model.tree) if isinstance(node, ast.Expr)
    }
    displayed = _displayed_statements(ctx)
    for site in candidates:
        call = site.node
        statement = statements.get(id(call))
        if statement is None or id(statement) in displayed:
            continue
        op = _pure_op(ctx.imports.resolve(call.func))  # type: ignore[attr-defined]
        if op is None:
            continue
        yield _finding(ctx, site, op)


def _displayed_statements(ctx: RuleContext) -> set[int]:
    """The module-level expression statements IPython shows the value of: each notebook
    cell's last statement, unless a ``;`` ends it. None in a file."""
    starts = ctx.cell_first_lines
    if not starts:
        return set()
    body = ctx.model.tree.body
    shown: set[int] = set()
    for index, statement in enumerate(body):
        if not isinstance(statement, ast.Expr):
            continue
        cell = bisect.bisect_right(starts, statement.lineno) - 1
        following = body[index + 1] if index + 1 < len(body) else None
        if following is not None and bisect.bisect_right(starts, following.lineno) - 1 == cell:
            continue  # another statement of the same cell follows
        end_line = statement.end_lineno or statement.lineno
        end_column = ctx.source.char_column(end_line, statement.end_col_offset or 0)
        rest = ctx.source.line_text(end_line)[end_column:]
        if not rest.lstrip().startswith(";"):
            shown.add(id(statement))
    return shown


def _finding(ctx: RuleContext, site: Site, op: str) -> Finding:
    call = site.node
    assert isinstance(call, ast.Call)
    first = call.args[0]
    assert isinstance(first, ast.Name)
    name = first.id
    text = ctx.text(call)
    variable = ctx.value(first, site).kind == VARIABLE
    fix = None
    if variable:
        wanted = f"`{name}.assign({text})`"
        if op in _SAME_SHAPE:
            fix = Fix(
                f"Assign the result to `{name}`", (ctx.replace(call, f"{name}.assign({text})"),)
            )
            advice = f"write it into the variable: {wanted}"
        else:
            advice = (
                f"keep it under a new name (`{name}.assign(...)` needs the variable's own "
                "shape and dtype)"
            )
    else:
        wanted = f"`{name} = {text}`"
        advice = f"bind it: {wanted} (for a `tf.Variable`, `{name}.assign(...)`)"
        if _binds_locally(ctx, first, site):
            fix = Fix(f"Bind the result to `{name}`", (ctx.replace(call, f"{name} = {text}"),))
    return ctx.finding(
        CODE,
        call,
        f"`{ctx.short(call)}` returns a new tensor and its result is thrown away: "
        f"TensorFlow ops never change their inputs, so `{name}` is left as it was; {advice}",
        fix,
    )


def _binds_locally(ctx: RuleContext, name: ast.Name, site: Site) -> bool:
    """Whether ``name = ...`` at the call rebinds the name the call reads: at module level,
    or a parameter or local of the function (not a name it reads from outside, which the
    assignment would make local and unbound at the earlier read)."""
    if site.scope.function is None:
        return True
    resolution = ctx.bindings.names.resolve(
        site.scope, name.id, (name.lineno, name.col_offset), site.path
    )
    if resolution is None or not resolution.bindings:
        return False
    return all(
        binding.scope is site.scope and not binding.remote for binding in resolution.bindings
    )
