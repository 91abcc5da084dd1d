"""Keras 2's backend math on Keras 3: ``K.clip``, ``K.mean``, ``K.pow`` (issue #25).

Keras 3's ``keras.backend`` keeps only settings (``epsilon()``, ``floatx()``,
``image_data_format()``, ``clear_session()``); the tensor functions of Keras 2's backend
live in ``keras.ops``, under NumPy's names. Code written for tf.keras 2 (a custom loss, a
metric, a Lambda layer's function) raises ``module 'keras.backend' has no attribute
'clip'`` at the first of them, and again at each of the others once that one is fixed.

Read from the failing line and the cell: each ``<backend>.<name>`` whose owner is the
backend module the failing one was read on and whose name the backend lacks but
``keras.ops`` has (the same name, or a known rename: ``pow`` -> ``power``, ``switch`` ->
``where``, ``permute_dimensions`` -> ``transpose``, ``repeat_elements`` -> ``repeat``,
``gather`` -> ``take`` along axis 0, ``flatten`` -> ``ravel``). Where Keras 2 and
``keras.ops`` differ in a default axis (``argmax``, ``argmin``, ``concatenate`` and
``expand_dims`` took the last axis, ``cumsum``/``cumprod`` the first), a call that gives no
axis gets Keras 2's written out, so the rewritten line computes what it did. The fix is
every such statement of the cell, rewritten, the failing one last; ``keras.ops`` spelled as
the namespace holds it (``ops`` after ``from keras import ops``), else through the
learner's ``keras``.
"""

from __future__ import annotations

import ast
import sys
from types import ModuleType
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import CellFrame, ErrorContext, code, rewrite_all
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import Finding

SECTION = "custom-layers"
# Keras 2 backend name -> keras.ops name, where they differ.
_RENAMED = {
    "pow": "power",
    "switch": "where",
    "permute_dimensions": "transpose",
    "repeat_elements": "repeat",
    "gather": "take",
    "flatten": "ravel",
}
# keras.ops names that exist but mean something else than the backend's function.
_OTHER_MEANING = frozenset({"switch"})
# Keras 2's default axis where keras.ops has another (or none): (position, axis).
_KERAS2_AXIS = {
    "argmax": (1, "-1"),
    "argmin": (1, "-1"),
    "concatenate": (1, "-1"),
    "expand_dims": (1, "-1"),
    "cumsum": (1, "0"),
    "cumprod": (1, "0"),
    "take": (2, "0"),
}
_PLACEHOLDER = "__tfcoach_ops__"
_MAX_STATEMENTS = 6


def _ops_module() -> ModuleType | None:
    keras = sys.modules.get("keras")
    ops = vars(keras).get("ops") if isinstance(keras, ModuleType) else None
    return ops if isinstance(ops, ModuleType) else None


def _ops_name(name: str, backend: ModuleType) -> str | None:
    """What ``keras.ops`` calls the backend function ``name``; None when the backend has
    it, or keras.ops has nothing of that meaning."""
    ops = _ops_module()
    if ops is None or name in vars(backend) or (name in _OTHER_MEANING and name not in _RENAMED):
        return None
    new = _RENAMED.get(name, name)
    return new if callable(vars(ops).get(new)) else None


def _ops_spelling(context: ErrorContext) -> str:
    """``ops`` when the namespace holds keras.ops under a name, else ``keras.ops``."""
    ops = _ops_module()
    if ops is not None:
        for name, value in context.namespace.items():
            if value is ops and type(name) is str and not name.startswith("_"):
                return name
    return f"{context.module_alias('keras', 'keras')}.ops"


def _backend_reads(
    tree: ast.AST, frame: CellFrame, backend: ModuleType, context: ErrorContext
) -> list[ast.Attribute]:
    """Every ``<owner>.<name>`` of the cell whose owner holds ``backend`` (a plain name, or
    ``keras.backend`` / ``tf.keras.backend``) and whose name keras.ops has."""
    found: list[ast.Attribute] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or _ops_name(node.attr, backend) is None:
            continue
        known, owner = value_of(node.value, frame, context)
        if not known and isinstance(node.value, ast.Attribute):
            known, owner = _module_chain(node.value, frame, context)
        if known and owner is backend:
            found.append(node)
    return found


def _module_chain(node: ast.expr, frame: CellFrame, context: ErrorContext) -> tuple[bool, Any]:
    """``keras.backend`` read through the modules' dicts (nothing imported)."""
    if isinstance(node, ast.Name):
        return context.lookup(node.id, frame)
    if isinstance(node, ast.Attribute):
        known, parent = _module_chain(node.value, frame, context)
        if known and isinstance(parent, ModuleType):
            child = vars(parent).get(node.attr)
            return (True, child) if child is not None else (False, None)
    return False, None


def _statement_of(tree: ast.Module, node: ast.AST) -> ast.stmt | None:
    """The innermost simple statement (not a block) holding ``node``."""
    found: ast.stmt | None = None
    for statement in ast.walk(tree):
        if (
            isinstance(statement, ast.stmt)
            and not hasattr(statement, "body")
            and any(inner is node for inner in ast.walk(statement))
        ):
            found = statement
    return found


def _with_axes(text: str) -> str | None:
    """The rewritten statement (placeholder for keras.ops) with Keras 2's default axis
    written into each moved call that gives none."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    inserts: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == _PLACEHOLDER
            and node.func.attr in _KERAS2_AXIS
        ):
            continue
        position, axis = _KERAS2_AXIS[node.func.attr]
        if len(node.args) > position or any(kw.arg == "axis" for kw in node.keywords):
            continue
        if any(isinstance(arg, ast.Starred) for arg in node.args) or any(
            kw.arg is None for kw in node.keywords
        ):
            return None
        if node.lineno != 1 or node.end_lineno != 1 or node.end_col_offset is None:
            return None
        inserts.append((node.end_col_offset - 1, f"axis={axis}"))
    for at, keyword in sorted(inserts, reverse=True):
        before = text[:at].rstrip()
        joiner = " " if before.endswith(("(", ",")) else ", "
        if before.endswith("("):
            joiner = ""
        text = before + joiner + keyword + text[at:]
    return text


def _rewritten(
    frame: CellFrame, statement: ast.stmt, reads: list[ast.Attribute], ops: str
) -> str | None:
    """``statement`` with each backend read in it written with keras.ops."""
    backend = {id(node) for node in reads}
    places = [
        (node, f"{_PLACEHOLDER}.{_RENAMED.get(node.attr, node.attr)}")
        for node in ast.walk(statement)
        if isinstance(node, ast.Attribute) and id(node) in backend
    ]
    if not places:
        return None
    text = rewrite_all(frame, statement, places)  # type: ignore[arg-type]
    if not text or "\n" in text:
        return None
    with_axes = _with_axes(text)
    return with_axes.replace(_PLACEHOLDER, ops) if with_axes else None


def backend_math(
    line: FailingLine, node: ast.Attribute, backend: Any, context: ErrorContext
) -> Finding | None:
    """The finding for ``K.<name>`` missing from Keras 3's backend when keras.ops has it."""
    if not isinstance(backend, ModuleType):
        return None
    new = _ops_name(node.attr, backend)
    frame = line.frame
    tree = frame.tree()
    statement = line.statement
    if new is None or tree is None or statement is None:
        return None
    ops = _ops_spelling(context)
    written = frame.segment(node.value) or "keras.backend"
    reads = _backend_reads(tree, frame, backend, context)
    if not any(read is node for read in reads):
        reads.append(node)
    names = sorted({read.attr for read in reads})
    moved = ", ".join(
        f"{code(f'{written}.{name}')} is {code(f'{ops}.{_RENAMED.get(name, name)}')}"
        for name in names[:8]
    )
    rule = (
        "Keras 3's `keras.backend` keeps only settings (`epsilon()`, `floatx()`, "
        "`image_data_format()`, `clear_session()`): the tensor functions of Keras 2's "
        "backend moved to `keras.ops`, under NumPy's names, and work in a loss, a metric or "
        f"a layer as they did. {moved}"
    )
    axes = sorted({name for name in names if _RENAMED.get(name, name) in _KERAS2_AXIS})
    if axes:
        rule += (
            f" ({', '.join(code(f'{written}.{name}') for name in axes)} took another default "
            "axis than keras.ops: the fix writes Keras 2's)"
        )
    statements: list[ast.stmt] = []
    for read in sorted(reads, key=lambda each: (each.lineno, each.col_offset)):
        held = _statement_of(tree, read)
        if held is not None and all(held is not seen for seen in statements):
            statements.append(held)
    others = [
        held for held in statements if held is not statement and held.lineno != statement.lineno
    ]
    if len(others) >= _MAX_STATEMENTS:
        return Finding(rule + ".", None, section=SECTION)
    fixed = _rewritten(frame, statement, reads, ops)
    if fixed is None:
        return Finding(rule + ".", None, section=SECTION)
    fixed_others: list[str] = []
    for held in others:
        other = _rewritten(frame, held, reads, ops)
        if other is None:
            return Finding(rule + ".", None, section=SECTION)
        fixed_others.append(f"on line {held.lineno} {code(other)}")
    rule += "."
    if fixed_others:
        rule += (
            f" This cell reads {len(others) + 1} lines of the backend's functions; Python "
            "stops at the first, each would fail in turn"
        )
        fix = f"{', '.join(fixed_others)}, and on line {statement.lineno} {code(fixed)}"
        return Finding(rule + ".", fix, section=SECTION)
    return Finding(rule, code(fixed), section=SECTION)
