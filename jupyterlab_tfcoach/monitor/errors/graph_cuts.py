"""Gradients all None because a step of the loss left TensorFlow inside the tape (issue
#25): ``f = net.predict(pred)`` (Keras runs the model outside the tape and returns a NumPy
array), ``pred.numpy()``, or ``np.<function>(pred)`` between the trainable variables and
the loss. The tape records TensorFlow operations only: what comes back from NumPy is a
constant to it, so ``tape.gradient`` finds no path and the optimizer gets only None.

Read from the cell: the statement that bound the gradients from ``<tape>.gradient(loss,
sources)``, the ``with ... as <tape>:`` block before it, and the block's assignments the
loss depends on (followed back by name). A step there cuts the graph when its input reads
a name the block computed or a source (so the variables' path runs through it): a
``predict``/``predict_on_batch`` of a Keras model, a ``.numpy()`` call, or a call of a
NumPy function (the name holds the ``numpy`` module). A cut applied to data alone
(``net.predict(images)``) takes nothing from the path and is not named.

The fix, per cut: the model called directly in inference mode, as ``predict`` runs it
(``net(pred, training=False)``); ``.numpy()`` dropped when its value goes on into
arithmetic or a TensorFlow/Keras call; a NumPy function is named, its TensorFlow
counterpart left to the learner (their arguments differ).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import CellFrame, code, rewrite, value_kind
from jupyterlab_tfcoach.monitor.errors.tape_statements import gradient_statement, tape_block

Lookup = Callable[[str], tuple[bool, Any]]
_PREDICT = frozenset({"predict", "predict_on_batch"})
# Roots of calls that take a tensor as well as an array: ``.numpy()`` before them is dropped.
_TENSOR_CALL_ROOTS = frozenset({"tf", "tensorflow", "keras", "ops"})
_MAX_CUTS = 3


def _stored(node: ast.AST) -> set[str]:
    return {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def _read(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _contributing(block: ast.With, target: str) -> list[ast.Assign]:
    """The block's assignments the loss depends on, followed back by name, in line order."""
    assignments = [
        node for child in block.body for node in ast.walk(child) if isinstance(node, ast.Assign)
    ]
    wanted, seen, found = [target], set(), []
    while wanted:
        name = wanted.pop()
        if name in seen:
            continue
        seen.add(name)
        for node in assignments:
            if name in _stored(node) and node not in found:
                found.append(node)
                wanted.extend(_read(node.value))
    return sorted(found, key=lambda node: (node.lineno, node.col_offset))


def _is_numpy(name: str, lookup: Lookup) -> bool:
    known, value = lookup(name)
    return known and isinstance(value, ModuleType) and value is sys.modules.get("numpy")


def _parents(statement: ast.AST) -> dict[int, ast.AST]:
    return {id(child): node for node in ast.walk(statement) for child in ast.iter_child_nodes(node)}


def _cuts(
    statement: ast.Assign, recorded: set[str], lookup: Lookup
) -> list[tuple[ast.Call, str, str | None]]:
    """(the call, what it is, its replacement or None) for each step of ``statement`` that
    leaves TensorFlow with an input the tape recorded."""
    found: list[tuple[ast.Call, str, str | None]] = []
    parents = _parents(statement)
    for node in ast.walk(statement.value):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _PREDICT:
            model = func.value
            data = node.args[0] if node.args else None
            data = next((k.value for k in node.keywords if k.arg == "x"), data)
            if not isinstance(model, ast.Name) or data is None or not (_read(data) & recorded):
                continue
            known, value = lookup(model.id)
            if not known or value_kind(value) != "model":
                continue
            found.append((node, "predict", f"{model.id}({{data}}, training=False)"))
        elif isinstance(func, ast.Attribute) and func.attr == "numpy" and not node.args:
            if not (_read(func.value) & recorded):
                continue
            parent = parents.get(id(node))
            keep = isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Assign))
            if isinstance(parent, ast.Call) and parent.func is not node:
                root = parent.func
                while isinstance(root, ast.Attribute):
                    root = root.value
                keep = isinstance(root, ast.Name) and root.id in _TENSOR_CALL_ROOTS
            found.append((node, "numpy", "{value}" if keep else None))
        else:
            root = func
            while isinstance(root, ast.Attribute):
                root = root.value
            if not (isinstance(root, ast.Name) and root is not func):
                continue
            arguments = [*node.args, *(k.value for k in node.keywords)]
            if not any(_read(a) & recorded for a in arguments) or not _is_numpy(root.id, lookup):
                continue
            found.append((node, "numpy_function", None))
    return found


def graph_cut_in_tape(gradient: str, frame: CellFrame, lookup: Lookup) -> str | None:
    """The rule and fix when the gradients ``gradient`` (all None) come from a tape whose
    loss went through ``predict``, ``.numpy()`` or NumPy on the variables' path."""
    tree = frame.tree()
    if tree is None:
        return None
    found = gradient_statement(tree, gradient)
    if found is None or not isinstance(found[1].args[0], ast.Name):
        return None
    statement, call = found
    tape = call.func.value.id  # type: ignore[attr-defined]
    target = call.args[0].id
    block = tape_block(tree, tape, statement.lineno)
    if block is None:
        return None
    recorded = _read(call.args[1])
    said: list[str] = []
    fixes: list[str] = []
    kinds: set[str] = set()
    for assignment in _contributing(block, target):
        for cut, kind, replacement in _cuts(assignment, set(recorded), lookup):
            if len(said) >= _MAX_CUTS:
                break
            written = frame.segment(cut) or ""
            line = frame.segment(assignment) or ""
            if not written or not line or "\n" in line:
                return None
            where = f"line {assignment.lineno}, {code(line)}"
            kinds.add(kind)
            if kind == "predict":
                model = cut.func.value.id  # type: ignore[attr-defined]
                said.append(
                    f"{where}, runs {code(model)} through {code(written.split('(', 1)[0])}, "
                    "which runs the model outside the tape and returns a NumPy array"
                )
            elif kind == "numpy":
                said.append(f"{where}, turns a tensor into a NumPy array with `.numpy()`")
            else:
                said.append(f"{where}, computes with NumPy's {code(written.split('(', 1)[0])}")
            if replacement is not None:
                if kind == "predict":
                    data = cut.args[0] if cut.args else None
                    data = next((k.value for k in cut.keywords if k.arg == "x"), data)
                    text = replacement.format(data=frame.segment(data) if data else "")
                else:
                    text = frame.segment(cut.func.value) or ""  # type: ignore[attr-defined]
                fixed = rewrite(frame, assignment, cut, text)
                if fixed and "\n" not in fixed:
                    fixes.append(code(fixed))
        # A name assigned in the block is on the variables' path once a recorded name
        # reaches it.
        if _read(assignment.value) & recorded:
            recorded |= _stored(assignment)
    if not said:
        return None
    steps = "; ".join(said)
    sources = frame.segment(call.args[1]) or "the variables"
    advice = []
    if "predict" in kinds:
        advice.append(
            "call a model directly inside a training step (`predict` runs it in inference "
            "mode, which is `training=False`)"
        )
    if kinds - {"predict"}:
        advice.append("use TensorFlow's or `keras.ops`'s functions on the tensors, not NumPy's")
    rule = (
        f"{code(gradient)} holds only None: inside {code(f'with ... as {tape}:')}, {steps}. "
        f"The tape records TensorFlow operations only, so from there on the loss "
        f"{code(target)} is a constant to it: {code(f'{tape}.gradient(...)')} finds no path "
        f"from {code(sources)} to the loss and returns None for every one. Keep every step "
        f"from the variables to the loss in TensorFlow: {' and '.join(advice)}"
    )
    if not fixes:
        return rule + "."
    return rule + ". Fix: " + " and ".join(fixes) + "."
