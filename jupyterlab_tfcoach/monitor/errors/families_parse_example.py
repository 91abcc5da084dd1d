"""A ``tf.train.Example`` feature declared with fewer values than its records hold (#25).

``feature_description = {"x": tf.io.FixedLenFeature([], tf.float32), ...}`` parses one
float per record, but each record stores 4 under ``"x"``: parsing fails, inside the
dataset's ``map``, with ``Key: x.  Can't parse serialized Example: Some float_list slice
was not parsed`` (the same for any shape smaller than what was written). The reading
finds, in the cells, the dict that declares that key with a ``FixedLenFeature`` (its
name and statement) and, when it can, how many values a record holds: the dict that
wrote the key (``"x": _float_feature(features[i])``) indexes a NumPy array or tensor of
the namespace by its first axis, so a record holds the rest of its shape. The fix is the
declaration with that shape, ``tf.io.FixedLenFeature([4], tf.float32)``; with the size
unknown, ``tf.io.FixedLenSequenceFeature([], tf.float32, allow_missing=True)``, which
reads every value a record has.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.cell_sources import nodes_in_cells
from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, value_kind
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, describe
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)

SECTION = "tf-data"
_NOT_PARSED = re.compile(
    r"Key: (?P<key>[\w./-]+)\.\s+Can't parse serialized Example: Some (?P<kind>float|int64|bytes)"
    r"_list slice was not parsed"
)
_MAX_SHOWN = 160


def _key_value(node: ast.Dict, key: str) -> ast.expr | None:
    for name, value in zip(node.keys, node.values, strict=True):
        if isinstance(name, ast.Constant) and name.value == key:
            return value
    return None


def _called(node: ast.expr) -> str | None:
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


def _record_shape(written: ast.expr, context: ErrorContext) -> tuple[int, ...] | None:
    """The shape of one record's values: ``features[i]`` in the writing expression, for
    ``features`` an array or tensor of the namespace (its shape without the first axis)."""
    for node in ast.walk(written):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            found, value = context.lookup(node.value.id, None)
            if not found or value_kind(value) not in ("array", "tensor"):
                continue
            held = describe(node.value.id, value)
            shape = held.shape if held is not None else None
            if shape and len(shape) >= 2 and all(type(d) is int for d in shape[1:]):
                return tuple(d for d in shape[1:] if type(d) is int)
    return None


def _mapped(line: FailingLine) -> str | None:
    """``parse_example`` of ``raw_ds.map(parse_example)`` on the failing line."""
    for part in line.frame.header():
        for node in ast.walk(part):
            if (
                _called(node) == "map"
                and isinstance(node, ast.Call)
                and node.args
                and isinstance(node.args[0], ast.Name)
            ):
                return node.args[0].id
    return None


def _read_not_parsed(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    key = error.group("key")
    declared = None
    written = None
    for cell, node in nodes_in_cells(context):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            value = _key_value(node.value, key)
            if declared is None and _called(value) == "FixedLenFeature" and node.targets:
                declared = (cell, node, value)
        elif isinstance(node, ast.Dict) and written is None:
            value = _key_value(node, key)
            if value is not None and _called(value) not in (
                "FixedLenFeature",
                "FixedLenSequenceFeature",
                "VarLenFeature",
            ):
                written = (cell, value)
    if declared is None:
        return None
    cell, statement, feature = declared
    name = cell.segment(statement.targets[0])
    shown = cell.segment(feature)
    assert isinstance(feature, ast.Call)
    if not name or not shown or "\n" in shown or len(feature.args) < 2:
        return None
    dtype = cell.segment(feature.args[1]) or "tf.float32"
    module = (cell.segment(feature.func) or "tf.io.FixedLenFeature")[: -len("FixedLenFeature")]
    rule = (
        f"{code(name)} declares {code(repr(key))} as {code(shown)} ({cell.label}): a fixed "
        f"number of values per record, the shape given, but the records hold more "
        f"{error.group('kind')} values under {code(repr(key))} than that shape, so "
        "TensorFlow could not parse them all"
    )
    mapped = _mapped(line)
    if mapped:
        rule += f" (in {code(mapped)}, the function the dataset maps)"
    shape = _record_shape(written[1], context) if written is not None else None
    if shape and written is not None:
        listed = ", ".join(str(d) for d in shape)
        fixed = f"{module}FixedLenFeature([{listed}], {dtype})"
        source = written[0].segment(written[1])
        rule += f"; each record holds {' x '.join(str(d) for d in shape)} values" + (
            f" (written as {code(source)})" if source and "\n" not in source else ""
        )
    else:
        fixed = f"{module}FixedLenSequenceFeature([], {dtype}, allow_missing=True)"
        rule += "; declare the number each record holds, or read them whatever their number"
    if len(fixed) > _MAX_SHOWN:
        return Finding(rule + ".", None)
    return Finding(rule + ".", f"in {code(name)}, in place of {code(shown)}, write {code(fixed)}")


FEATURE_SHAPE = ErrorFamily(
    "a parsed Example feature declared with fewer values than its records hold",
    messages=(Message(_NOT_PARSED),),
    read=_read_not_parsed,
    section=SECTION,
)
