"""What a custom loop does with its list of gradients, silently wrong (issue #25).

Two symptoms read from the cell's text once it completed (a cell without ``gradient(``
costs one substring test), for the names the cell assigns from a ``tape.gradient(...)``
call:

- ``accum += grads`` where ``accum`` holds a Python list after the cell: ``+=`` on a list
  appends the gradients after the old items instead of adding them, so a later
  ``zip(accum, model.trainable_variables)`` pairs the variables with the first items
  only. Fix: ``accum = [a + g for a, g in zip(accum, grads)]``, with ``g / n`` when the
  loss is a mean over each of ``n`` micro-batches (``accumulated_means.averaged``).
- a processed copy of the gradients (``clipped, norm = tf.clip_by_global_norm(grads,
  ...)``, ``clip_by_norm``, ``clip_by_value``, a list comprehension over them) that the
  rest of the cell never reads, while an ``apply_gradients``/``apply`` call after it is
  given the original name: the processing has no effect. Fix: that call with the
  processed name.

Reads the cell's syntax and the type of one name; nothing here imports TensorFlow or
prints.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.accumulated_means import averaged
from jupyterlab_tfcoach.monitor.syntax import parsed_source

SECTION = "training-loop"
_PROCESSING = ("clip_by_global_norm", "clip_by_norm", "clip_by_value")
_APPLY = ("apply_gradients", "apply")


def _gradient_names(tree: ast.Module) -> set[str]:
    """Names assigned from a ``<tape>.gradient(...)`` call anywhere in the cell."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr == "gradient"
        ):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names.add(target.id)
    return names


def _reads(node: ast.AST, name: str) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
        for n in ast.walk(node)
    )


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """This cell's gradient lists added with ``+=`` or processed and then not applied."""
    if "gradient(" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    gradients = _gradient_names(tree)
    if not gradients:
        return []
    found = _concatenated(tree, gradients, source, namespace)
    return found if found else _unused_processing(tree, gradients, source)


def _concatenated(
    tree: ast.Module, gradients: set[str], source: str, namespace: Mapping[str, Any]
) -> list[Note]:
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.AugAssign)
            and isinstance(node.op, ast.Add)
            and isinstance(node.target, ast.Name)
            and isinstance(node.value, ast.Name)
            and node.value.id in gradients
            and type(namespace.get(node.target.id)) is list
        ):
            continue
        total, grads = node.target.id, node.value.id
        written = ast.get_source_segment(source, node) or f"{total} += {grads}"
        fix = f"{total} = [a + g for a, g in zip({total}, {grads})]"
        # A sum of mean losses' gradients is itself told (``accumulated_means``): the fix
        # printed here is the one that check would leave alone.
        fix = averaged(source.replace(written, fix, 1), namespace, fix)
        text = (
            f"`{written}` (line {node.lineno} of this cell) does not add the gradients: "
            f"`{total}` is a Python list, and `+=` on a list appends `{grads}`'s items "
            f"after its own (it now holds {len(namespace[total])} items). A later "
            f"`zip({total}, ...)` with the variables pairs them with the first items only, "
            f"so the summed gradients are never used, and nothing raises. Add them item by "
            f"item: `{fix}`."
        )
        return [reports.note(text, SECTION)]
    return []


def _processed_name(node: ast.Assign, gradients: set[str]) -> tuple[str, str] | None:
    """(processed name, gradient name) for ``clipped[, norm] = clip(grads, ...)`` or a
    list comprehension over ``grads``."""
    target = node.targets[0] if len(node.targets) == 1 else None
    if isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0], ast.Name):
        name = target.elts[0].id
    elif isinstance(target, ast.Name):
        name = target.id
    else:
        return None
    value = node.value
    if isinstance(value, ast.Call):
        func = value.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if called not in _PROCESSING or not value.args:
            return None
        source = value.args[0]
    elif isinstance(value, ast.ListComp) and value.generators:
        source = value.generators[0].iter
    else:
        return None
    used = [n.id for n in ast.walk(source) if isinstance(n, ast.Name) and n.id in gradients]
    if len(set(used)) != 1 or name in gradients:
        return None
    return name, used[0]


def _unused_processing(tree: ast.Module, gradients: set[str], source: str) -> list[Note]:
    statements = [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]
    for node in statements:
        if not isinstance(node, ast.Assign):
            continue
        pair = _processed_name(node, gradients)
        if pair is None:
            continue
        processed, grads = pair
        later = [s for s in statements if s.lineno > (node.end_lineno or node.lineno)]
        if any(_reads(s, processed) for s in later):
            continue
        applies = [
            call
            for s in later
            for call in ast.walk(s)
            if isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr in _APPLY
            and _reads(call, grads)
        ]
        if not applies:
            continue
        apply = applies[0]
        written = ast.get_source_segment(source, node) or processed
        applied = ast.get_source_segment(source, apply) or ""
        text = (
            f"`{processed}` is computed from `{grads}` (line {node.lineno} of this cell: "
            f"`{written}`) but never used: line {apply.lineno} applies `{grads}` itself, so "
            f"the processing has no effect on the update, and nothing raises."
        )
        fixed = re.sub(rf"\b{re.escape(grads)}\b", processed, applied) if applied else ""
        if fixed and "\n" not in fixed:
            text += f" Apply the processed gradients: `{fixed}`."
        return [reports.note(text, SECTION)]
    return []
