"""A mean of values multiplied by a padding mask: divided by every position, padding too.

``mask = tf.cast(tokens != 0, tf.float32)`` is 1 on the real positions and 0 on the
padding. ``tf.reduce_mean(hits * mask)`` zeroes the padded positions' values but still
divides by the count of all positions, so it gives the masked mean times the share of
real positions: an accuracy or a loss that is too low by that share, and that changes
with how much padding a batch holds. Nothing raises. The masked mean is
``tf.reduce_sum(hits * mask) / tf.reduce_sum(mask)``.

After a completed cell whose text holds a mean (``reduce_mean``, ``mean(``) and a
padding test (``!=``, ``> 0``, ``not_equal``, ``greater``, ``sequence_mask``) or the word
``mask`` (a few substring tests otherwise), each function of the cell and its top level
is read (``ast``, never run): the names bound to a padding test of 0
(``x != 0``, ``x > 0``, ``tf.not_equal(x, 0)``, ``tf.math.greater(x, 0)``,
``tf.sequence_mask(...)``, under a cast or ``astype``), and a function's parameters
named ``*mask*``; the 0 may be a name the namespace binds to the int 0 (``PAD = 0``,
``tf.not_equal(y, PAD)``). Told: a mean with no axis (``tf.reduce_mean``,
``keras.ops.mean``, ``np.mean``, ``.mean()``) of a product with such a name, written in
the mean or bound once to a name the mean reads (``hits = (y == p) * mask`` then
``tf.reduce_mean(hits)``). Silent when that mean is divided
by something (``reduce_mean(x * m) / reduce_mean(m)`` is right), and for a product with
anything else. The fix is the same line with the sum of the product divided by the sum
of the mask, in the same library.

A mean along an axis (``ops.mean(x * m, axis=1)``) is told when that axis is the one the
mask marks positions on, which is known for the ``mask`` argument of a layer's ``call``
(Keras gives it as ``(batch, steps)``) and followed through names bound to its ``cast``
and ``expand_dims`` (``m = ops.expand_dims(ops.cast(mask, x.dtype), -1)`` is ``(batch,
steps, 1)``: axis 1 or -2). Each row is then divided by the padded length: short rows
are pulled towards 0. A mean along the features axis, or with a mask of unknown layout,
stays silent; the fix divides by the mask's sum along the same axis.
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
    int_literal,
    parsed_source,
    walk_nodes,
)

SECTION = "reducing-tensors"
MAX_CELL_CHARS = 50_000
_MEANS = frozenset({"reduce_mean", "mean"})
_PADDING_TESTS = ("!=", "> 0", "not_equal", "greater", "sequence_mask", "mask")
# ``tf.cast(m, ...)``, ``m.astype(...)``, ``tf.expand_dims(m, -1)`` are read as ``m``.
MASK_WRAPPERS = frozenset({"cast", "astype", "expand_dims", "to_float"})
# The calls ``_is_padding_mask`` reads as padding tests.
_PADDING_CALLS = frozenset({"sequence_mask", "not_equal", "greater"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _is_zero(node: ast.AST, zeros: frozenset[str] = frozenset()) -> bool:
    """The literal 0, or a name the namespace binds to the int 0 (``PAD = 0``)."""
    if isinstance(node, ast.Name):
        return node.id in zeros
    return isinstance(node, ast.Constant) and node.value == 0 and node.value is not False


def _is_padding_mask(node: ast.AST, zeros: frozenset[str] = frozenset()) -> bool:
    """A test that keeps the non-zero positions: ``x != 0``, ``x > 0``, ``not_equal(x, 0)``,
    ``greater(x, 0)``, ``sequence_mask(lengths, ...)``; 0 may be a name holding it."""
    node = unwrap_calls(node, MASK_WRAPPERS)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        return isinstance(node.ops[0], (ast.NotEq, ast.Gt)) and _is_zero(node.comparators[0], zeros)
    if isinstance(node, ast.Call):
        name = call_name(node)
        if name == "sequence_mask":
            return True
        if name in ("not_equal", "greater") and len(node.args) == 2:
            return _is_zero(node.args[1], zeros)
    return False


def _zero_names(tree: ast.Module, namespace: Mapping[str, Any]) -> frozenset[str]:
    """The names the cell reads that the namespace binds to the int 0 (a padding id
    kept in a constant: ``PAD = 0``)."""
    return frozenset(
        node.id
        for node in walk_nodes(tree)
        if isinstance(node, ast.Name)
        and type(namespace.get(node.id)) is int
        and namespace.get(node.id) == 0
    )


def _may_hold_mask(source: str, tree: ast.Module) -> bool:
    """Whether any scope can have a mask: a name or parameter with ``mask`` in it, or a
    padding test written somewhere in one of ``_is_padding_mask``'s forms (any name as the
    compared value: it may hold 0). Without one, every scope's masks are empty, so the cell
    is not read further (``x > 0.5`` alone passes the word test)."""
    if "mask" in source.lower():
        return True
    for node in walk_nodes(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            if isinstance(node.ops[0], (ast.NotEq, ast.Gt)):
                compared = node.comparators[0]
                if isinstance(compared, ast.Name) or _is_zero(compared):
                    return True
        elif isinstance(node, ast.Call) and call_name(node) in _PADDING_CALLS:
            return True
    return False


def _bound_products(nodes: list[ast.AST], masks: Mapping[str, Layout]) -> dict[str, ast.AST]:
    """Names the scope binds once, to a masked product (``hits = (y == p) * mask``): a
    mean of the name is a mean of that product."""
    bound: dict[str, list[ast.AST]] = {}
    for node in nodes:
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        bound.setdefault(name.id, []).append(node)
    return {
        name: statements[0].value
        for name, statements in bound.items()
        if len(statements) == 1
        and isinstance(statements[0], ast.Assign)
        and _masked_product(statements[0].value, masks) is not None
    }


def _scopes(tree: ast.Module) -> list[tuple[str | None, list[ast.AST], dict[str, Layout]]]:
    """The cell's top level and each function: (its name, its nodes outside nested
    scopes, its parameters named ``*mask*``)."""
    found: list[tuple[str | None, list[ast.AST], dict[str, Layout]]] = []

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

    found.append((None, own_nodes(tree.body), {}))
    # A method is named with its class: ``MaskedPool.call``.
    owners = {
        id(item): node.name
        for node in walk_nodes(tree)
        if isinstance(node, ast.ClassDef)
        for item in node.body
    }
    for node in walk_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # A layer's ``call(inputs, mask=None)`` gets Keras' (batch, steps) mask.
            masks: dict[str, Layout] = {
                arg.arg: (2, 1) if node.name == "call" and arg.arg == "mask" else None
                for arg in node.args.args
                if "mask" in arg.arg.lower()
            }
            label = f"{owners[id(node)]}.{node.name}" if id(node) in owners else node.name
            found.append((label, own_nodes(node.body), masks))
    return found


# Where a mask varies: (its rank, the axis of the positions). Known for the ``mask``
# argument of a Keras layer's ``call`` ((batch, steps): Keras' mask convention) and what
# ``cast``/``expand_dims`` make of it; None when not known.
Layout = tuple[int, int] | None


def _layout_of(node: ast.AST, masks: Mapping[str, Layout]) -> tuple[str, Layout] | None:
    """(the mask name, the layout of ``node``) when ``node`` is a mask name under the
    wrappers that keep it a mask (``ops.expand_dims(ops.cast(mask, x.dtype), -1)``)."""
    inserted: list[ast.AST | None] = []
    while isinstance(node, ast.Call) and call_name(node) in MASK_WRAPPERS:
        if isinstance(node.func, ast.Attribute) and call_name(node) == "astype":
            node = node.func.value
            continue
        if not node.args:
            return None
        if call_name(node) == "expand_dims":
            axis: ast.AST | None = node.args[1] if len(node.args) > 1 else None
            for keyword in node.keywords:
                if keyword.arg == "axis":
                    axis = keyword.value
            inserted.append(axis)
        node = node.args[0]
    if not isinstance(node, ast.Name) or node.id not in masks:
        return None
    layout = masks[node.id]
    for axis in reversed(inserted):
        if layout is None:
            break
        position = int_literal(axis) if axis is not None else None
        rank, varying = layout
        if position is None or not -rank - 1 <= position <= rank:
            layout = None
            break
        position = position if position >= 0 else position + rank + 1
        layout = (rank + 1, varying + 1 if varying >= position else varying)
    return node.id, layout


def _mask_names(
    nodes: list[ast.AST],
    parameters: dict[str, Layout],
    origins: dict[str, str] | None = None,
    zeros: frozenset[str] = frozenset(),
) -> dict[str, Layout]:
    """The scope's mask names with their layouts; ``origins`` gets, for a name bound to
    a cast or ``expand_dims`` of a mask, the mask it came from."""
    names: dict[str, Layout] = dict(parameters)
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and _is_padding_mask(node.value, zeros):
                names[target.id] = None
    # A name bound to a mask under a cast or ``expand_dims`` is that mask (in source
    # order, so ``m = cast(mask)`` then ``m = expand_dims(m, -1)`` follows both).
    for node in sorted(nodes, key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and isinstance(node.value, ast.Call):
                derived = _layout_of(node.value, names)
                if derived is not None:
                    names[target.id] = derived[1]
                    if origins is not None and derived[0] != target.id:
                        origins[target.id] = origins.get(derived[0], derived[0])
    # A name rebound to something else is not a mask any more: leave it out.
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if (
                isinstance(target, ast.Name)
                and target.id in names
                and target.id not in parameters
                and not _is_padding_mask(node.value, zeros)
                and _layout_of(node.value, names) is None
            ):
                names.pop(target.id, None)
    return names


def _masked_product(node: ast.AST, masks: Mapping[str, Layout]) -> tuple[str, Layout] | None:
    """(the mask's name, its layout) when ``node`` is ``values * mask`` (either side)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
        return None
    for side in (node.left, node.right):
        found = _layout_of(side, masks)
        if found is not None:
            return found
    return None


def _mean_axis(node: ast.Call, method: bool) -> tuple[ast.AST | None, bool] | None:
    """(the axis node, whether ``keepdims`` is given) of a mean call; None for another
    argument."""
    axis: ast.AST | None = None
    keep = False
    positional = node.args if method else node.args[1:]
    if len(positional) > 1:
        return None
    if positional:
        axis = positional[0]
    for keyword in node.keywords:
        if keyword.arg == "axis":
            axis = keyword.value
        elif keyword.arg == "keepdims":
            keep = True
        else:
            return None
    return axis, keep


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
    if tree is None or not _may_hold_mask(source, tree):
        return []
    # Each node's parent, made only once a masked mean is found (most cells have none).
    parents: dict[int, ast.AST] | None = None
    zeros = _zero_names(tree, namespace)
    for function, nodes, parameters in _scopes(tree):
        origins: dict[str, str] = {}
        masks = _mask_names(nodes, parameters, origins, zeros)
        if not masks:
            continue
        products: dict[str, ast.AST] | None = None
        for node in nodes:
            if not isinstance(node, ast.Call) or call_name(node) not in _MEANS:
                continue
            method = isinstance(node.func, ast.Attribute) and (
                not node.args or int_literal(node.args[0]) is not None
            )
            if method:
                assert isinstance(node.func, ast.Attribute)
                product: ast.AST = node.func.value
            elif node.args:
                product = node.args[0]
            else:
                continue
            found = _masked_product(product, masks)
            if found is None and isinstance(product, ast.Name):
                # ``hits = (y == p) * mask`` on a line of its own, then ``reduce_mean(hits)``.
                if products is None:
                    products = _bound_products(nodes, masks)
                if product.id in products:
                    found = _masked_product(products[product.id], masks)
            reading = _mean_axis(node, method)
            if found is None or reading is None:
                continue
            mask, layout = found
            axis, _ = reading
            if axis is not None and not _over_positions(axis, layout):
                continue  # a mean along an axis the mask does not vary on, or unknown
            if parents is None:
                parents = {
                    id(child): parent
                    for parent in walk_nodes(tree)
                    for child in ast.iter_child_nodes(parent)
                }
            if _divided(node, parents):
                continue
            note = _note(
                source, node, product, mask, method, function, axis, reading[1], origins.get(mask)
            )
            if note is not None:
                return [note]
    return []


def _over_positions(axis: ast.AST, layout: Layout) -> bool:
    """Whether a mean over ``axis`` runs along the positions the mask tells apart."""
    position = int_literal(axis)
    if layout is None or position is None:
        return False
    rank, varying = layout
    if not -rank <= position < rank:
        return False
    return (position if position >= 0 else position + rank) == varying


def _note(
    source: str,
    node: ast.Call,
    product: ast.AST,
    mask: str,
    method: bool,
    function: str | None,
    axis: ast.AST | None = None,
    keepdims: bool = False,
    origin: str | None = None,
) -> Note | None:
    call = ast.get_source_segment(source, node)
    inner = ast.get_source_segment(source, product)
    function_text = ast.get_source_segment(source, node.func)
    axis_text = ast.get_source_segment(source, axis) if axis is not None else None
    if not call or not inner or not function_text or "\n" in call:
        return None
    if axis is not None and not axis_text:
        return None
    # The mask as the product holds it (``m`` of ``x * m``), so the sum has its shape.
    held = mask
    if isinstance(product, ast.BinOp):
        for side in (product.left, product.right):
            found = _layout_of(side, {mask: None})
            text = ast.get_source_segment(source, side)
            if found is not None and text:
                held = text
    arguments = (
        "" if axis is None else f"axis={axis_text}" + (", keepdims=True" if keepdims else "")
    )
    if method:
        fixed = f"({inner}).sum({arguments}) / {held}.sum({arguments})"
    else:
        summed = function_text[: -len("mean")] + "sum"
        if function_text.endswith("reduce_mean"):
            summed = function_text[: -len("reduce_mean")] + "reduce_sum"
        extra = f", {arguments}" if arguments else ""
        fixed = f"{summed}({inner}{extra}) / {summed}({held}{extra})"
    made = f"(made from `{origin}`) " if origin else ""
    where = f"line {node.lineno} of this cell"
    if function is not None:
        where = f"{where}, in `{function}`"
    if axis is None:
        text = (
            f"`{call}` ({where}) divides by every position, those `{mask}` leaves out "
            f"included, although `{mask}` zeroes their values: the result is the mean over "
            f"the positions `{mask}` keeps times their share of all positions, too low by "
            f"that share (and it moves with how many positions `{mask}` leaves out: padding, "
            "unlabelled rows). Nothing raises. Divide by the number of positions "
            f"`{mask}` keeps instead: `{fixed}`."
        )
    else:
        text = (
            f"`{call}` ({where}) averages over axis {axis_text}, the positions `{mask}` "
            f"{made}marks, and divides by all of them, the padded ones included, although the "
            "product is 0 there: each row's mean is its mean over its real positions times "
            "their share of the padded length, so a short row is pulled towards 0. Nothing "
            "raises. Divide by each row's count of real positions instead: "
            f"`{fixed}` (a row with no real position then divides by 0: guard the "
            "count with a maximum of 1)."
        )
    return reports.note(text, SECTION)
