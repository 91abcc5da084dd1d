"""A mean of values multiplied by a padding mask: divided by every position, padding too.

``mask = tf.cast(tokens != 0, tf.float32)`` is 1 on the real positions and 0 on the
padding. ``tf.reduce_mean(hits * mask)`` zeroes the padded positions' values but still
divides by the count of all positions, so it gives the masked mean times the share of
real positions: an accuracy or a loss that is too low by that share, and that changes
with how much padding a batch holds. Nothing raises. The masked mean is
``tf.reduce_sum(hits * mask) / tf.reduce_sum(mask)``.

After a completed cell whose text holds a mean (``reduce_mean``, ``mean(``) and a
padding test (``!= 0``, ``> 0``, ``not_equal``, ``greater``, ``sequence_mask``) or the word
``mask`` (a few substring tests otherwise), each function of the cell and its top level
is read (``ast``, never run): the names bound to a padding test of 0
(``x != 0``, ``x > 0``, ``tf.not_equal(x, 0)``, ``tf.math.greater(x, 0)``,
``tf.sequence_mask(...)``, under a cast or ``astype``), and a function's parameters
named ``*mask*``. Told: a mean with no axis (``tf.reduce_mean``, ``keras.ops.mean``,
``np.mean``, ``.mean()``) of a product with such a name. Silent when that mean is divided
by something (``reduce_mean(x * m) / reduce_mean(m)`` is right), and for a product with
anything else. The fix is the same line with the sum of the product divided by the sum
of the mask, in the same library.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import unwrap_calls
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    child_nodes,
    children,
    parsed_source,
    walk_nodes,
)

SECTION = "reducing-tensors"
MAX_CELL_CHARS = 50_000
_MEANS = frozenset({"reduce_mean", "mean"})
_PADDING_TESTS = ("!= 0", "> 0", "not_equal", "greater", "sequence_mask", "mask")
# ``tf.cast(m, ...)``, ``m.astype(...)``, ``tf.expand_dims(m, -1)`` are read as ``m``.
MASK_WRAPPERS = frozenset({"cast", "astype", "expand_dims", "to_float"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _is_zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0 and node.value is not False


def _is_padding_mask(node: ast.AST) -> bool:
    """A test that keeps the non-zero positions: ``x != 0``, ``x > 0``, ``not_equal(x, 0)``,
    ``greater(x, 0)``, ``sequence_mask(lengths, ...)``."""
    node = unwrap_calls(node, MASK_WRAPPERS)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        return isinstance(node.ops[0], (ast.NotEq, ast.Gt)) and _is_zero(node.comparators[0])
    if isinstance(node, ast.Call):
        name = call_name(node)
        if name == "sequence_mask":
            return True
        if name in ("not_equal", "greater") and len(node.args) == 2:
            return _is_zero(node.args[1])
    return False


def _scopes(tree: ast.Module) -> list[tuple[str | None, list[ast.AST], set[str]]]:
    """The cell's top level and each function: (its name, its nodes outside nested
    scopes, its parameters named ``*mask*``)."""
    found: list[tuple[str | None, list[ast.AST], set[str]]] = []

    table = child_nodes(tree)

    def own_nodes(body: list[ast.stmt]) -> list[ast.AST]:
        nodes: list[ast.AST] = []
        stack: list[ast.AST] = list(body)
        while stack:
            node = stack.pop()
            if isinstance(node, _SCOPES):
                continue
            nodes.append(node)
            stack.extend(children(table, node))
        return nodes

    found.append((None, own_nodes(tree.body), set()))
    for node in walk_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            masks = {arg.arg for arg in node.args.args if "mask" in arg.arg.lower()}
            found.append((node.name, own_nodes(node.body), masks))
    return found


def _mask_names(nodes: list[ast.AST], parameters: set[str]) -> set[str]:
    names = set(parameters)
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and _is_padding_mask(node.value):
                names.add(target.id)
    # A name rebound to something else is not a mask any more: leave it out.
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if (
                isinstance(target, ast.Name)
                and target.id in names
                and target.id not in parameters
                and not _is_padding_mask(node.value)
            ):
                names.discard(target.id)
    return names


def _masked_product(node: ast.AST, masks: set[str]) -> str | None:
    """The mask name when ``node`` is ``values * mask`` (either side)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return None
    for side in (node.left, node.right):
        side = unwrap_calls(side, MASK_WRAPPERS)
        if isinstance(side, ast.Name) and side.id in masks:
            return side.id
    return None


def _divided(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    parent = parents.get(id(node))
    return isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Div) and parent.left is node


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a mean over a masked product, if any."""
    if len(source) > MAX_CELL_CHARS or "mean" not in source:
        return []
    if not any(test in source for test in _PADDING_TESTS):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    # Each node's parent, made only once a masked mean is found (most cells have none).
    parents: dict[int, ast.AST] | None = None
    for function, nodes, parameters in _scopes(tree):
        masks = _mask_names(nodes, parameters)
        if not masks:
            continue
        for node in nodes:
            if not isinstance(node, ast.Call) or call_name(node) not in _MEANS or node.keywords:
                continue
            method = isinstance(node.func, ast.Attribute) and not node.args
            if method:
                assert isinstance(node.func, ast.Attribute)
                product: ast.AST = node.func.value
            elif len(node.args) == 1:
                product = node.args[0]
            else:
                continue  # an axis: a per-row mean, left alone
            mask = _masked_product(product, masks)
            if mask is None:
                continue
            if parents is None:
                parents = {
                    id(child): parent
                    for parent in walk_nodes(tree)
                    for child in ast.iter_child_nodes(parent)
                }
            if _divided(node, parents):
                continue
            note = _note(source, node, product, mask, method, function)
            if note is not None:
                return [note]
    return []


def _note(
    source: str,
    node: ast.Call,
    product: ast.AST,
    mask: str,
    method: bool,
    function: str | None,
) -> Note | None:
    call = ast.get_source_segment(source, node)
    inner = ast.get_source_segment(source, product)
    function_text = ast.get_source_segment(source, node.func)
    if not call or not inner or not function_text or "\n" in call:
        return None
    if method:
        fixed = f"({inner}).sum() / {mask}.sum()"
    else:
        summed = function_text[: -len("mean")] + "sum"
        if function_text.endswith("reduce_mean"):
            summed = function_text[: -len("reduce_mean")] + "reduce_sum"
        fixed = f"{summed}({inner}) / {summed}({mask})"
    where = f"line {node.lineno} of this cell"
    if function is not None:
        where = f"{where}, in `{function}`"
    text = (
        f"`{call}` ({where}) divides by every position, the padded ones included, although "
        f"`{mask}` zeroes the padded positions' values: the result is the mean over the real "
        f"positions times their share of all positions, too low by that share (and it moves "
        "with how much padding a batch holds). Nothing raises. Divide by the number of "
        f"real positions instead: `{fixed}`."
    )
    return reports.note(text, SECTION)
