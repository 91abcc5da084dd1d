"""``Dataset.from_generator`` given a function that returns one existing generator.

``from_generator`` calls its first argument each time the dataset is iterated (each
epoch, each ``for`` loop, each ``take``) and reads a new generator from it. Given
``lambda: stream`` where ``stream`` is a generator (or any iterator) made once, every
call returns that same object: the first pass uses it up, and every later pass (the
second epoch of ``fit``, a second loop) gets 0 elements. Nothing raises; ``fit`` only
warns that its input ran out of data.

After a cell that completed (a cell without ``from_generator`` costs one substring
test), each ``from_generator(<f>, ...)`` call of the cell is read: ``<f>`` is a
``lambda`` without parameters whose body is a name (or ``iter(name)``) that holds, after
the cell, a generator or another iterator (its class defines ``__next__``). The note
names the call and the iterator; fix: the lambda building a new generator each call,
from the expression the cell assigned to that name when it has one
(``lambda: ((np.float32(i) / 10, i % 3) for i in range(10))``).

Reads type names and the source only; nothing here imports TensorFlow or prints.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "python-iterators"
MAX_CELL_CHARS = 50_000


def _returned_name(function: ast.AST) -> str | None:
    """``stream`` for ``lambda: stream`` and ``lambda: iter(stream)``."""
    if not isinstance(function, ast.Lambda) or function.args.args or function.args.vararg:
        return None
    body = function.body
    if isinstance(body, ast.Call) and call_name(body) == "iter" and len(body.args) == 1:
        body = body.args[0]
    return body.id if isinstance(body, ast.Name) else None


def _is_iterator(value: Any) -> bool:
    cls = type(value)
    return any("__next__" in vars(k) for k in cls.__mro__ if k is not object)


def _assigned(tree: ast.Module, name: str, line: int) -> ast.expr | None:
    found = None
    for statement in tree.body:
        if (
            isinstance(statement, ast.Assign)
            and statement.lineno < line
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id == name
        ):
            found = statement.value
    return found


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a ``from_generator`` whose function returns one existing iterator."""
    if "from_generator" not in source or len(source) > MAX_CELL_CHARS:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or call_name(node) != "from_generator":
            continue
        function = node.args[0] if node.args else None
        for keyword in node.keywords:
            if keyword.arg == "generator":
                function = keyword.value
        name = _returned_name(function) if function is not None else None
        if name is None or not _is_iterator(namespace.get(name)):
            continue
        return [_note(node, function, name, tree, source)]  # type: ignore[arg-type]
    return []


def _note(call: ast.Call, function: ast.Lambda, name: str, tree: ast.Module, source: str) -> Note:
    written = ast.get_source_segment(source, function) or f"lambda: {name}"
    text = (
        f"`{written}` (line {call.lineno} of this cell) gives `from_generator` the same "
        f"iterator `{name}` each time the dataset is iterated. A generator runs once: the "
        "first pass over the dataset uses it up, and every later pass (the second epoch "
        "of fit, a second loop) gets 0 elements. Nothing raises. Give a function that "
        "builds a new generator on each call"
    )
    value = _assigned(tree, name, call.lineno)
    built = ast.get_source_segment(source, value) if value is not None else None
    if built is not None and "\n" not in built and isinstance(value, ast.GeneratorExp | ast.Call):
        text += f": `lambda: {built}`."
    else:
        text += f" (the function or expression that made `{name}`)."
    return reports.note(text, SECTION)
