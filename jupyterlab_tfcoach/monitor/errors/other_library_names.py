"""Another library's attribute names asked of a Keras layer (``bn.running_mean``,
``dense.weight``, ``drop.p``): PyTorch's names for what Keras stores under its own.
Python's message says only that the name is missing, and no Keras name is close in
spelling (``moving_mean`` is far from ``running_mean``), so the closest-name reading has
nothing to offer.

Read from the layer's Keras classes (its type's MRO, no attribute of the object run): a
table of (Keras base class, the other library's name) -> Keras's name. The fix renames
the failing line's reading, and the cell's later lines that read another name of the
same table on an object of the same class get theirs (``bn.running_var`` after
``bn.running_mean``): each would raise next.
"""

from __future__ import annotations

import ast
from typing import Any

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import Finding
from jupyterlab_tfcoach.monitor.stored_state import is_library_class, mro_of_class

_type_name = type.__dict__["__name__"].__get__

# (a Keras base class, PyTorch's attribute) -> Keras's attribute.
_KERAS_NAMES: dict[tuple[str, str], str] = {
    ("BatchNormalization", "running_mean"): "moving_mean",
    ("BatchNormalization", "running_var"): "moving_variance",
    ("BatchNormalization", "weight"): "gamma",
    ("BatchNormalization", "bias"): "beta",
    ("BatchNormalization", "eps"): "epsilon",
    ("LayerNormalization", "weight"): "gamma",
    ("LayerNormalization", "bias"): "beta",
    ("LayerNormalization", "eps"): "epsilon",
    ("Dense", "weight"): "kernel",
    ("Dense", "out_features"): "units",
    ("BaseConv", "weight"): "kernel",
    ("BaseConv", "out_channels"): "filters",
    ("Embedding", "weight"): "embeddings",
    ("Embedding", "num_embeddings"): "input_dim",
    ("Embedding", "embedding_dim"): "output_dim",
    ("Dropout", "p"): "rate",
}
_MAX_LATER = 3
SECTION = "keras-model-api"
# BatchNormalization's statistics and Dropout's rate are taught with the training flag.
_SECTIONS = {"BatchNormalization": "training-argument", "Dropout": "training-argument"}


def _keras_bases(value: Any) -> list[str]:
    try:
        return [_type_name(k) for k in mro_of_class(type(value)) if is_library_class(k)]
    except Exception:
        return []


def _keras_name(value: Any, name: str) -> tuple[str, str] | None:
    """(the Keras class that has it, Keras's name) for ``name`` on ``value``."""
    for base in _keras_bases(value):
        new = _KERAS_NAMES.get((base, name))
        if new is not None:
            return base, new
    return None


def other_library_name(
    line: FailingLine, node: ast.Attribute, owner: Any, context: ErrorContext
) -> Finding | None:
    """``<layer>.<PyTorch's name>`` on a Keras layer: Keras's name, and the fix."""
    known = _keras_name(owner, node.attr)
    statement = line.statement
    owner_source = line.frame.segment(node.value)
    if known is None or statement is None or not owner_source or "\n" in owner_source:
        return None
    base, new = known
    layer = _type_name(type(owner))
    rule = (
        f"`{node.attr}` is another library's name (PyTorch's): a Keras `{layer}` keeps "
        f"it as `{new}`, so {code(f'{owner_source}.{new}')}"
    )
    fixed = rewrite(line.frame, statement, node, f"{owner_source}.{new}")
    fix = code(fixed) if fixed and "\n" not in fixed else None
    later = _later_lines(line, owner, base, context)
    if later:
        rule += "; the cell's later lines read such names too: " + ", ".join(
            f"`{old}` is `{renamed}`" for old, renamed, _ in later
        )
        if fix is not None:
            fix += ", then " + ", ".join(f"on line {n} {code(text)}" for _, _, (n, text) in later)
    return Finding(rule + ".", fix, section=_SECTIONS.get(base, SECTION))


def _later_lines(
    line: FailingLine, owner: Any, base: str, context: ErrorContext
) -> list[tuple[str, str, tuple[int, str]]]:
    """The cell's later one-line statements reading a name of the table, for the same
    Keras class, on an object of the same type: (old, new, (line, fixed statement))."""
    tree = line.frame.tree()
    at = line.frame.position.line
    found: list[tuple[str, str, tuple[int, str]]] = []
    for statement in tree.body if isinstance(tree, ast.Module) else []:
        if statement.lineno <= at or statement.lineno != statement.end_lineno:
            continue
        for node in ast.walk(statement):
            if not isinstance(node, ast.Attribute):
                continue
            new = _KERAS_NAMES.get((base, node.attr))
            if new is None:
                continue
            held, value = value_of(node.value, line.frame, context)
            source = line.frame.segment(node.value)
            if not held or type(value) is not type(owner) or not source:
                continue
            fixed = rewrite(line.frame, statement, node, f"{source}.{new}")
            if fixed and "\n" not in fixed:
                found.append((node.attr, new, (statement.lineno, fixed)))
            break
        if len(found) >= _MAX_LATER:
            break
    return found
