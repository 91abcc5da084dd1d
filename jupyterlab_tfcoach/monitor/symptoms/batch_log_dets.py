"""A log-determinant summed over the whole batch instead of over each example's features.

In a normalizing flow (a coupling layer, an invertible map of one's own), each example's
log-density gains the log |det| of ITS Jacobian: one number per example, the sum of the
log-scales over that example's features. Written ``log_det = tf.reduce_sum(s)`` with no
axis, the sum also runs over the batch: one scalar, the whole batch's total, which the
caller then adds to every example's log-density (broadcast against a ``(batch,)`` vector,
so nothing raises). Each likelihood counts every other example's scales, the training
loss scales that term by the batch size, and the numbers depend on the batch.

Told in the cell that defines it, from its source (a substring test for ``reduce_sum``
otherwise), for each function or method: an assignment ``N = <..>.reduce_sum(E)`` (no
``axis``, no ``keepdims``) whose name reads as a log-determinant or log-Jacobian
(``log_det``, ``logdet``, ``log_jac``, ``ldj``, ``log_abs_det``...), returned by the
function beside another value (``return y, N``), where ``E`` is computed from one of the
function's parameters (followed through the function's assignments and tuple
unpackings): a log-det of the weights alone (an ActNorm's ``reduce_sum(log|scale|)``) is
the same for every example and stays silent. The fix sums over the features.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source, source_segment

SECTION = "reducing-tensors"
MAX_CELL_CHARS = 50_000
_CACHED_SOURCES = 32
_LOG_DET = re.compile(
    r"(?i)^(?:.*_)?(?:log_?(?:abs_?)?det|log_?jac\w*|ldj|log_?det_?jac\w*)(?:_.*)?$"
)


def _assigned(statement: ast.Assign) -> set[str]:
    return {n.id for t in statement.targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _input_derived(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """Names of the function computed from its parameters (``self`` left out), each with
    the parameter it comes from."""
    parameters = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    parameters += [a.arg for a in function.args.kwonlyargs]
    derived = {p: p for p in parameters if p not in ("self", "cls")}
    assignments = [n for n in ast.walk(function) if isinstance(n, ast.Assign)]
    assignments.sort(key=lambda n: n.lineno)
    for statement in assignments:
        origin = next(
            (
                derived[n.id]
                for n in ast.walk(statement.value)
                if isinstance(n, ast.Name) and n.id in derived
            ),
            None,
        )
        if origin is not None:
            for name in _assigned(statement):
                derived.setdefault(name, origin)
    return derived


def _returned_beside(function: ast.AST, name: str) -> bool:
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Return)
            and isinstance(node.value, ast.Tuple)
            and len(node.value.elts) >= 2
            and any(isinstance(e, ast.Name) and e.id == name for e in node.value.elts)
        ):
            return True
    return False


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if len(source) > MAX_CELL_CHARS or "reduce_sum" not in source or "def " not in source:
        return []
    # What is told depends on the source alone: a cell run again costs one lookup.
    return [reports.note(text, SECTION) for text in _texts(source)]


@functools.lru_cache(maxsize=_CACHED_SOURCES)
def _texts(source: str) -> tuple[str, ...]:
    tree = parsed_source(source)
    if tree is None:
        return ()
    owners: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                owners[id(item)] = node.name
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        derived: dict[str, str] | None = None
        for statement in ast.walk(function):
            if not (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
                and isinstance(statement.value, ast.Call)
                and call_name(statement.value) == "reduce_sum"
                and len(statement.value.args) == 1
                and not statement.value.keywords
            ):
                continue
            name = statement.targets[0].id
            if not _LOG_DET.match(name) or not _returned_beside(function, name):
                continue
            if derived is None:
                derived = _input_derived(function)
            summed = statement.value.args[0]
            reads = {n.id for n in ast.walk(summed) if isinstance(n, ast.Name)}
            origins = [derived[n] for n in sorted(reads) if n in derived]
            if not origins:
                continue
            line = source_segment(source, statement)
            operand = source_segment(source, summed)
            call = source_segment(source, statement.value.func)
            if line is None or operand is None or call is None or "\n" in line:
                continue
            owner = owners.get(id(function))
            where = f"{owner}.{function.name}" if owner else function.name
            text = (
                f"`{line}` (line {statement.lineno} of this cell, in `{where}`) sums "
                f"`{operand}` over every axis, the batch's included. `{operand}` is "
                f"computed from the input `{origins[0]}`, one row per example, and "
                "a log-determinant is one number per example: the log |det| of that "
                f"example's Jacobian. With no axis, `{name}` is the whole batch's total, "
                "and added to each example's log-density it counts every other example "
                "too (the loss then scales that term by the batch size); nothing raises. "
                f"Sum over the features only: `{name} = {call}({operand}, axis=-1)` "
                "(for inputs with more axes, every axis but the first: `axis=[1, 2, 3]` "
                "for images)."
            )
            return (text,)
    return ()
