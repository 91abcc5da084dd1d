"""``tf.summary`` calls with no default writer: they return False and write nothing.

``tf.summary.write(...)`` (or ``scalar``, ``histogram``, ``image``, ``text``) writes to the
writer made the default by ``with writer.as_default():`` (or ``writer.set_as_default()``).
Outside such a block there is none: the call returns ``False``, nothing is logged, and the
learner's TensorBoard shows an empty run. Nothing raises.

After a completed cell holding ``summary.`` (one substring test otherwise): its summary
calls written outside every ``with ... as_default(...)`` block and outside ``def`` (a
function may be called inside such a block elsewhere), while TensorFlow has no default
writer after the cell (``summary_ops_v2._summary_state.writer``, read from the module
TensorFlow loaded: ``set_as_default`` was not called either). The note names the calls and
the writer to use: one the cell created (``tf.summary.create_file_writer``), else a
summary writer a namespace name holds; the fix is the calls inside ``with
<writer>.as_default():``.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import call_name, dotted_name, parsed_source

SECTION = "epoch-figures"
SUMMARY_MODULE = "tensorflow.python.ops.summary_ops_v2"
MAX_CELL_CHARS = 50_000
_WRITES = frozenset({"write", "scalar", "histogram", "image", "text", "audio"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _default_writer_set() -> bool | None:
    module = sys.modules.get(SUMMARY_MODULE)
    state = getattr(module, "_summary_state", None) if module is not None else None
    if state is None:
        return None
    return getattr(state, "writer", None) is not None


def _summary_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call) or call_name(node) not in _WRITES:
        return False
    name = dotted_name(node.func) or ""
    return ".summary." in f".{name}"


def _as_default(item: ast.withitem) -> bool:
    expr = item.context_expr
    return isinstance(expr, ast.Call) and call_name(expr) == "as_default"


def _unguarded_calls(tree: ast.Module) -> list[ast.Call]:
    found: list[ast.Call] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, _SCOPES):
            return
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(map(_as_default, node.items)):
            return
        if _summary_call(node):
            assert isinstance(node, ast.Call)
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    for statement in tree.body:
        visit(statement)
    return found


def _writer_name(tree: ast.Module, namespace: Mapping[str, Any]) -> str | None:
    """A writer the cell made, else one a namespace name holds."""
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call)
            and call_name(node.value) == "create_file_writer"
        ):
            return node.targets[0].id
    for name, value in list(namespace.items()):
        if type(name) is str and not name.startswith("_"):
            if type(value).__name__ == "_ResourceSummaryWriter":
                return name
    return None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if "summary." not in source or len(source) > MAX_CELL_CHARS:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    calls = _unguarded_calls(tree)
    if not calls or _default_writer_set() is not False:
        return []
    lines = sorted({call.lineno for call in calls})
    shown = [" ".join((ast.get_source_segment(source, c) or "").split()) for c in calls[:2]]
    listed = " and ".join(f"`{text}`" for text in shown if text)
    more = f" ({len(calls)} calls in all)" if len(calls) > 2 else ""
    where = ", ".join(str(line) for line in lines[:6])
    writer = _writer_name(tree, namespace)
    text = (
        f"{listed}{more} (line{'s' if len(lines) > 1 else ''} {where} of this cell) "
        "ran with no default summary writer: a tf.summary call writes to the writer made "
        "the default by `with writer.as_default():`, and outside one it returns False and "
        "writes nothing, without any error."
    )
    if writer:
        text += f" Put the calls inside `with {writer}.as_default():` (indented under it)."
    else:
        text += (
            " Make a writer, `writer = tf.summary.create_file_writer(log_dir)`, and put "
            "the calls inside `with writer.as_default():`."
        )
    return [reports.note(text, SECTION)]
