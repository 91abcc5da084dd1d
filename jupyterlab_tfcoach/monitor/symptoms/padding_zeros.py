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

``count_nonzero(X, ...)`` (NumPy's or TensorFlow's) is read the same way: it counts the
values that are not 0, so on sequences padded with 0 that hold real zeros it gives
lengths too short. Its fix takes the lengths before padding (``[len(row) for row in
rows]`` when the cell pads ``rows`` with ``pad_sequences``), since padding with -1 would
make it count the padding too. ``X`` may be a local of a function of the cell that
returns it: its value is then read from the name the cell's call of that function
assigned it to (``return padded, lengths`` and ``Xs, Ls = pad(...)``).

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
_WANTED = re.compile(r"(?:!=|>)\s*0(?![\w.])|not_equal\(|count_nonzero\(")


def _zero_test(node: ast.AST) -> tuple[ast.AST, ast.AST] | None:
    """(the tested operand, the 0) of ``X != 0``, ``X > 0``, ``not_equal(X, 0)``."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        zero = node.comparators[0]
        if isinstance(node.ops[0], ast.NotEq | ast.Gt) and _is_zero(zero):
            return node.left, zero
    if isinstance(node, ast.Call) and call_name(node) == "not_equal" and len(node.args) == 2:
        if _is_zero(node.args[1]):
            return node.args[0], node.args[1]
    if isinstance(node, ast.Call) and call_name(node) == "count_nonzero" and node.args:
        return node.args[0], node
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
            for held_as in _held_names(tested.id, statement, node, tree):
                values = held_array(namespace.get(held_as), MAX_VALUES, INTEGERS, ndim=2)
                inner = _inner_zero(values) if values is not None else None
                if inner is not None:
                    via = None if held_as == tested.id else held_as
                    return [
                        _note(node, tested.id, values.shape, inner, tree, source, namespace, via)
                    ]
    return []


def _held_names(name: str, statement: ast.stmt, node: ast.AST, tree: ast.Module) -> list[str]:
    """The namespace names whose values ``name`` had where ``node`` tests it: ``name``
    itself, or, for a local of a top-level function of the cell that returns it, the names
    the cell's calls of that function assigned it to."""
    if not isinstance(statement, ast.FunctionDef):
        return [name]
    assigned = any(
        isinstance(target, ast.Name) and target.id == name and isinstance(target.ctx, ast.Store)
        for target in ast.walk(statement)
    ) or name in {a.arg for a in statement.args.args}
    if not assigned:
        return [name]
    returns = [n for n in ast.walk(statement) if isinstance(n, ast.Return)]
    if len(returns) != 1 or returns[0].value is None:
        return []
    returned = returns[0].value
    items = returned.elts if isinstance(returned, ast.Tuple) else [returned]
    index = next(
        (i for i, item in enumerate(items) if isinstance(item, ast.Name) and item.id == name),
        None,
    )
    if index is None:
        return []
    names = []
    for later in tree.body:
        if not (
            isinstance(later, ast.Assign)
            and len(later.targets) == 1
            and isinstance(later.value, ast.Call)
            and isinstance(later.value.func, ast.Name)
            and later.value.func.id == statement.name
        ):
            continue
        target = later.targets[0]
        if isinstance(returned, ast.Tuple):
            if isinstance(target, ast.Tuple) and len(target.elts) == len(items):
                element = target.elts[index]
                if isinstance(element, ast.Name):
                    names.append(element.id)
        elif isinstance(target, ast.Name):
            names.append(target.id)
    return names


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


def _padded_from(name: str, tree: ast.Module, source: str) -> str | None:
    """``rows`` of the cell's one ``name = ...pad_sequences(rows, ...)``, when ``rows`` is
    a plain name (the sequences before padding)."""
    found = [
        node.value.args[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id == name
        and isinstance(node.value, ast.Call)
        and call_name(node.value) == "pad_sequences"
        and node.value.args
    ]
    if len(found) != 1 or not isinstance(found[0], ast.Name):
        return None
    return ast.get_source_segment(source, found[0])


def _note(
    node: ast.AST,
    name: str,
    shape: tuple[int, ...],
    inner: tuple[int, int, int],
    tree: ast.Module,
    source: str,
    namespace: Mapping[str, Any],
    via: str | None = None,
) -> Note:
    written = ast.get_source_segment(source, node) or f"{name} != 0"
    rows, row, position = inner
    many = f"{rows} of its {shape[0]} rows hold" if rows > 1 else f"1 of its {shape[0]} rows holds"
    held = f"`{name}` (read as `{via}`, where this cell keeps it)" if via else f"`{name}`"
    text = (
        f"`{written}` (line {getattr(node, 'lineno', 0)} of this cell) takes 0 for padding, "
        f"but 0 is also a real value of {held}: {many} a 0 between other values (row "
        f"{row}, position {position}), where no padding can be. Those real zeros are "
        "counted as padding: lengths come out too short and masks hide real steps. "
        "Nothing raises."
    )
    if isinstance(node, ast.Call) and call_name(node) == "count_nonzero":
        rows_source = _padded_from(name, tree, source)
        if rows_source is not None:
            lengths = f"[len(row) for row in {rows_source}]"
            text += (
                f" Take the lengths before padding, where each row still has its own: `{lengths}`."
            )
        else:
            text += (
                " Take the lengths before padding, where each row still has its own "
                "(`len` of each sequence); padding with -1 would not help `count_nonzero`, "
                "which counts -1 too."
            )
        return reports.note(text, SECTION)
    text = text[:-1] + ". Pad with a value the data never holds, and test for that value"
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
