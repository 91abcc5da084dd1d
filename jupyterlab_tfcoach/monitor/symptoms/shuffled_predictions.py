"""Predictions made on a shuffled dataset, compared with targets kept in their own order.

``preds = model.predict(val_ds)`` where ``val_ds`` has a ``shuffle`` returns the
predictions in the shuffled order; comparing them with the arrays the dataset was built
from (``y_val - preds``, ``np.mean(preds.argmax(1) == y_test)``, ``r2_score(y_val,
preds)``) pairs each prediction with another example's target. The score is that of
random pairs (an R^2 far below 0, an accuracy near chance), and nothing raises.
``model.evaluate(val_ds)`` is right: it pairs each batch itself.

After a cell that completed (a cell without ``predict(`` costs one substring test), each
top-level ``P = <...>.predict(D)...`` with ``D`` a name holding a dataset whose lineage
(``dataset_order.chain_of``, at most 64 links, instance ``__dict__``s only) has a
``shuffle`` is followed: a later operation or call of the cell (``-``, ``==``, a
function's arguments) that takes ``P`` (also under indexing, ``argmax``, ``ravel``, a
cut against a number, or through a name the cell made from ``P`` so: ``pred = P > 0.5``)
and another name ``Y`` holding an array or tensor with as many rows as ``P``, ``Y`` not
collected from ``D`` in the cell (``symptoms/reshuffled_passes.py`` tells that case).
The note names the prediction, the shuffle and ``Y``; fix: the learner's statement that
built ``D`` without its ``shuffle`` (found in the cell or the last 30 cells).

Reads shapes, type names and the source only; nothing here imports TensorFlow or prints.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import first_axis
from jupyterlab_tfcoach.monitor.symptoms.dataset_order import (
    SHUFFLE,
    chain_of,
    operation,
    statement_chain,
)
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "tf-data-order"
MAX_HISTORY_CELLS = 30
# Methods and functions that keep a value's rows: followed to the name under them.
_ROW_PRESERVING = frozenset(
    {
        "ravel",
        "flatten",
        "squeeze",
        "numpy",
        "astype",
        "argmax",
        "round",
        "reshape",
        "cast",
        "asarray",
        "array",
        "convert_to_tensor",
    }
)


def _base_name(node: ast.AST) -> str | None:
    """``preds`` for ``preds``, ``preds[:, 0]``, ``preds.ravel()``,
    ``np.argmax(preds, 1)``, ``tf.cast(preds, ...)``."""
    for _ in range(6):
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Compare) and len(node.comparators) == 1:
            # A cut (``preds > 0.5``, ``y_val[..., 0] > 0``) keeps the rows of its left side.
            if not isinstance(node.comparators[0], ast.Constant):
                return None
            node = node.left
        elif isinstance(node, ast.Call) and call_name(node) in _ROW_PRESERVING:
            func = node.func
            # A method of the value (``preds.ravel()``) or a module's function of it.
            if isinstance(func, ast.Attribute) and not _is_module_path(func.value):
                node = func.value
            elif node.args:
                node = node.args[0]
            else:
                return None
        else:
            return None
    return None


def _is_module_path(node: ast.AST) -> bool:
    """``np``, ``tf``, ``tf.math``, ``keras.ops``: a module's name, as learners write it."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in ("np", "numpy", "tf", "keras", "ops", "jnp")


def _operands(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.Compare) and len(node.comparators) == 1:
        return [node.left, node.comparators[0]]
    if isinstance(node, ast.Call):
        return [*node.args, *(k.value for k in node.keywords)]
    return []


def _predicted(tree: ast.Module) -> dict[str, tuple[ast.Assign, ast.Call, str]]:
    """``P -> (statement, predict call, D)`` for each top-level ``P = ...predict(D)...``."""
    found: dict[str, tuple[ast.Assign, ast.Call, str]] = {}
    for statement in tree.body:
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            continue
        for node in ast.walk(statement.value):
            if (
                isinstance(node, ast.Call)
                and call_name(node) == "predict"
                and isinstance(node.func, ast.Attribute)
                and node.args
                and isinstance(node.args[0], ast.Name)
            ):
                found[statement.targets[0].id] = (statement, node, node.args[0].id)
                break
        else:
            # A name made from predictions keeps their order: ``pred = probs[..., 0] > 0.5``.
            base = _base_name(statement.value)
            if base in found:
                found[statement.targets[0].id] = (found[base][0], found[base][1], found[base][2])
    return found


def _collected_from(tree: ast.Module, name: str, dataset: str) -> bool:
    """Whether the cell assigns ``name`` from an expression reading ``dataset``."""
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in statement.targets
        ):
            if any(isinstance(n, ast.Name) and n.id == dataset for n in ast.walk(statement.value)):
                return True
    return False


def _shuffle_link(dataset: Any) -> Any | None:
    for link in chain_of(dataset):
        if operation(link) == SHUFFLE:
            return link
    return None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for predictions of a shuffled dataset compared with ordered targets."""
    if "predict(" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    predicted = _predicted(tree)
    if not predicted:
        return []
    for statement in tree.body:
        for node in ast.walk(statement):
            names = [_base_name(operand) for operand in _operands(node)]
            for name in names:
                if name not in predicted:
                    continue
                assignment, call, dataset_name = predicted[name]
                if getattr(node, "lineno", 0) <= assignment.lineno:
                    continue
                rows = first_axis(namespace.get(name))
                if rows is None:
                    continue
                for other in names:
                    if other is None or other in (name, dataset_name) or other in predicted:
                        continue
                    if first_axis(namespace.get(other)) != rows:
                        continue
                    if _collected_from(tree, other, dataset_name):
                        continue
                    dataset = namespace.get(dataset_name)
                    if operation(dataset) is None or _shuffle_link(dataset) is None:
                        continue
                    note = _note(name, call, dataset_name, other, node, source, namespace)
                    return [note]
    return []


def _note(
    name: str,
    call: ast.Call,
    dataset: str,
    target: str,
    compared: ast.AST,
    source: str,
    namespace: Mapping[str, Any],
) -> Note:
    predicted = ast.get_source_segment(source, call) or f"model.predict({dataset})"
    history = namespace.get("In")
    earlier = history[-MAX_HISTORY_CELLS:] if type(history) is list else []
    chain = statement_chain(dataset, [source, *reversed([s for s in earlier if type(s) is str])])
    shuffles = [call for call in chain.calls if call[0] == "shuffle"] if chain else []
    shown = f"`.shuffle({shuffles[0][1]})`" if shuffles else "a `shuffle`"
    text = (
        f"`{name}` comes from `{predicted}` (line {call.lineno} of this cell), and `{dataset}` "
        f"has {shown}: the predictions come out in the shuffled order. Line "
        f"{getattr(compared, 'lineno', 0)} compares them with `{target}`, which keeps the "
        f"original order, so each prediction is paired with another example's target and "
        "the score is that of random pairs (an R^2 below 0, an accuracy near chance). "
        f"Nothing raises. Predict on data in `{target}`'s order"
    )
    if chain is not None and len(shuffles) == 1:
        calls = [c for c in chain.calls if c[0] != "shuffle"]
        text += f": build `{dataset}` without the shuffle, `{chain.text(calls)}`."
    else:
        text += f": build `{dataset}` without its shuffle (keep the shuffle for training data)."
    return reports.note(text, SECTION)
