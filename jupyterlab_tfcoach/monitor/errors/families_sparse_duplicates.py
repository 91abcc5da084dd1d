"""A sparse tensor holding the same position twice, made dense (issue #25):
``tf.sparse.to_dense(counts)`` where ``counts`` was built from (row, column) pairs that
repeat: a word seen twice in one text, two words hashed to the same bucket, a user who
rated the same item twice.

TensorFlow says ``indices[23] = [1,287] is repeated``: a dense tensor has one value per
position, and ``to_dense`` will not choose. The reading names the sparse tensor and the
repeated position; when each entry is an amount to add up (counts, weights), the values
of a repeated position are summed: ``tf.scatter_nd`` adds the updates that share an
index, so ``tf.scatter_nd(sp.indices, sp.values, sp.dense_shape)`` is the dense tensor
with the repeats added. A ``default_value`` other than zero is not reproduced by that
sum, so no fix is printed then.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    tf_alias,
)

_REPEATED = re.compile(r"indices\[(?P<at>\d+)\] = \[(?P<index>[\d,]+)\] is repeated")


def _read_repeated(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    call = line.call
    if not isinstance(call, ast.Call) or not call.args or line.statement is None:
        return None
    node = call.args[0]
    found, sparse = value_of(node, line.frame, context)
    source = line.frame.segment(node)
    if not found or type(sparse).__name__ != "SparseTensor" or not source:
        return None
    dtype = getattr(getattr(sparse, "dtype", None), "name", None)
    position = "(" + ", ".join(error.group("index").split(",")) + ")"
    rule = (
        f"{code(source)} holds position {position} more than once (entry "
        f"{error.group('at')} of its indices repeats an earlier one), and a dense tensor has "
        "one value per position. Repeated positions come from the pairs it was built from: "
        "an item counted twice in the same row (a word repeated in a text, two words "
        "hashed to the same bucket). When its values are amounts to add up (counts, "
        "weights), sum the repeats: `tf.scatter_nd` adds the values that share a position"
    )
    if any(keyword.arg == "default_value" for keyword in call.keywords) or len(call.args) > 1:
        return Finding(rule + ".", None)
    if not isinstance(node, (ast.Name, ast.Attribute)) or dtype in (None, "string"):
        return Finding(rule + ".", None)
    tf = tf_alias(context)
    summed = f"{tf}.scatter_nd({source}.indices, {source}.values, {source}.dense_shape)"
    fixed = rewrite(line.frame, line.statement, call, summed)
    return Finding(rule + ".", code(fixed) if fixed and "\n" not in fixed else None)


SPARSE_REPEATS = ErrorFamily(
    "a sparse tensor holding the same position twice, made dense",
    messages=(Message(_REPEATED),),
    read=_read_repeated,
    section="joining-indexing",
)
