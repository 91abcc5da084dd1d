"""Next-step targets equal to the inputs: a sequence split into (input, target) where the
target was meant to be the input shifted by one step.

``def split(chunk): return chunk[:SEQ], chunk[:SEQ]`` (or ``lambda s: (s[:-1], s[:-1])``,
``fit(ids[:, :-1], ids[:, :-1])``) pairs each position with its own token: the model
learns to copy its input, its loss falls fast to near 0, and it predicts nothing. The
slice gives the intent away: it leaves the sequence's last step out, a step kept for a
target shifted by one (``chunk[1:SEQ + 1]``). Nothing raises.

Found after a cell that completed (a cell with no ``.map(`` or ``.fit(`` costs a
substring test), from its source: a ``D.map(f)`` whose function (a ``lambda``, a ``def``
of this cell or, by the code's own cell in ``linecache``, of an earlier one) returns a
pair of the same slice ``p[a:b]`` of its parameter (through names its body assigned),
where the slice leaves steps out: ``b`` a negative number, or a number (or a name
holding one) below the length of the elements of ``D`` (the shape tf.data stores,
``element_spec``); or a ``fit(A, B)`` whose two arguments are the same slice with a
negative end (``ids[:, :-1]``). An autoencoder's ``fit(x, x)`` or ``map(lambda x: (x,
x))`` has no slice and is not told. The note names the function or call and the slice,
and gives the target shifted by one.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import library_attribute
from jupyterlab_tfcoach.monitor.syntax import function_definition, int_literal, parsed_source

SECTION = "labels-and-loss"
MAX_CELL_CHARS = 50_000
MAX_SOURCE_CHARS = 100_000


@dataclass
class _Unshifted:
    """A pair ``(p[a:b], p[a:b])``: the slice, where it is written, and what to edit."""

    sliced: ast.Subscript  # the target's slice as written
    value: ast.expr  # ``p``
    bounds: ast.Slice  # the last axis's slice
    source: str  # the source the nodes belong to
    edited: ast.AST  # the statement or expression the fix rewrites
    function: str  # the function's name as the note says it


def _resolved(node: ast.expr, body: list[ast.stmt]) -> ast.expr:
    """A name followed to its last plain assignment in ``body``."""
    if not isinstance(node, ast.Name):
        return node
    for statement in reversed(body):
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id == node.id
        ):
            return statement.value
    return node


def _last_slice(node: ast.expr) -> ast.Slice | None:
    """The slice of ``p[a:b]`` or the last one of ``p[:, a:b]``."""
    if not isinstance(node, ast.Subscript):
        return None
    index = node.slice
    if isinstance(index, ast.Tuple) and index.elts:
        if not all(isinstance(e, ast.Slice) for e in index.elts):
            return None
        index = index.elts[-1]
    if not isinstance(index, ast.Slice) or index.step is not None:
        return None
    return index


def _same_pair(
    pair: ast.expr, body: list[ast.stmt], parameters: set[str], source: str
) -> tuple[ast.Subscript, ast.AST] | None:
    """The target's slice of a returned ``(p[a:b], p[a:b])`` of a parameter ``p``, and
    the node a fix rewrites (the target's assignment, or the slice itself)."""
    if not isinstance(pair, ast.Tuple) or len(pair.elts) != 2:
        return None
    first, second = (_resolved(e, body) for e in pair.elts)
    if not isinstance(second, ast.Subscript) or _last_slice(second) is None:
        return None
    text = ast.get_source_segment(source, second)
    if text is None or text != ast.get_source_segment(source, first):
        return None
    owner = second.value
    if not (isinstance(owner, ast.Name) and owner.id in parameters):
        return None
    edited: ast.AST = second
    if isinstance(pair.elts[1], ast.Name):
        for statement in reversed(body):
            if isinstance(statement, ast.Assign) and statement.value is second:
                edited = statement
                break
    return second, edited


def _function(
    argument: ast.expr, tree: ast.Module, source: str, namespace: dict[str, Any]
) -> tuple[list[str], list[ast.stmt], list[ast.expr], str, str] | None:
    """A map function's parameters, body, returned values, source and name."""
    if isinstance(argument, ast.Lambda):
        names = [a.arg for a in argument.args.args]
        return names, [], [argument.body], source, "The lambda"
    if not isinstance(argument, ast.Name):
        return None
    definition: ast.FunctionDef | ast.AsyncFunctionDef | None = None
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef) and statement.name == argument.id:
            definition = statement
    if definition is None:
        code = getattr(namespace.get(argument.id), "__code__", None)
        if code is None or type(code).__name__ != "code":
            return None
        found = function_definition(code, MAX_SOURCE_CHARS)
        if found is None:
            return None
        source, definition = found
    returned = [
        node.value
        for node in ast.walk(definition)
        if isinstance(node, ast.Return) and node.value is not None
    ]
    names = [a.arg for a in definition.args.args]
    return names, definition.body, returned, source, f"`{argument.id}`"


def _element_length(dataset: Any) -> int | None:
    """The last axis of a dataset's elements, from its stored ``element_spec``."""
    spec = library_attribute(dataset, "element_spec")
    shape = library_attribute(spec, "shape") if spec is not None else None
    try:
        last = shape[-1] if shape is not None and len(shape) else None
        return int(last) if last is not None else None
    except Exception:
        return None


def _bound(node: ast.expr | None, namespace: dict[str, Any]) -> int | None:
    if node is None:
        return None
    number = int_literal(node)
    if number is None and isinstance(node, ast.Name) and type(namespace.get(node.id)) is int:
        number = int(namespace[node.id])
    return number


def _leaves_out(bounds: ast.Slice, length: int | None, namespace: dict[str, Any]) -> bool:
    """Whether the slice leaves the sequence's last steps out (room for a shift)."""
    literal = int_literal(bounds.upper) if bounds.upper is not None else None
    if literal is not None and literal < 0:
        return True
    stop = _bound(bounds.upper, namespace)
    return stop is not None and length is not None and 0 < stop < length


def _plus_one(node: ast.expr | None, source: str, start: bool) -> str | None:
    """A slice bound moved one step on: ``None`` -> ``1`` (a start), ``-1`` -> nothing
    (an end), ``SEQ`` -> ``SEQ + 1``."""
    if node is None:
        return "1" if start else None
    literal = int_literal(node)
    if literal is not None:
        return "" if literal == -1 else str(literal + 1)
    text = ast.get_source_segment(source, node)
    return f"{text} + 1" if text is not None else None


def _shifted(found: _Unshifted) -> str | None:
    """The fix: the edited statement or slice with the target's slice shifted by one."""
    source = found.source
    start = _plus_one(found.bounds.lower, source, start=True)
    stop = _plus_one(found.bounds.upper, source, start=False)
    owner = ast.get_source_segment(source, found.value)
    edited = ast.get_source_segment(source, found.edited)
    sliced = ast.get_source_segment(source, found.sliced)
    if None in (start, stop, owner, edited, sliced) or found.bounds.upper is None:
        return None
    assert owner is not None and edited is not None and sliced is not None
    index = found.sliced.slice
    leading = ""
    if isinstance(index, ast.Tuple):
        leading = "".join(f"{ast.get_source_segment(source, e)}, " for e in index.elts[:-1])
    shifted = f"{owner}[{leading}{start}:{stop}]"
    node, outer = found.sliced, found.edited
    if (
        isinstance(outer, ast.expr | ast.stmt)
        and node.lineno == node.end_lineno == outer.lineno
        and node.end_col_offset is not None
    ):
        # By position: ``fit(ids[:, :-1], ids[:, :-1])`` writes the slice twice.
        raw = edited.encode("utf-8")
        begin, end = node.col_offset - outer.col_offset, node.end_col_offset - outer.col_offset
        return (raw[:begin] + shifted.encode("utf-8") + raw[end:]).decode("utf-8")
    return edited.replace(sliced, shifted, 1) if edited.count(sliced) == 1 else None


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if (".map(" not in source and ".fit(" not in source) or len(source) > MAX_CELL_CHARS:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr == "map" and len(node.args) == 1:
            text = _map_note(node, tree, source, namespace)
        elif node.func.attr == "fit" and len(node.args) >= 2:
            text = _fit_note(node, source)
        else:
            continue
        if text is not None:
            return [reports.note(text, SECTION)]
    return []


def _map_note(
    call: ast.Call, tree: ast.Module, source: str, namespace: dict[str, Any]
) -> str | None:
    assert isinstance(call.func, ast.Attribute)
    function = _function(call.args[0], tree, source, namespace)
    if function is None:
        return None
    parameters, body, returned, function_source, name = function
    for pair in returned:
        same = _same_pair(pair, body, set(parameters), function_source)
        if same is None:
            continue
        sliced, edited = same
        bounds = _last_slice(sliced)
        assert bounds is not None
        dataset = call.func.value
        length = (
            _element_length(namespace.get(dataset.id)) if isinstance(dataset, ast.Name) else None
        )
        if not _leaves_out(bounds, length, namespace):
            continue
        if isinstance(call.args[0], ast.Lambda) and edited is sliced:
            edited = call.args[0]  # the fix: the whole lambda
        found = _Unshifted(sliced, sliced.value, bounds, function_source, edited, name)
        fix = _shifted(found)
        mapped = ast.get_source_segment(source, call) or "the map"
        written = ast.get_source_segment(function_source, sliced)
        if fix is None or written is None:
            return None
        of = f" of {length} steps" if length is not None else ""
        assert isinstance(pair, ast.Tuple)
        named = [e.id for e in pair.elts if isinstance(e, ast.Name)]
        both = f" (`{named[0]}` and `{named[1]}`)" if len(named) == 2 else ""
        return (
            f"{name}, mapped by `{mapped}`, returns `{written}` as the input and as the "
            f"target{both}: each position's target is the token at that same position, not the "
            f"next one. The slice leaves the end of each sequence{of} out, room for a "
            "target shifted by one, but the target is not shifted: the model learns to "
            "copy its input (its loss falls to near 0) and predicts nothing. Nothing "
            f"raises. Shift the target one step: `{fix}`, then build the dataset again."
        )
    return None


def _fit_note(call: ast.Call, source: str) -> str | None:
    inputs, targets = call.args[0], call.args[1]
    bounds = _last_slice(targets)
    if bounds is None or not isinstance(targets, ast.Subscript):
        return None
    text = ast.get_source_segment(source, targets)
    if text is None or text != ast.get_source_segment(source, inputs):
        return None
    literal = int_literal(bounds.upper) if bounds.upper is not None else None
    if literal is None or literal >= 0:
        return None
    written = ast.get_source_segment(source, call)
    if written is None:
        return None
    found = _Unshifted(targets, targets.value, bounds, source, call, "")
    fix = _shifted(found)
    if fix is None:
        return None
    return (
        f"`{written}` (line {call.lineno}) gives `{text}` as the inputs and as the "
        "targets: each position's target is the token at that same position, not the "
        "next one. The slice leaves the end of each sequence out, room for a target "
        "shifted by one, but the target is not shifted: the model learns to copy its "
        f"input (its loss falls to near 0) and predicts nothing. Nothing raises. Shift "
        f"the targets one step: `{fix}`."
    )
