"""TFC009: arithmetic between an integer tensor and a floating-point tensor."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.arguments import has_unpacking, keyword, positional
from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.model import Site
from jupyterlab_tfcoach.analysis.rules._common import ARITHMETIC_OPERATORS, number_literal
from jupyterlab_tfcoach.analysis.values import dtype_category

CODE = "TFC009"
NAME = "mixed-dtype-arithmetic"
SEVERITY = Severity.WARNING
SECTION = "dtype-casting"

DOCS = """
## What it does
Flags arithmetic (`+ - * / // % ** @`) between two tensors whose dtypes are statically known
and where one is an integer type and the other a floating-point type, e.g.
`tf.constant([1, 2]) + tf.constant([0.5, 1.0])` or `tf.reduce_sum(x) / tf.shape(x)[0]`.
Besides constants, variables and casts, it knows the integer results of `tf.shape`, `tf.size`,
`tf.rank`, `tf.range`, `tf.argmax`/`tf.argmin` and one-argument `tf.where`, that Keras losses
(`loss_fn(y, p)` for a `tf.keras.losses` object, `tf.keras.losses.mse(...)`) and the
`tf.nn.*_cross_entropy_with_logits` ops return float32 (the logits' dtype), and follows dtypes
through reductions, element-wise math, indexing and arithmetic. It also flags a Python
float next to an integer tensor (`tf.range(10) * 0.1`, `tf.shape(x)[0] * 0.5`): TensorFlow
converts the number to the tensor's integer dtype and cannot. Other Python numbers are fine
(`x * 2` for a float `x`, `tf.shape(x)[0] * 2`). A file that turns on NumPy-style promotion
with `tnp.experimental_enable_numpy_behavior()` (in any mode but `"off"`) is not checked, since
such mixes may then be legal.

## Why is this bad?
Unlike NumPy, TensorFlow never promotes dtypes implicitly: `int32 + float32` raises
`InvalidArgumentError` or `TypeError` (eagerly) or fails while tracing. Many ops return
integers even when their input is float: `tf.shape(x)[0]`, `tf.size(x)` and `tf.range(n)` are
`int32`, `tf.argmax` is `int64`, so dividing a float sum by a count is an easy way to hit it.

## Example
```python
x = tf.random.normal([8, 3])
mean = tf.reduce_sum(x) / tf.shape(x)[0]
decay = tf.constant(0.96) ** tf.range(10)
```

## Use instead
```python
x = tf.random.normal([8, 3])
mean = tf.reduce_sum(x) / tf.cast(tf.shape(x)[0], tf.float32)
decay = tf.constant(0.96) ** tf.cast(tf.range(10), tf.float32)
```

## Course module
Module 1, *No implicit dtype promotion: tf.cast* (`dtype-casting`).
"""

# ``experimental_enable_numpy_behavior(prefer_float32=False, dtype_conversion_mode="legacy")``,
# and the older ``np_config.enable_numpy_behavior`` (same signature) that TF guides still use.
_NUMPY_BEHAVIOR = (
    "tf.experimental.numpy.experimental_enable_numpy_behavior",
    "tf.python.ops.numpy_ops.np_config.enable_numpy_behavior",
)
# What ``dtype_conversion_mode`` does to an int/float mix, measured with TensorFlow 2.21
# (``int32`` tensor + ``float32`` tensor, eager and in a tf.function):
#   "legacy" (the default): promotes everything, NumPy style (int32 + float32 -> float64);
#   "all": promotes every pair (tf.shape(x)[0] / float32 tensor -> float64);
#   "safe": promotes only lossless pairs (int8 + float16, int16 + float32, int32 + float64)
#     and any pair with a weakly typed tensor (``tf.constant([1, 2])`` from a Python
#     literal), but raises for int32 + float32 from e.g. tf.shape / tf.range. Weak typing is
#     beyond this analysis, so "safe" counts as promoting: silence over false alarms;
#   "off": no promotion, the mix fails as without the call.
_NON_PROMOTING_MODES = frozenset({"off"})
_NARROW_FLOATS = frozenset({"float16", "half", "bfloat16"})


def _numpy_promotion(ctx: RuleContext) -> bool:
    """True when the file may turn on NumPy-style dtype promotion (a non-literal mode
    argument counts: its mode is unknown)."""
    for canonical in _NUMPY_BEHAVIOR:
        for site in ctx.calls_to(canonical):
            call = site.node
            assert isinstance(call, ast.Call)
            if has_unpacking(call):
                return True
            mode = positional(call, 1) or keyword(call, "dtype_conversion_mode")
            if not (
                isinstance(mode, ast.Constant)
                and isinstance(mode.value, str)
                and mode.value in _NON_PROMOTING_MODES
            ):
                return True
    return False


def _cast_fix(
    ctx: RuleContext, cast: str | None, int_side: ast.expr, int_dtype: str, float_dtype: str
) -> Fix | None:
    """``tf.cast(<int side>, tf.<float dtype>)`` in place of the integer operand."""
    if cast is None:
        return None
    dtype_text = ctx.tf_ref(f"tf.{float_dtype}") or repr(float_dtype)
    replacement = f"{cast}({ctx.text(int_side)}, {dtype_text})"
    return Fix(
        f"Cast the {int_dtype} operand: `{replacement}`", (ctx.replace(int_side, replacement),)
    )


_LITERAL_TYPES = frozenset({ast.Constant, ast.UnaryOp})  # ``0.5``, ``-0.5``


def _python_float_side(node: ast.BinOp) -> ast.expr | None:
    """The operand that is a Python float literal (``0.1``, ``-1.5``, ``2.0``), if one is."""
    for side in (node.left, node.right):
        if isinstance(number_literal(side), float):
            return side
    return None


def _int_tensor_with_python_float(
    ctx: RuleContext, site: Site, node: ast.BinOp, number: ast.expr, cast: str | None
) -> Finding | None:
    """``tf.range(10) * 0.1``: TensorFlow converts the float to the tensor's integer dtype
    and raises (measured on TF 2.21 for + - * / // ** with int32 and int64 tensors)."""
    int_side = node.right if number is node.left else node.left
    value = ctx.value(int_side, site)
    if not value.is_tensor_like or dtype_category(value.dtype) != "int":
        return None
    fix = _cast_fix(ctx, cast, int_side, value.dtype or "int", "float32")
    return ctx.finding(
        CODE,
        node,
        f"`{ctx.short(node)}` mixes an {value.dtype} tensor with the Python float "
        f"`{ctx.text(number)}`; TensorFlow converts the number to {value.dtype} and "
        "fails: cast the tensor to a float dtype with tf.cast",
        fix,
    )


def check(ctx: RuleContext) -> Iterator[Finding]:
    if not ctx.model.binops or _numpy_promotion(ctx):
        return
    cast = ctx.tf_ref("tf.cast")
    for site in ctx.model.binops:
        node = site.node
        assert isinstance(node, ast.BinOp)
        if type(node.op) not in ARITHMETIC_OPERATORS:
            continue
        left_type, right_type = type(node.left), type(node.right)
        # Only a literal (``0.1``, ``-1.5``) can be a Python float: most operations have none.
        if _LITERAL_TYPES.intersection((left_type, right_type)):
            float_number = _python_float_side(node)
            if float_number is not None:
                finding = _int_tensor_with_python_float(ctx, site, node, float_number, cast)
                if finding is not None:
                    yield finding
                continue
            # Cheap structural filter first: a Python number converts to the tensor's dtype
            # (``x * 2``), and other literals are never tensors.
            if left_type is ast.Constant or right_type is ast.Constant:
                continue
        left = ctx.value(node.left, site)
        if not left.is_tensor_like or dtype_category(left.dtype) is None:
            continue
        right = ctx.value(node.right, site)
        if not right.is_tensor_like or dtype_category(right.dtype) is None:
            continue
        if dtype_category(left.dtype) == dtype_category(right.dtype):
            continue
        if dtype_category(left.dtype) == "int":
            int_side, int_dtype, float_dtype = node.left, left.dtype, right.dtype
        else:
            int_side, int_dtype, float_dtype = node.right, right.dtype, left.dtype
        assert float_dtype is not None
        # A 16-bit float cannot hold large counts or indices (float16 tops out at 65504):
        # whether to cast the int down or the float up is the author's call.
        fix = None
        if float_dtype not in _NARROW_FLOATS:
            fix = _cast_fix(ctx, cast, int_side, int_dtype or "int", float_dtype)
        yield ctx.finding(
            CODE,
            node,
            f"`{ctx.short(node)}` mixes {left.dtype} and {right.dtype} tensors "
            f"(`{ctx.short(int_side, 40)}` is {int_dtype}); TensorFlow does not promote "
            f"dtypes, so this fails: cast one side with tf.cast",
            fix,
        )
