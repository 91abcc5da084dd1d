"""Weights changed on the copies ``get_weights()`` returns: the network never moves.

``model.get_weights()`` returns NumPy copies of the weights. A loop such as
``for t_w, o_w in zip(target.get_weights(), online.get_weights()): t_w = 0.95 * t_w +
0.05 * o_w`` rebinds the loop name to a new array (or ``t_w *= 0.9`` changes the copy in
place) and drops it at the next step: neither the copy nor the network changes, so a
target network's soft update, an exponential moving average or a weight decay written
this way does nothing. Nothing raises.

Told from the cell's source (after a completed cell holding ``get_weights``; nothing is
run), in each scope (the cell's top level, each function): a ``for`` loop over
``X.get_weights()`` (or a ``zip``/``enumerate`` of such calls) whose body rebinds a loop
name (``name = ...`` or ``name op= ...``) and never reads the new value after that
statement, in a scope that never calls ``set_weights`` (a list of new arrays written
back with ``set_weights`` is right). The fix writes into the variables themselves: the
loop over ``X.weights`` (Keras variables) and ``name.assign(...)`` for the rebinding.

The name rebound is the one told about: in ``for avg, w in zip(self.avg,
model.get_weights()): avg = d * avg + (1 - d) * w`` the copy of the weights is only read,
and the name rebound walks a list the user keeps (a moving average kept in a callback).
Rebinding it leaves that list's entries as they were, so the note names the list and its
fix writes each new value back into it by index (``enumerate`` over the same loop,
``self.avg[i] = ...``); an in-place ``avg *= d`` changes an array entry itself and is not
told there.

New weights computed and never written back (``unwritten_notes``): a cell that assigns a
name a list of NumPy arrays shaped like a model's weights (the same shapes, as many),
different from the model's current values (a snapshot ``w0 = m.get_weights()`` equals
them), never reads that name again, never calls ``set_weights``/``load_weights`` or
``assign``, and then scores the model (``M.evaluate``/``predict``/``test_on_batch``/
``predict_on_batch`` after the assignment): the averaged or updated weights of a
federated round or a hand-written update are dropped, and the score is of the old
weights. Read after a completed cell from its top-level scope (loops included) and the
values the names hold; the fix is ``M.set_weights(name)`` after the assignment.
"""

from __future__ import annotations

import ast
import functools
import sys
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import call_name, function_scopes, parsed_source, scope_nodes

SECTION = "variables"
MAX_CELL_CHARS = 50_000
MAX_NOTES = 1
_CACHED_SOURCES = 64
_OPERATORS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
}


def _weights_calls(node: ast.AST) -> list[ast.Call]:
    """The ``X.get_weights()`` calls a loop iterates over (directly, or zipped)."""
    if isinstance(node, ast.Call) and call_name(node) == "get_weights" and not node.args:
        return [node] if isinstance(node.func, ast.Attribute) else []
    if isinstance(node, ast.Call) and call_name(node) in ("zip", "enumerate"):
        found: list[ast.Call] = []
        for argument in node.args:
            found += _weights_calls(argument)
        return found
    return []


def _loop_names(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        names: list[str] = []
        for element in target.elts:
            names += _loop_names(element)
        return names
    return []


def _rebinding(loop: ast.For, names: list[str]) -> ast.Assign | ast.AugAssign | None:
    """The body's statement rebinding a loop name whose new value is never read after."""
    body = loop.body
    for index, statement in enumerate(body):
        name: str | None = None
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            name = statement.targets[0].id
        elif isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
            name = statement.target.id
        if name is None or name not in names:
            continue
        later = [
            node
            for after in body[index + 1 :]
            for node in ast.walk(after)
            if isinstance(node, ast.Name) and node.id == name
        ]
        if not later:
            return statement
    return None


def _source_of(loop: ast.For, name: str) -> ast.AST | None:
    """The iterable a loop name walks: the zip argument at its position, or the loop's
    iterable for a plain ``for name in ...``."""
    if isinstance(loop.target, ast.Name):
        return loop.iter if loop.target.id == name else None
    return _zip_argument(loop, name)


def _zip_argument(loop: ast.For, name: str) -> ast.expr | None:
    """``b`` when ``name`` is ``y`` in ``for x, y in zip(a, b):``; None when the loop does not
    unpack a ``zip`` into ``name``."""
    iterated = loop.iter
    if (
        isinstance(iterated, ast.Call)
        and call_name(iterated) == "zip"
        and isinstance(loop.target, ast.Tuple)
        and len(loop.target.elts) == len(iterated.args)
    ):
        for element, argument in zip(loop.target.elts, iterated.args, strict=True):
            if isinstance(element, ast.Name) and element.id == name:
                return argument
    return None


def _kept_list(node: ast.AST | None) -> bool:
    """A list the user keeps (a name, an attribute, an item): not a call's fresh result."""
    return isinstance(node, ast.Name | ast.Attribute | ast.Subscript)


def _owner_of(loop: ast.For, name: str, calls: list[ast.Call], source: str) -> str:
    """The model whose copy ``name`` holds: the zip argument at the name's position."""
    argument = _zip_argument(loop, name)
    if isinstance(argument, ast.Call) and argument in calls:
        return _owner_text(argument, source)
    return " and ".join(_owner_text(call, source) for call in calls)


def _owner_text(call: ast.Call, source: str) -> str:
    owner = call.func.value if isinstance(call.func, ast.Attribute) else call.func
    return f"`{ast.get_source_segment(source, owner)}`"


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS:
        return []
    unwritten = unwritten_notes(source, namespace)
    if "get_weights" not in source:
        return unwritten
    # A cell run again costs one lookup: what is told depends on its source alone.
    return [reports.note(text, SECTION) for text in _texts(source)] or unwritten


@functools.lru_cache(maxsize=_CACHED_SOURCES)
def _texts(source: str) -> tuple[str, ...]:
    tree = parsed_source(source)
    if tree is None:
        return ()
    found: list[str] = []
    for scope in function_scopes(tree):
        nodes = scope_nodes(scope)
        if any(isinstance(n, ast.Call) and call_name(n) == "set_weights" for n in nodes):
            continue
        for node in nodes:
            if len(found) >= MAX_NOTES:
                return tuple(found)
            if not isinstance(node, ast.For):
                continue
            calls = _weights_calls(node.iter)
            if not calls:
                continue
            statement = _rebinding(node, _loop_names(node.target))
            if statement is None:
                continue
            rebound = _rebound_name(statement)
            walked = _source_of(node, rebound) if rebound is not None else None
            if walked is not None and walked not in calls:
                # The copy is only read; the name rebound walks another list.
                note = _list_note(node, walked, calls[0], statement, scope, source)
            else:
                note = _note(node, calls, statement, scope, source)
            if note is not None:
                found.append(note)
    return tuple(found)


def _note(
    loop: ast.For,
    calls: list[ast.Call],
    statement: ast.Assign | ast.AugAssign,
    scope: ast.AST,
    source: str,
) -> str | None:
    header = ast.get_source_segment(source, loop.iter)
    written = ast.get_source_segment(source, statement)
    target = ast.get_source_segment(source, loop.target)
    if header is None or written is None or target is None or "\n" in header + written:
        return None
    new_header = header
    for call in calls:
        text = ast.get_source_segment(source, call)
        owner = (
            ast.get_source_segment(source, call.func.value)
            if isinstance(call.func, ast.Attribute)
            else None
        )
        if text is None or owner is None:
            return None
        new_header = new_header.replace(text, f"{owner}.weights", 1)
    if isinstance(statement, ast.Assign):
        name = statement.targets[0]
        value = ast.get_source_segment(source, statement.value)
        if not isinstance(name, ast.Name) or value is None:
            return None
        assign = f"{name.id}.assign({value})"
    else:
        symbol = _OPERATORS.get(type(statement.op))
        value = ast.get_source_segment(source, statement.value)
        if symbol is None or value is None or not isinstance(statement.target, ast.Name):
            return None
        name = statement.target
        assign = f"{name.id}.assign({name.id} {symbol} ({value}))"
    where = ""
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        where = f", in `{scope.name}`"
    owner = _owner_of(loop, name.id, calls, source)
    fix = f"for {target} in {new_header}: {assign}"
    text = (
        f"`{written}` (line {statement.lineno} of this cell{where}) gives the loop name "
        f"`{name.id}` a new value, but `{name.id}` is a NumPy copy that `get_weights()` "
        f"made: the new array is dropped at the next step and the weights of {owner} never "
        "change (nothing writes them back with `set_weights`). Nothing raises; the update "
        "this loop means does nothing. Loop over the variables themselves (`.weights`) "
        "and assign into them. "
    )
    if len(loop.body) == 1:
        text += f"Fix: `{fix}`."
    else:
        # Other statements in the loop: the two changes are told, each as written.
        text += f"The loop over `{new_header}`, and `{assign}` in place of `{written}`."
    return text


def _rebound_name(statement: ast.Assign | ast.AugAssign) -> str | None:
    target = statement.targets[0] if isinstance(statement, ast.Assign) else statement.target
    return target.id if isinstance(target, ast.Name) else None


def _index_name(loop: ast.For) -> str:
    used = {n.id for n in ast.walk(loop) if isinstance(n, ast.Name)}
    return next(name for name in ("i", "k", "index", "position", "slot_index") if name not in used)


def _list_note(
    loop: ast.For,
    walked: ast.AST,
    copied: ast.Call,
    statement: ast.Assign | ast.AugAssign,
    scope: ast.AST,
    source: str,
) -> str | None:
    """The rebound name walks a list the user keeps: its entries never change."""
    if not _kept_list(walked) or not isinstance(statement, ast.Assign):
        return None  # ``name op= ...`` on an array entry changes the entry in place
    name = statement.targets[0]
    kept = ast.get_source_segment(source, walked)
    header = ast.get_source_segment(source, loop.iter)
    target = ast.get_source_segment(source, loop.target)
    written = ast.get_source_segment(source, statement)
    value = ast.get_source_segment(source, statement.value)
    read = ast.get_source_segment(source, copied)
    if (
        kept is None
        or header is None
        or target is None
        or written is None
        or value is None
        or read is None
        or not isinstance(name, ast.Name)
        or "\n" in header + written
    ):
        return None
    where = ""
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        where = f", in `{scope.name}`"
    index = _index_name(loop)
    new_target = f"({target})" if isinstance(loop.target, ast.Tuple) else target
    new_header = f"for {index}, {new_target} in enumerate({header}):"
    write_back = f"{kept}[{index}] = {value}"
    text = (
        f"`{written}` (line {statement.lineno} of this cell{where}) gives the loop name "
        f"`{name.id}` a new value, but `{name.id}` only walks the entries of `{kept}`: "
        f"rebinding it leaves `{kept}` as it was, and the new value is dropped at the next "
        f"step, so `{kept}` keeps its first values (`{read}` is only read here). "
        "Nothing raises; the update this loop means does nothing. Write each new value "
        f"back into `{kept}` by its index. "
    )
    if len(loop.body) == 1:
        text += f"Fix: `{new_header} {write_back}`."
    else:
        text += f"The loop `{new_header}`, and `{write_back}` in place of `{written}`."
    return text


# ------------------------------------------------------------------ new weights never set
UNWRITTEN_SECTION = "keras-model-api"
_SCORING = ("evaluate", "predict", "test_on_batch", "predict_on_batch")
_WRITES = ("set_weights", "load_weights", "assign", "assign_add", "assign_sub", "set_value")
_MAX_ARRAYS = 500
_MAX_COMPARED = 2_000_000


def _scored_models(nodes: list[ast.AST]) -> list[tuple[str, ast.Call]]:
    """``(name, call)`` for each ``name.evaluate(...)``-like call of the scope."""
    found: list[tuple[str, ast.Call]] = []
    for node in nodes:
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _SCORING
            and isinstance(node.func.value, ast.Name)
        ):
            found.append((node.func.value.id, node))
    return found


def _arrays(value: Any) -> list[Any] | None:
    """The arrays of a list or tuple of at least two NumPy arrays, else None."""
    numpy = sys.modules.get("numpy")
    ndarray = getattr(numpy, "ndarray", None) if numpy is not None else None
    if ndarray is None or type(value) not in (list, tuple) or not 2 <= len(value) <= _MAX_ARRAYS:
        return None
    return list(value) if all(type(item) is ndarray for item in value) else None


def _variable_values(model: Any, count: int) -> list[Any] | None:
    """The model's weights (``model.weights``' variables) as NumPy arrays, when it has
    ``count`` of them and they are small enough to compare."""
    from jupyterlab_tfcoach.monitor.stored_state import keras_variables, library_attribute

    variables = keras_variables(model, with_seed_state=False, limit=_MAX_ARRAYS)
    if len(variables) != count:
        return None
    values = []
    total = 0
    for variable in variables:
        backing = library_attribute(variable, "value")
        numpy = library_attribute(backing if backing is not None else variable, "numpy")
        if numpy is None:
            return None
        array = numpy()
        total += int(getattr(array, "size", 0))
        if total > _MAX_COMPARED:
            return None
        values.append(array)
    return values


def _same_weights(arrays: list[Any], current: list[Any]) -> bool | None:
    """Whether ``arrays`` hold the model's current values (matched by shape, in order);
    None when their shapes are not the model's."""
    if sorted(tuple(a.shape) for a in arrays) != sorted(tuple(c.shape) for c in current):
        return None
    pending = list(current)
    same = True
    for array in arrays:
        match = next((c for c in pending if tuple(c.shape) == tuple(array.shape)), None)
        if match is None:
            return None
        pending.pop(next(i for i, c in enumerate(pending) if c is match))
        try:
            if array.dtype.kind not in "fiu" or not (array == match).all():
                same = False
        except Exception:
            return None
    return same


def unwritten_notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if not any(f".{call}(" in source for call in _SCORING):
        return []
    if any(write in source for write in _WRITES):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    from jupyterlab_tfcoach.monitor.training.weight_copies import keras_model

    nodes = scope_nodes(tree)
    scored = _scored_models(nodes)
    if not scored:
        return []
    read = {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store)
    }
    for node in nodes:
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            continue
        name = node.targets[0].id
        if name in read:
            continue
        arrays = _arrays(namespace.get(name))
        if arrays is None:
            continue
        for model_name, call in scored:
            if call.lineno <= node.lineno:
                continue
            model = namespace.get(model_name)
            if not keras_model(model):
                continue
            current = _variable_values(model, len(arrays))
            if current is None or _same_weights(arrays, current) is not False:
                continue
            note = _unwritten_note(node, name, model_name, call, arrays, source)
            if note is not None:
                return [reports.note(note, UNWRITTEN_SECTION)]
    return []


def _unwritten_note(
    statement: ast.Assign,
    name: str,
    model: str,
    call: ast.Call,
    arrays: list[Any],
    source: str,
) -> str | None:
    written = ast.get_source_segment(source, statement)
    scored = ast.get_source_segment(source, call)
    if not written or not scored:
        return None
    if "\n" in written or len(written) > 120:
        written = f"{name} = ..."
    if "\n" in scored or len(scored) > 120:
        scored = f"{model}.{call.func.attr}(...)" if isinstance(call.func, ast.Attribute) else model
    shapes = ", ".join(str(tuple(array.shape)) for array in arrays[:6])
    if len(arrays) > 6:
        shapes += ", ..."
    return (
        f"`{written}` (line {statement.lineno} of this cell) computes {len(arrays)} arrays "
        f"shaped like `{model}`'s weights ({shapes}), different from the weights `{model}` "
        f"holds, and nothing writes them into it: this cell never calls "
        f"`{model}.set_weights({name})` and never reads `{name}` again, so `{scored}` "
        f"(line {call.lineno}) scores `{model}`'s old weights and the new ones are dropped. "
        "Nothing raises. "
        f"Fix: `{model}.set_weights({name})` on the line after line {statement.lineno}."
    )
