"""A stateless random op with a constant seed inside a function mapped over a dataset.

``tf.random.stateless_*`` and ``tf.image.stateless_random_*`` are pure functions of their
seed: the same seed gives the same numbers. Written with a fixed ``seed=[1, 2]`` in the
function given to ``Dataset.map``, every element gets exactly the same "random" flip,
crop, brightness or noise, and the augmentation varies nothing across the data. Nothing
raises. (``random_maps.py`` reads the same fact from a map's graph for other checks.)

Read from the source after a completed cell holding ``.map(`` (a substring test
otherwise): each ``<dataset>.map(f)`` of the cell where ``f`` names a plain function of the
learner's with exactly one parameter (its source as IPython keeps it) that calls a
``stateless_*`` op whose ``seed`` (keyword) uses neither the parameter nor a name the
function computed from it, and is a pair of integer literals. The note names the function,
the call and the map; the fix gives each element its own seed from its index:
``.enumerate().map(f)``, ``def f(i, x):`` and ``seed=tf.stack([tf.constant(a, tf.int64),
i])``. A seed built from the element or its index, and a constant seed outside a mapped
function (one reproducible draw), stay silent.

Two views from one seed (``equal_seed_view_notes``, after a cell that defines a function:
``VIEW_WANTED``): a function of the cell returns a tuple holding two calls of the same
function of the learner's written alike (``return augment(x, seed), augment(x, seed)``),
the argument passed to one of the callee's parameters is a name or a literal (no call: a
fresh draw per call would differ), and the callee (its source as IPython keeps it) draws
only with ``stateless_*`` ops whose ``seed`` comes from that parameter, no stateful
random op beside them. Both calls are then the same pure function of the same inputs:
the two "views" are one tensor twice, and a contrastive or consistency loss between them
learns nothing. The fix draws a pair of seeds per call of the function
(``tf.random.uniform([2, 2], maxval=2**31 - 1, dtype=tf.int32)``) and gives each view its
own row.
"""

from __future__ import annotations

import ast
import re
import types
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    function_definition,
    parsed_source,
    source_segment,
)

SECTION = "tf-data"
MAX_FUNCTION_CHARS = 200_000
MAX_NOTES = 1
WANTED = re.compile(r"\.map\(")


def _dependent_names(function: ast.FunctionDef) -> set[str]:
    """The parameters and every name the body computes from them (twice over: enough for
    a seed built in two steps)."""
    names = {a.arg for a in function.args.args + function.args.kwonlyargs}
    for _ in range(2):
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and any(
                isinstance(n, ast.Name) and n.id in names for n in ast.walk(node.value)
            ):
                for target in node.targets:
                    names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def _literal_pair(node: ast.AST) -> tuple[int, int] | None:
    if isinstance(node, ast.List | ast.Tuple) and len(node.elts) == 2:
        values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
        if len(values) == 2 and all(type(v) is int for v in values):
            return values[0], values[1]
    return None


def _constant_seed_call(
    function: ast.FunctionDef,
) -> tuple[ast.Call, ast.keyword, tuple[int, int]] | None:
    dependent = _dependent_names(function)
    for node in ast.walk(function):
        if not isinstance(node, ast.Call) or not (call_name(node) or "").startswith("stateless"):
            continue
        seed = next((k for k in node.keywords if k.arg == "seed"), None)
        if seed is None:
            continue
        if any(isinstance(n, ast.Name) and n.id in dependent for n in ast.walk(seed.value)):
            continue
        pair = _literal_pair(seed.value)
        if pair is not None:
            return node, seed, pair
    return None


# What a function's source says, by where its code was defined (a cell run again reads
# its functions from this, not by parsing their cell again).
_READ: dict[tuple[str, int, str], Any] = {}
MAX_READ = 256


def _read_function(
    code_object: types.CodeType,
) -> tuple[str, ast.FunctionDef, tuple[ast.Call, ast.keyword, tuple[int, int]]] | None:
    key = (code_object.co_filename, code_object.co_firstlineno, code_object.co_name)
    if key in _READ:
        return _READ[key]
    result = None
    found = function_definition(code_object, MAX_FUNCTION_CHARS)
    if found is not None and isinstance(found[1], ast.FunctionDef):
        source, function = found
        arguments = function.args
        if len(arguments.args) == 1 and not arguments.vararg and not arguments.kwonlyargs:
            constant = _constant_seed_call(function)
            result = (source, function, constant) if constant is not None else None
    if len(_READ) >= MAX_READ:
        _READ.clear()
    _READ[key] = result
    return result


def constant_seed_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    if WANTED.search(code.source) is None:
        return []
    notes: list[Note] = []
    for node in code.nodes:
        if len(notes) >= MAX_NOTES:
            break
        if not (
            isinstance(node, ast.Call)
            and call_name(node) == "map"
            and isinstance(node.func, ast.Attribute)
            and node.args
            and isinstance(node.args[0], ast.Name)
        ):
            continue
        mapped = namespace.get(node.args[0].id)
        if type(mapped) is not types.FunctionType:
            continue
        read = _read_function(mapped.__code__)
        if read is None:
            continue
        source, function, constant = read
        note = _note(code, node, source, function, *constant)
        if note is not None:
            notes.append(note)
    return notes


def _note(
    code: CellCode,
    map_call: ast.Call,
    source: str,
    function: ast.FunctionDef,
    call: ast.Call,
    seed: ast.keyword,
    pair: tuple[int, int],
) -> Note | None:
    written = source_segment(source, call)
    seed_text = source_segment(source, seed)
    dataset = (
        code.segment(map_call.func.value) if isinstance(map_call.func, ast.Attribute) else None
    )
    mapped = function.name
    if written is None or seed_text is None or dataset is None or "\n" in written:
        return None
    used = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)}
    index = next(name for name in ("i", "index", "element_index") if name not in used)
    parameter = function.args.args[0].arg
    dataset_text = dataset if len(dataset) <= 60 else "..."
    statement = code.statement_of(map_call)
    targets = statement.targets if isinstance(statement, ast.Assign) else []
    made = next((t.id for t in targets if isinstance(t, ast.Name)), None)
    into = f" into `{made}`" if made else ""
    text = (
        f"`{mapped}`, mapped over the dataset{into} (`{dataset_text}.map({mapped})`, line "
        f"{map_call.lineno} of this cell), draws with `{written}`: a stateless op is a pure "
        f"function of its seed, and `{seed_text}` is the same for every element, so every "
        f"element gets exactly the same random values and the augmentation varies nothing "
        f"across the data. Nothing raises. Give each element its own seed, from its index. "
        f"Fix: `.enumerate().map({mapped})` in place of `.map({mapped})`, "
        f"`def {mapped}({index}, {parameter}):`, and "
        f"`seed=tf.stack([tf.constant({pair[0]}, tf.int64), {index}])` in place of "
        f"`{seed_text}`."
    )
    return reports.note(text, SECTION)


VIEW_WANTED = re.compile(r"\bdef\s")
_VIEW_FUNCTION_CHARS = 200_000


def _seeded_parameters(function: ast.FunctionDef) -> set[str] | None:
    """The callee's parameters its ``stateless_*`` seeds come from; None when it also
    draws with a stateful random op (then two calls differ) or has no seeded op."""
    parameters = [a.arg for a in function.args.args]
    seeded: set[str] = set()
    for node in ast.walk(function):
        if not isinstance(node, ast.Call):
            continue
        called = call_name(node) or ""
        if called.startswith("stateless"):
            seed = next((k for k in node.keywords if k.arg == "seed"), None)
            if seed is None:
                return None
            used = {n.id for n in ast.walk(seed.value) if isinstance(n, ast.Name)}
            seeded |= used & set(parameters)
            continue
        dotted = _dotted_call(node)
        if "random" in dotted.lower() or called.startswith("Random"):
            return None
    return seeded or None


def _dotted_call(call: ast.Call) -> str:
    """The called name's dotted path (``tf.random.normal``), for the draw test."""
    parts: list[str] = []
    func: ast.AST = call.func
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


def _argument_of(call: ast.Call, callee: ast.FunctionDef, parameter: str) -> ast.expr | None:
    names = [a.arg for a in callee.args.args]
    for keyword in call.keywords:
        if keyword.arg == parameter:
            return keyword.value
    index = names.index(parameter)
    return call.args[index] if index < len(call.args) else None


def equal_seed_view_notes(code: CellCode, namespace: dict[str, Any]) -> list[Note]:
    """Two calls of one stateless-seeded function with the same seed, returned as two
    views (module docstring)."""
    if VIEW_WANTED.search(code.source) is None or "return" not in code.source:
        return []
    tree = parsed_source(code.source)
    if tree is None:
        return []
    for function in tree.body:
        if not isinstance(function, ast.FunctionDef):
            continue
        for node in ast.walk(function):
            if not (isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple)):
                continue
            note = _views_note(code, function, node, node.value, namespace)
            if note is not None:
                return [note]
    return []


def _views_note(
    code: CellCode,
    function: ast.FunctionDef,
    returned: ast.Return,
    views: ast.Tuple,
    namespace: dict[str, Any],
) -> Note | None:
    calls = [e for e in views.elts if isinstance(e, ast.Call) and isinstance(e.func, ast.Name)]
    for first_index, first in enumerate(calls):
        for second in calls[first_index + 1 :]:
            if first.func.id != second.func.id or ast.dump(first) != ast.dump(second):  # type: ignore[attr-defined]
                continue
            callee_value = namespace.get(first.func.id)  # type: ignore[attr-defined]
            if type(callee_value) is not types.FunctionType:
                continue
            found = function_definition(callee_value.__code__, _VIEW_FUNCTION_CHARS)
            if found is None or not isinstance(found[1], ast.FunctionDef):
                continue
            callee = found[1]
            seeded = _seeded_parameters(callee)
            if not seeded:
                continue
            for parameter in sorted(seeded):
                argument = _argument_of(first, callee, parameter)
                if argument is None or any(isinstance(n, ast.Call) for n in ast.walk(argument)):
                    continue
                return _view_note(code, function, returned, first, second, argument, parameter)
    return None


def _view_note(
    code: CellCode,
    function: ast.FunctionDef,
    returned: ast.Return,
    first: ast.Call,
    second: ast.Call,
    argument: ast.expr,
    parameter: str,
) -> Note | None:
    written = code.segment(returned)
    call_text = code.segment(first)
    seed_text = code.segment(argument)
    if written is None or call_text is None or seed_text is None:
        return None
    used = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)}
    seeds = next(n for n in ("seeds", "view_seeds", "pair_seeds") if n not in used)
    fixed = written
    # The later call first, so the earlier one's offsets still hold.
    for row, call in ((1, second), (0, first)):
        start = (call.col_offset or 0) - (returned.col_offset or 0)
        end = (call.end_col_offset or 0) - (returned.col_offset or 0)
        if fixed[start:end] != call_text:
            return None
        fixed = fixed[:start] + call_text.replace(seed_text, f"{seeds}[{row}]", 1) + fixed[end:]
    callee = first.func.id  # type: ignore[attr-defined]
    text = (
        f"`{function.name}` returns `{written.removeprefix('return ').strip()}` (line "
        f"{returned.lineno} of this cell): `{callee}` draws only with stateless random ops "
        f"seeded by its parameter `{parameter}`, a pure function of that seed, and both "
        f"calls pass `{seed_text}`, so they return exactly the same tensor: the two views "
        f"are one view twice (and every call of `{function.name}` gets the same crop, flip "
        f"or noise), so a loss comparing them has nothing to learn. Nothing raises. Give "
        f"each view its own seed, drawn at every call. Fix: add `{seeds} = "
        f"tf.random.uniform([2, 2], maxval=2**31 - 1, dtype=tf.int32)` before the return "
        f"and write it `{fixed}`."
    )
    return reports.note(text, SECTION)
