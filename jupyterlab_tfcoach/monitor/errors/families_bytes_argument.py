"""A string tensor given where Python wants ``bytes``: ``tf.train.Example.FromString(raw)``
on an element of a ``TFRecordDataset``, ``ParseFromString``, a file's ``write``.

Iterating a dataset eagerly gives tensors, and a scalar string tensor is not a Python
``bytes`` object: protobuf's parser raises ``expected bytes, ...EagerTensor found`` in the
learner's own line, naming only a type. The reading finds the argument on the line that
holds an eager string tensor and says what it is; the fix reads its bytes with
``.numpy()`` (only eagerly: inside a traced function there are no bytes to read, and
``tf.io.parse_single_example`` is the way there).
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite, value_kind
from jupyterlab_tfcoach.monitor.errors.failing_line import (
    FailingLine,
    describe,
    show_shape,
    value_of,
)
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)

_DATA_SECTION = "tf-data"
_EXPECTED_BYTES = re.compile(
    r"^(?:expected bytes|a bytes-like object is required), (?:not '[\w.]+'|[\w.]+ found)"
)


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    statement = line.statement
    if statement is None:
        return None
    for node in ast.walk(statement):
        if not isinstance(node, ast.Call):
            continue
        for argument in node.args:
            source = line.frame.segment(argument)
            if not source or "\n" in source:
                continue
            try:
                found, value = value_of(argument, line.frame, context)
            except Exception:
                continue
            if not found or value_kind(value) != "tensor":
                continue
            described = describe(source, value)
            if described is None or described.dtype != "string":
                continue
            callee = line.frame.segment(node.func) or "the call"
            rule = (
                f"{described.sentence()}. {code(callee)} reads Python `bytes`, and a string "
                "tensor (what iterating a dataset gives) is not bytes: "
                f"{code(source + '.numpy()')} gives them"
            )
            if described.shape:
                rule += (
                    f" (one bytes object per entry: this tensor has shape "
                    f"{show_shape(described.shape)}, so take one entry first)"
                )
                return Finding(rule + ".", None, section=_DATA_SECTION)
            fixed = rewrite(line.frame, statement, argument, f"{source}.numpy()")
            if not fixed or "\n" in fixed:
                return Finding(rule + ".", None, section=_DATA_SECTION)
            return Finding(rule + ".", code(fixed), section=_DATA_SECTION)
    return None


BYTES_ARGUMENT = ErrorFamily(
    "a string tensor given where Python wants bytes",
    messages=(Message(_EXPECTED_BYTES),),
    exception_type="TypeError",
    read=_read,
    section=_DATA_SECTION,
    without_library=True,
)
