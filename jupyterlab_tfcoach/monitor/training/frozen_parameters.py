"""A parameter made with ``trainable=False``: used in the forward pass, never trained.

``self.b = tf.Variable(tf.zeros([n]), trainable=False)`` in a ``tf.Module`` (or a Keras
layer) leaves ``b`` out of ``trainable_variables``: a loop that takes the gradient over
them never computes one for ``b`` and no optimizer updates it, so the bias stays at its
start (zero) and the model cannot learn an offset. Nothing raises.

Told in the cell that defines the class, from its source (``parsed_source``, shared): a
cell holding ``trainable=False`` and ``class`` (one substring test otherwise); each class
it defines that extends ``tf.Module`` or a Keras layer or model (checked on the class
object in the namespace), whose methods assign ``self.<name> = tf.Variable(...,
trainable=False)`` of a value that is not an integer, read ``self.<name>`` in arithmetic in
``__call__``/``call`` (``x @ self.w + self.b``), and never change it themselves
(``self.<name>.assign...``: a running statistic or a counter, kept on purpose). The fix
is the same statement without ``trainable=False``.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import is_library_class
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source, self_attribute_name

SECTION = "trainable-weights"
MAX_CELL_CHARS = 50_000
MAX_CLASSES = 8
_BASES = frozenset({"Module", "Layer", "Model"})
_FORWARD = frozenset({"__call__", "call"})
_INTEGER_WORDS = ("int", "bool")


def _trainable_base(cls: Any) -> bool:
    try:
        return any(is_library_class(k) and k.__name__ in _BASES for k in type.mro(cls))
    except Exception:
        return False


def _frozen_variable(node: ast.AST) -> bool:
    """``tf.Variable(..., trainable=False)`` of a value not written as an integer."""
    if not isinstance(node, ast.Call) or call_name(node) != "Variable":
        return False
    flag = next((k.value for k in node.keywords if k.arg == "trainable"), None)
    if not (isinstance(flag, ast.Constant) and flag.value is False):
        return False
    text = ast.unparse(node)
    if any(word in text for word in _INTEGER_WORDS) and "float" not in text:
        return False
    first = node.args[0] if node.args else None
    return not (isinstance(first, ast.Constant) and type(first.value) is int)


def _without_flag(source: str, statement: ast.Assign, call: ast.Call) -> str | None:
    text = ast.get_source_segment(source, statement)
    if text is None or "\n" in text:
        return None
    kept = [k for k in call.keywords if k.arg != "trainable"]
    written = [ast.get_source_segment(source, a) for a in call.args]
    written += [
        f"{k.arg}={ast.get_source_segment(source, k.value)}" if k.arg else None for k in kept
    ]
    func = ast.get_source_segment(source, call.func)
    target = ast.get_source_segment(source, statement.targets[0])
    if func is None or target is None or any(part is None for part in written):
        return None
    return f"{target} = {func}({', '.join(p for p in written if p)})"


def _arithmetic_reads(method: ast.FunctionDef) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(method):
        if isinstance(node, ast.BinOp):
            for side in (node.left, node.right):
                name = self_attribute_name(side)
                if name:
                    names.add(name)
        elif isinstance(node, ast.Call) and call_name(node) in {"matmul", "add", "multiply"}:
            for argument in node.args:
                name = self_attribute_name(argument)
                if name:
                    names.add(name)
    return names


def _assigned_later(cls_node: ast.ClassDef) -> set[str]:
    """``self.<name>`` whose value a method changes (``self.n.assign_add(1)``)."""
    names: set[str] = set()
    for node in ast.walk(cls_node):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr.startswith("assign")
        ):
            name = self_attribute_name(node.func.value)
            if name:
                names.add(name)
    return names


class FrozenParameterCheck:
    """Reads each class once (weakly kept)."""

    def __init__(self) -> None:
        self._read: weakref.WeakSet[type] = weakref.WeakSet()

    def notes(self, source: str, namespace: Mapping[str, Any]) -> list[Note]:
        if "trainable=False" not in source or "class " not in source:
            return []
        if len(source) > MAX_CELL_CHARS:
            return []
        tree = parsed_source(source)
        if tree is None:
            return []
        found: list[Note] = []
        classes = [n for n in tree.body if isinstance(n, ast.ClassDef)][:MAX_CLASSES]
        for cls_node in classes:
            cls = namespace.get(cls_node.name)
            if not isinstance(cls, type) or cls in self._read or not _trainable_base(cls):
                continue
            self._read.add(cls)
            found.extend(_class_notes(source, cls_node))
        return found


def _class_notes(source: str, cls_node: ast.ClassDef) -> list[Note]:
    methods = [n for n in cls_node.body if isinstance(n, ast.FunctionDef)]
    forward = next((m for m in methods if m.name in _FORWARD), None)
    if forward is None:
        return []
    read = _arithmetic_reads(forward)
    changed = _assigned_later(cls_node)
    found: list[Note] = []
    for method in methods:
        for statement in ast.walk(method):
            if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
                continue
            name = self_attribute_name(statement.targets[0])
            if not name or name not in read or name in changed:
                continue
            if not _frozen_variable(statement.value):
                continue
            assert isinstance(statement.value, ast.Call)
            fixed = _without_flag(source, statement, statement.value)
            written = ast.get_source_segment(source, statement) or ""
            text = (
                f"`{cls_node.name}` makes `self.{name}` with `trainable=False` (line "
                f"{statement.lineno}: `{' '.join(written.split())}`) and uses it in "
                f"`{forward.name}`, but nothing in the class updates it: it is not in "
                f"`trainable_variables`, so a gradient over those never reaches "
                f"`self.{name}` and no optimizer changes it; it keeps its starting value "
                "and nothing raises."
            )
            if fixed:
                text += f" To train it, make it trainable: `{fixed}`."
            found.append(reports.note(text, SECTION))
    return found
