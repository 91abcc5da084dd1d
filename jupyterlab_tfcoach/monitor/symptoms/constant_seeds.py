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
"""

from __future__ import annotations

import ast
import re
import types
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode
from jupyterlab_tfcoach.monitor.syntax import call_name, function_definition, source_segment

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
