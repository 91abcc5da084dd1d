"""Teacher-forcing pairs shifted the wrong way: the target is the step the input read before.

A sequence model trained with teacher forcing reads ``seq[:, :-1]`` (the start token and
every step but the last) and is scored on ``seq[:, 1:]`` (each next step). A function that
returns ``seq[:, 1:]`` as the input and ``seq[:, :-1]`` as the target pairs each position
with the token the input held one step earlier: a model that repeats what it just read
scores almost perfectly, learns nothing about what comes next, and fails as soon as it
decodes from the start token alone. Nothing raises.

Found after a cell that completed and binds two names from a call of a function of the
same cell (``a, b = f(...)``) (a cell without ``:-1]`` costs a substring test and
nothing more): ``f`` ends with ``return A, B`` (the input first, as Keras's ``(x, y)`` and
tf.data's pairs put it), where ``A`` is ``p[..., 1:]`` and ``B`` is ``p[..., :-1]`` of one
and the same ``p``, written in the return or bound once to names in ``f``'s body. The
names the call bound must hold integer arrays or eager tensors of token ids (rank 1 or
2, the same shape, at least three distinct values, at most ``MAX_VALUES`` values): a
float series differenced in that order is not told. The note names the function, both
slices and the names, and the fix is the two slices the other way round.
"""

from __future__ import annotations

import ast
import sys
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import INTEGERS, held_array
from jupyterlab_tfcoach.monitor.syntax import int_literal, parsed_source

SECTION = "labels-and-loss"
MAX_CELL_CHARS = 50_000
MAX_VALUES = 2_000_000


def _last_slice(node: ast.expr) -> tuple[str, int | None, int | None] | None:
    """(the sliced value's source dump, start, stop) of ``p[1:]``, ``p[:, :-1]``,
    ``p[..., 1:]``: the last index a slice without step, every other one ``:`` or ``...``."""
    if not isinstance(node, ast.Subscript):
        return None
    index = node.slice
    parts = list(index.elts) if isinstance(index, ast.Tuple) else [index]
    if not parts or not isinstance(parts[-1], ast.Slice) or parts[-1].step is not None:
        return None
    for part in parts[:-1]:
        whole = isinstance(part, ast.Slice) and part.lower is part.upper is part.step is None
        if not (whole or (isinstance(part, ast.Constant) and part.value is Ellipsis)):
            return None
    last = parts[-1]
    start = int_literal(last.lower) if last.lower is not None else None
    stop = int_literal(last.upper) if last.upper is not None else None
    if (last.lower is not None and start is None) or (last.upper is not None and stop is None):
        return None
    key = ast.dump(node.value) + f"/{len(parts)}"
    return key, start, stop


def _resolved(node: ast.expr, body: list[ast.stmt]) -> ast.expr:
    """A name the function body binds exactly once, at its top level, to its value."""
    if not isinstance(node, ast.Name):
        return node
    bound = [
        statement
        for statement in body
        if isinstance(statement, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == node.id for t in statement.targets)
    ]
    every = [
        n
        for statement in body
        for n in ast.walk(statement)
        if isinstance(n, ast.Name) and n.id == node.id and isinstance(n.ctx, ast.Store)
    ]
    if len(bound) == 1 and len(every) == 1 and len(bound[0].targets) == 1:
        return bound[0].value
    return node


def _reversed_pair(
    function: ast.FunctionDef,
) -> tuple[ast.expr, ast.expr, list[ast.expr]] | None:
    """(the input's and the target's slice nodes, the two returned expressions) when
    ``function`` ends with ``return p[..., 1:], p[..., :-1]`` (directly or through
    names)."""
    last = function.body[-1] if function.body else None
    if not (
        isinstance(last, ast.Return)
        and isinstance(last.value, ast.Tuple)
        and len(last.value.elts) == 2
    ):
        return None
    first, second = (_resolved(e, function.body) for e in last.value.elts)
    read_first, read_second = _last_slice(first), _last_slice(second)
    if read_first is None or read_second is None or read_first[0] != read_second[0]:
        return None
    if read_first[1:] == (1, None) and read_second[1:] == (None, -1):
        return first, second, list(last.value.elts)
    return None


def _token_ids(value: Any) -> Any | None:
    for ndim in (2, 1):
        values = held_array(value, MAX_VALUES, INTEGERS, ndim=ndim)
        if values is not None:
            return values
    return None


def _holds_tokens(first: Any, second: Any) -> bool:
    numpy = sys.modules.get("numpy")
    a, b = _token_ids(first), _token_ids(second)
    if numpy is None or a is None or b is None or a.shape != b.shape or a.shape[-1] < 2:
        return False
    return len(numpy.unique(b.reshape(-1)[:5000])) >= 3


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS or ":-1]" not in source or "1:]" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    functions = {
        node.name: node for node in tree.body if isinstance(node, ast.FunctionDef) and node.body
    }
    for statement in tree.body:
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Tuple)
            and len(statement.targets[0].elts) == 2
            and all(isinstance(e, ast.Name) for e in statement.targets[0].elts)
            and isinstance(statement.value, ast.Call)
            and isinstance(statement.value.func, ast.Name)
            and statement.value.func.id in functions
        ):
            continue
        function = functions[statement.value.func.id]
        pair = _reversed_pair(function)
        if pair is None:
            continue
        names = [e.id for e in statement.targets[0].elts]  # type: ignore[attr-defined]
        if not _holds_tokens(namespace.get(names[0]), namespace.get(names[1])):
            continue
        note = _note(source, function, pair, names)
        if note is not None:
            return [note]
    return []


def _note(
    source: str,
    function: ast.FunctionDef,
    pair: tuple[ast.expr, ast.expr, list[ast.expr]],
    names: list[str],
) -> Note | None:
    first, second = (ast.get_source_segment(source, node) for node in pair[:2])
    if not first or not second or "\n" in first or "\n" in second:
        return None
    value = first[: first.rindex("[")]
    index = first[len(value) + 1 : -1]
    leading = index[: index.rindex("1:")]
    fixed_input, fixed_target = f"{value}[{leading}:-1]", f"{value}[{leading}1:]"
    returned = pair[2]
    if all(isinstance(node, ast.Name) for node in returned):
        # The body binds the two names: the fix is those two statements.
        held = [node.id for node in returned]  # type: ignore[attr-defined]
        fix = f"`{held[0]} = {fixed_input}` and `{held[1]} = {fixed_target}`"
        shown = f"`{held[0]} = {first}` as the input and `{held[1]} = {second}` as the target"
    else:
        fix = f"`return {fixed_input}, {fixed_target}`"
        shown = f"`{first}` as the input and `{second}` as the target"
    return reports.note(
        f"`{function.name}` returns {shown} (`{names[0]}` and `{names[1]}` in this "
        "cell): at every position the target is the token "
        "the input held one step earlier, so a model learns to repeat the token it has "
        "just read, scores almost perfectly while it trains on these pairs, and learns "
        "nothing about the next token: decoding from the start token alone fails. Teacher "
        "forcing goes the other way: the input keeps the first token and drops the last, "
        "the target is one step ahead. Nothing raises. "
        f"Fix: in `{function.name}`, {fix}.",
        SECTION,
    )
