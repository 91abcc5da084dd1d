"""Capped readers of the values a name holds: a NumPy array as it is, an eager tensor as a
NumPy copy, only after its shape and dtype (``describe``) said it is small enough.

The symptom checks (``symptoms/cell_reading.py`` re-exports these) and the error families
both read values this way. They live beside ``failing_line`` and ``context``, which they
use, so an error family can read a value without importing the symptoms package (whose
readers import ``monitor.syntax``, which imports this package: a cycle).
"""

from __future__ import annotations

import sys
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import value_kind
from jupyterlab_tfcoach.monitor.errors.failing_line import Operand, describe
from jupyterlab_tfcoach.monitor.stored_state import library_attribute

# Values are read (min and max) only for arrays this small: a copy and two passes.
MAX_RANGE_ELEMENTS = 1_000_000


def size_of(shape: tuple[int | None, ...]) -> int | None:
    size = 1
    for dim in shape:
        if dim is None:
            return None
        size *= dim
    return size


def numpy_values(operand: Operand, max_elements: int = MAX_RANGE_ELEMENTS) -> Any | None:
    """A NumPy copy of a tensor, variable or array of at most ``max_elements`` values
    (TensorFlow's own ``numpy`` makes it; a NumPy array is read as it is); None for
    anything else or empty."""
    if operand.shape is None:
        return None
    size = size_of(operand.shape)
    if size is None or size == 0 or size > max_elements:
        return None
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return None
    value = operand.value
    if operand.kind != "array":
        to_numpy = library_attribute(value, "numpy")
        if to_numpy is None:
            return None
        value = to_numpy()
    return value if type(value) is numpy.ndarray else None


# The dtype names (``describe``'s, TensorFlow's and NumPy's) of each family of values.
INTEGERS = ("int", "uint")
NUMBERS = ("int", "uint", "float", "bfloat", "half")
TEXTS = ("str", "bytes", "object")  # NumPy's str<n>, bytes<n>, object; TensorFlow's string
_HELD_KINDS = ("array", "tensor")
# TensorFlow's calls whose result is bool whatever they are given (a comparison written as
# a call): a reduction or cast of one reads a bool value. The integer-mean check and the
# bool-reduction family add the few they also know.
BOOL_RESULT_CALLS = frozenset(
    {
        "equal",
        "not_equal",
        "greater",
        "greater_equal",
        "less",
        "less_equal",
        "logical_and",
        "logical_or",
        "logical_not",
        "is_nan",
        "is_finite",
    }
)


def held_array(
    value: Any, max_elements: int, dtypes: tuple[str, ...], ndim: int | None = None
) -> Any | None:
    """The values of a NumPy array (itself) or eager tensor (a NumPy copy), never a
    variable or the learner's class, of 1 to ``max_elements`` values whose dtype name
    starts with one of ``dtypes`` and, when given, of rank ``ndim``; None for anything
    else. The shape and dtype are read first (``describe``): a tensor too large is never
    copied."""
    operand = describe("", value)
    if operand is None or operand.kind not in _HELD_KINDS or operand.shape is None:
        return None
    if ndim is not None and len(operand.shape) != ndim:
        return None
    if not (operand.dtype or "").startswith(dtypes):
        return None
    return numpy_values(operand, max_elements)


def integer_labels(value: Any, max_rows: int) -> Any | None:
    """The values of a 1-D integer array or eager tensor of 2 to ``max_rows`` values (class
    labels, an index permutation), as ``held_array`` reads them."""
    values = held_array(value, max_rows, INTEGERS, ndim=1)
    return values if values is not None and values.shape[0] > 1 else None


def first_axis(value: Any) -> int | None:
    """The length of the first axis of a NumPy array or eager tensor, from its stored
    shape; None for anything else, a scalar or an unknown length."""
    if value_kind(value) not in _HELD_KINDS:
        return None
    operand = describe("", value)
    shape = operand.shape if operand is not None else None
    return shape[0] if shape else None
