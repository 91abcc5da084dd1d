"""A ``tf.TensorArray`` written past the size it was made with.

``tf.TensorArray(tf.float32, size=0)`` holds exactly ``size`` elements unless it is made
with ``dynamic_size=True``; writing element ``size`` or later fails. In a ``tf.function``
the loop's write raises a graph error whose message is ``Trying to modify element 0 in a
list with 0 elements``, reported at the line that called the function, far from the
array; eagerly it is ``Tried to write to index 2 but array is not resizeable``. The cause
to name is the array's construction: it is found where the writes are (the function the
failing line calls, else the failing frame's own function or cell), as the one
``TensorArray(...)`` assigned to a name that is then written with ``.write(...)``. The fix
makes it grow as it is written (``dynamic_size=True``), which holds for any number of
steps; the size could also be the number of steps, but that number is the learner's.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.cell_sources import SourceCell, error_cells
from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)

_GRAPH_WRITE = re.compile(
    r"Trying to modify element (?P<index>\d+) in a list with (?P<size>\d+) elements"
)
_EAGER_WRITE = re.compile(
    r"Tried to write to index (?P<index>\d+) but array is not resizeable and size is: (?P<size>\d+)"
)


def _called_name(line: FailingLine) -> str | None:
    call = line.call
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
        return call.func.id
    return None


def _scopes(line: FailingLine, context: ErrorContext) -> list[tuple[SourceCell, ast.AST]]:
    """Where the writes may be: the definition of the function the failing line calls
    (newest cell first), then the failing frame's own cell."""
    scopes: list[tuple[SourceCell, ast.AST]] = []
    called = _called_name(line)
    cells = error_cells(context)
    if called is not None:
        for cell in cells:
            tree = cell.tree()
            if tree is None:
                continue
            found = [
                node
                for node in ast.walk(tree)
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == called
            ]
            if found:
                scopes.append((cell, found[-1]))
                break
    if cells:
        tree = cells[0].tree()
        if tree is not None:
            scopes.append((cells[0], tree))
    return scopes


def _fixed_arrays(scope: ast.AST) -> list[tuple[ast.Assign, ast.Call]]:
    """``name = tf.TensorArray(...)`` without ``dynamic_size=True``, whose name is
    written with ``name.write(...)`` in the same scope."""
    written = {
        node.func.value.id
        for node in ast.walk(scope)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "write"
        and isinstance(node.func.value, ast.Name)
    }
    found = []
    for node in ast.walk(scope):
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in written
            and isinstance(node.value, ast.Call)
        ):
            continue
        call = node.value
        name = call.func.attr if isinstance(call.func, ast.Attribute) else None
        if name is None and isinstance(call.func, ast.Name):
            name = call.func.id
        if name != "TensorArray":
            continue
        dynamic = next((k.value for k in call.keywords if k.arg == "dynamic_size"), None)
        if isinstance(dynamic, ast.Constant) and dynamic.value is True:
            continue
        if dynamic is not None and not isinstance(dynamic, ast.Constant):
            continue  # a value the learner computes: not ours to read
        found.append((node, call))
    return found


def _read(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    for cell, scope in _scopes(line, context):
        arrays = _fixed_arrays(scope)
        if len(arrays) != 1:
            continue
        statement, call = arrays[0]
        name = statement.targets[0].id  # type: ignore[attr-defined]
        made = cell.segment(statement)
        if not made or "\n" in made:
            return None
        size = next((k for k in call.keywords if k.arg == "size"), None)
        size_text = cell.segment(size.value) if size is not None else None
        if size is None and len(call.args) > 1:
            size_text = cell.segment(call.args[1])
        where = f"line {statement.lineno} of {cell.label}"
        rule = (
            f"{code(name)} is a TensorArray made with a fixed size"
            + (f" ({code('size=' + size_text)})" if size_text else "")
            + f", {code(made)} on {where}: it holds exactly that many elements, and the "
            f"loop writes element {error.group('index')} of an array of "
            f"{error.group('size')}. Made with `dynamic_size=True` it grows as it is "
            "written (or give it the number of steps as its size)"
        )
        call_text = cell.segment(call)
        if not call_text or not call_text.endswith(")"):
            return Finding(rule + ".", None)
        grown = re.sub(r",?\s*dynamic_size\s*=\s*False", "", call_text[:-1])
        separator = ", " if call.args or call.keywords else ""
        fixed = made.replace(call_text, f"{grown}{separator}dynamic_size=True)", 1)
        return Finding(rule + ".", code(fixed))
    return None


TENSOR_ARRAY_SIZE = ErrorFamily(
    "a TensorArray written past its fixed size",
    messages=(Message(_GRAPH_WRITE), Message(_EAGER_WRITE)),
    read=_read,
    section="python-loops",
)
