"""A function named as a copy of a model that returns ``clone_model`` without its weights.

``keras.models.clone_model(model)`` builds the same layers with new, randomly initialised
weights; the values of ``model`` are not copied. A helper such as ``def copy_global(m):
return keras.models.clone_model(m)`` then hands every caller (a federated client, a
target network, a fine-tuned copy) a random model where it meant the trained or global
one, and nothing raises: the rounds never build on each other.

Told in the cell that defines it, from its source (after a completed cell holding
``clone_model``; nothing is run): a function whose name promises a copy (the words
``copy``, ``duplicate``, ``replica``, ``snapshot``) that returns a ``clone_model`` of one of
its parameters (directly, or a name bound to that call) and writes no weights into the
clone (no ``set_weights``, ``load_weights``, ``assign`` in the function). A function whose
text (its comments included) says the weights are meant to be new (``fresh``,
``scratch``, ``random``, ``reinit``, ``untrained``, ``reset``, ``initial``) stays silent, as
does any other name (``clone_model`` kept for a model trained from scratch). The fix
copies the weights before the return: ``local.set_weights(model.get_weights())``.
"""

from __future__ import annotations

import ast
import functools
import re
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source
from jupyterlab_tfcoach.monitor.word_gates import word_gate

SECTION = "clone-model"
MAX_CELL_CHARS = 50_000
_CACHED_SOURCES = 64
_COPY_WORDS = frozenset({"copy", "copies", "duplicate", "replica", "replicate", "snapshot"})
_NEW_WEIGHTS = word_gate(
    r"fresh|scratch|random|re-?init|untrained|reset|initiali[sz]|new weights", re.IGNORECASE
)
_WRITES = frozenset({"set_weights", "load_weights", "assign", "set_value"})
_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def _words(name: str) -> set[str]:
    return {part.lower() for part in _PARTS.findall(name)}


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS or "clone_model" not in source or "def " not in source:
        return []
    return [reports.note(text, SECTION) for text in _texts(source)]


@functools.lru_cache(maxsize=_CACHED_SOURCES)
def _texts(source: str) -> tuple[str, ...]:
    tree = parsed_source(source)
    if tree is None:
        return ()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            text = _function_note(node, source)
            if text is not None:
                return (text,)
    return ()


def _function_note(function: ast.FunctionDef | ast.AsyncFunctionDef, source: str) -> str | None:
    if not _words(function.name) & _COPY_WORDS:
        return None
    written = ast.get_source_segment(source, function, padded=False) or ""
    lines = source.splitlines()
    # Comments are not in the syntax tree: read the function's own lines for them.
    whole = "\n".join(lines[function.lineno - 1 : function.end_lineno or function.lineno])
    if _NEW_WEIGHTS.search(whole) or not written:
        return None
    parameters = {argument.arg for argument in function.args.args}
    calls = [node for node in ast.walk(function) if isinstance(node, ast.Call)]
    if any(call_name(call) in _WRITES for call in calls):
        return None
    bound: dict[str, ast.Call] = {}
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and _clone_of_parameter(node.value, parameters)
        ):
            assert isinstance(node.value, ast.Call)
            bound[node.targets[0].id] = node.value
    for node in ast.walk(function):
        if not isinstance(node, ast.Return) or node.value is None:
            continue
        returned = node.value
        if isinstance(returned, ast.Name) and returned.id in bound:
            return _note(function, bound[returned.id], returned.id, node, source)
        if _clone_of_parameter(returned, parameters):
            assert isinstance(returned, ast.Call)
            return _note(function, returned, None, node, source)
    return None


def _clone_of_parameter(node: ast.AST, parameters: set[str]) -> bool:
    return (
        isinstance(node, ast.Call)
        and call_name(node) == "clone_model"
        and bool(node.args)
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id in parameters
    )


def _note(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    call: ast.Call,
    name: str | None,
    returned: ast.Return,
    source: str,
) -> str | None:
    cloned = ast.get_source_segment(source, call)
    assert isinstance(call.args[0], ast.Name)
    original = call.args[0].id
    if not cloned or "\n" in cloned:
        return None
    held = f" as `{name}`" if name else ""
    text = (
        f"`{function.name}` (defined in this cell) returns `{cloned}`{held}: `clone_model` "
        f"builds the same layers with new, randomly initialised weights and copies none of "
        f"`{original}`'s values, so every model `{function.name}` returns starts from random "
        f"weights, not from `{original}`'s (training it does not carry on from "
        f"`{original}`). Nothing raises. "
    )
    if name is not None:
        text += (
            f"Fix: before line {returned.lineno} of this cell (`return {name}`), add "
            f"`{name}.set_weights({original}.get_weights())`."
        )
    else:
        text += (
            f"Keep the clone in a name and copy the weights before returning it: "
            f"`copied = {cloned}`, then `copied.set_weights({original}.get_weights())`, "
            "then `return copied`."
        )
    return text
