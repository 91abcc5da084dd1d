"""TFC009: arithmetic between an integer tensor and a floating-point tensor."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jupyterlab_tfcoach.analysis.bindings import dtype_category
from jupyterlab_tfcoach.analysis.context import RuleContext
from jupyterlab_tfcoach.analysis.findings import Finding, Fix, Severity
from jupyterlab_tfcoach.analysis.rules._common import ARITHMETIC_OPERATORS

CODE = "TFC009"
NAME = "mixed-dtype-arithmetic"
SEVERITY = Severity.WARNING
SECTION = "dtype-casting"
FIXABLE = True

DOCS = """
## What it does
Flags arithmetic (`+ - * / // % ** @`) between two tensors whose dtypes are statically known
and where one is an integer type and the other a floating-point type, e.g.
`tf.constant([1, 2]) + tf.constant([0.5, 1.0])`.

## Why is this bad?
Unlike NumPy, TensorFlow never promotes dtypes implicitly: `int32 + float32` raises
`InvalidArgumentError` (eagerly) or a `TypeError`/`ValueError` while tracing. Python integer
literals become `int32` tensors and Python floats `float32` tensors, so the mismatch is easy to
create by accident.

## Example
```python
counts = tf.constant([1, 2, 3])
weights = tf.constant([0.5, 0.25, 0.25])
total = counts * weights
```

## Use instead
```python
counts = tf.constant([1, 2, 3])
weights = tf.constant([0.5, 0.25, 0.25])
total = tf.cast(counts, tf.float32) * weights
```

## Course module
Module 1, *No implicit dtype promotion: tf.cast* (`dtype-casting`).
"""


def check(ctx: RuleContext) -> Iterator[Finding]:
    cast = ctx.tf_ref("tf.cast")
    for site in ctx.model.binops:
        node = site.node
        assert isinstance(node, ast.BinOp)
        if type(node.op) not in ARITHMETIC_OPERATORS:
            continue
        # Cheap structural filter first: plain literals/constants never are tensors.
        if isinstance(node.left, ast.Constant) or isinstance(node.right, ast.Constant):
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
        fix = None
        if cast:
            dtype_text = ctx.tf_ref(f"tf.{float_dtype}") or repr(float_dtype)
            replacement = f"{cast}({ctx.text(int_side)}, {dtype_text})"
            fix = Fix(
                f"Cast the {int_dtype} operand: `{replacement}`",
                (ctx.replace(int_side, replacement),),
            )
        yield ctx.finding(
            CODE,
            node,
            f"`{ctx.short(node)}` mixes {left.dtype} and {right.dtype} tensors; TensorFlow does "
            f"not promote dtypes, so this fails: cast one side with tf.cast",
            fix,
        )
