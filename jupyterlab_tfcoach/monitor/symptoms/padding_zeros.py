"""0 taken for padding in sequences where 0 is also a real value.

``padded_batch`` and ``pad_sequences`` pad with 0 unless told otherwise, and code that
counts or masks the real steps then tests ``tokens != 0`` (``tf.not_equal(tokens, 0)``,
``tokens > 0``). When the data itself holds 0 (token ids from 0, a reading of 0), those
real zeros are taken for padding too: lengths come out too short, masks hide real steps,
and nothing raises.

After a cell that completed (a cell without ``!= 0``, ``> 0`` or ``not_equal(`` costs one
regular-expression search), each top-level ``X != 0`` / ``X > 0`` / ``not_equal(X, 0)``
of the cell is read: ``X`` (a name, also under ``tf.cast``) holds a 2-D integer tensor
or array (at most ``MAX_VALUES`` values) in which some row has a 0 with non-zero values
on both sides. Padding sits at one end of a row (``post`` or ``pre``), so such a 0 is
data. The note names the comparison, the rows and the first such position; fix: when
the cell builds the batch with ``padded_batch`` (without ``padding_values``), that
statement padding with -1 and the comparison made with -1.

Reads the values of ``X`` only (a few vectorised passes); nothing here imports
TensorFlow or prints.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import library_attribute
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import INTEGERS, held_array, unwrap
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "tf-data"
MAX_VALUES = 1_000_000
MAX_CELL_CHARS = 50_000
_WANTED = re.compile(r"(?:!=|>)\s*0(?![\w.])|not_equal\(")


def _zero_test(node: ast.AST) -> tuple[ast.AST, ast.AST] | None:
    """(the tested operand, the 0) of ``X != 0``, ``X > 0``, ``not_equal(X, 0)``."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        zero = node.comparators[0]
        if isinstance(node.ops[0], ast.NotEq | ast.Gt) and _is_zero(zero):
            return node.left, zero
    if isinstance(node, ast.Call) and call_name(node) == "not_equal" and len(node.args) == 2:
        if _is_zero(node.args[1]):
            return node.args[0], node.args[1]
    return None


def _is_zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value == 0


def _inner_zero(values: Any) -> tuple[int, int, int] | None:
    """(rows with a 0 between non-zero values, the first such row, its position)."""
    numpy = sys.modules["numpy"]
    filled = values != 0
    width = values.shape[1]
    first = numpy.argmax(filled, axis=1)
    last = width - 1 - numpy.argmax(filled[:, ::-1], axis=1)
    counted = filled.sum(axis=1)
    inner = (counted > 0) & (last - first + 1 > counted)
    rows = int(inner.sum())
    if rows == 0:
        return None
    row = int(numpy.argmax(inner))
    span = filled[row, first[row] : last[row] + 1]
    return rows, row, int(first[row] + numpy.argmin(span))


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a test against 0 on sequences that hold real zeros, if any."""
    if len(source) > MAX_CELL_CHARS or _WANTED.search(source) is None:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for statement in tree.body:
        for node in ast.walk(statement):
            found = _zero_test(node)
            if found is None:
                continue
            tested = unwrap(found[0])
            if not isinstance(tested, ast.Name):
                continue
            values = held_array(namespace.get(tested.id), MAX_VALUES, INTEGERS, ndim=2)
            inner = _inner_zero(values) if values is not None else None
            if inner is not None:
                return [_note(node, tested.id, values.shape, inner, tree, source, namespace)]
    return []


def _padded_batch_fix(tree: ast.Module, source: str, namespace: Mapping[str, Any]) -> str | None:
    """The cell's ``name = ....padded_batch(...)`` with ``padding_values`` of -1 for the
    first component (0 for the others) when it gives none."""
    for statement in tree.body:
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and isinstance(statement.value, ast.Call)
            and call_name(statement.value) == "padded_batch"
        ):
            continue
        call = statement.value
        if any(k.arg == "padding_values" for k in call.keywords) or len(call.args) > 2:
            return None
        spec = library_attribute(namespace.get(statement.targets[0].id), "element_spec")
        if type(spec) is tuple:
            values = ", ".join(["-1"] + ["0"] * (len(spec) - 1))
            padding = f"({values})"
        else:
            padding = "-1"
        written = ast.get_source_segment(source, statement)
        call_text = ast.get_source_segment(source, call)
        if written is None or call_text is None or "\n" in written:
            return None
        fixed_call = call_text[:-1].rstrip() + f", padding_values={padding})"
        return written.replace(call_text, fixed_call, 1)
    return None


def _note(
    node: ast.AST,
    name: str,
    shape: tuple[int, ...],
    inner: tuple[int, int, int],
    tree: ast.Module,
    source: str,
    namespace: Mapping[str, Any],
) -> Note:
    written = ast.get_source_segment(source, node) or f"{name} != 0"
    rows, row, position = inner
    many = f"{rows} of its {shape[0]} rows hold" if rows > 1 else f"1 of its {shape[0]} rows holds"
    text = (
        f"`{written}` (line {getattr(node, 'lineno', 0)} of this cell) takes 0 for padding, "
        f"but 0 is also a real value of `{name}`: {many} a 0 between other values (row "
        f"{row}, position {position}), where no padding can be. Those real zeros are "
        "counted as padding: lengths come out too short and masks hide real steps. "
        "Nothing raises. Pad with a value the data never holds, and test for that value"
    )
    fix = _padded_batch_fix(tree, source, namespace)
    if fix is not None:
        compared = written.replace("0", "-1") if written.count("0") == 1 else None
        if compared is not None:
            text += f": `{fix}`, and `{compared}`."
            return reports.note(text, SECTION)
    text += (
        " (`padding_values=-1` in `padded_batch`, `value=-1` in `pad_sequences`), or shift "
        "the ids by 1 so that 0 is free for padding."
    )
    return reports.note(text, SECTION)
