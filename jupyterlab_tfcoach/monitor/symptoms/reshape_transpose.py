"""A reshape written where a transpose was meant.

``tf.reshape(seq, (32, 8, 10))`` on a ``(32, 10, 8)`` batch of sequences gives the
``(batch, features, time)`` shape asked for, but reshape keeps the values in memory
order and only cuts them into new rows: ``out[0, 0]`` is the first ten values of the
first sequence, not one feature over time. Axes are swapped by ``tf.transpose``. Nothing
raises, and the model trains on scrambled inputs.

Found after a cell, from its source and the shapes its names hold (no hook, nothing
traced): each top-level ``out = tf.reshape(src, ...)`` / ``np.reshape(src, ...)`` /
``out = src.reshape(...)`` (a NumPy array) whose ``src`` and ``out`` are names holding
arrays or tensors of fully known shapes, ``src`` not rebound after the reshape in the
cell (its value is still the reshape's input). The reshape is told when ``out``'s
dimensions are those of ``src`` in another order, at least two of the sizes above 1
moved (moving sizes of 1 changes no order: ``(N, 1)`` to ``(1, N)`` is also a
transpose). The fix is the same statement with the call made a transpose, in the module
the learner called (``tf.transpose(src, [0, 2, 1])``; a positional permutation works
for TensorFlow, NumPy and ``keras.ops``) or the array's own ``src.transpose(0, 2, 1)``.
The statements are found once per cell source (cached); a cell costs a cached lookup
and a few shape reads.

Patches cut by ``tf.image.extract_patches`` are laid out (height, width, channels) in the
last axis: ``tf.reshape(p, (-1, C, size, size))`` followed by a transpose to channels-last
reads neighbouring pixels as channels. Found from the source alone (the function that does
it may run in a later cell): in one body (the cell's or a function's), a reshape of a name
assigned from ``extract_patches(..., sizes=[1, H, W, 1])`` whose last three sizes are
written (C, H, W), the patch's own H and W as written and C another expression (not the
literal 1). The fix is the same statement with the sizes in the order (H, W, C); a
transpose of its result that follows is said to be no longer needed.

A reshape written in the input's own axis names out of their order (``b, h, w, c =
x.shape`` then ``tf.reshape(x, (b, c, h * w))``) is read by ``named_axes_reshape.py``,
from the source alone; the statement it tells is not told again here.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import describe, show_shape
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms import named_axes_reshape
from jupyterlab_tfcoach.monitor.symptoms.named_axes_reshape import NamedAxesReshape
from jupyterlab_tfcoach.monitor.syntax import parsed_source, source_segment, walk_nodes

SECTION = "joining-indexing"
MAX_CELL_CHARS = 50_000
MAX_NOTES = 2
_CACHE_SIZE = 64
_ARRAY_KINDS = frozenset({"tensor", "variable", "keras_variable", "array"})


@dataclass(frozen=True)
class Reshape:
    """``out = mod.reshape(src, ...)`` or ``out = src.reshape(...)`` as written."""

    statement: str
    target: str
    source: str
    module: str | None  # ``tf``, ``np``, ``keras.ops``; None for the method form
    call: str  # the call's text, replaced by the fix
    line: int


def reshape_statements(source: str) -> list[Reshape]:
    """The cell's top-level reshapes of one name into another."""
    tree = parsed_source(source)
    if tree is None:
        return []
    last_bound: dict[str, int] = {}
    for node in walk_nodes(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            last_bound[node.id] = max(last_bound.get(node.id, 0), node.lineno)
    found: list[Reshape] = []
    for statement in tree.body:
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and isinstance(statement.value, ast.Call)
        ):
            continue
        call = statement.value
        func = call.func
        if not isinstance(func, ast.Attribute) or func.attr != "reshape":
            continue
        module: str | None
        if len(call.args) == 2 and isinstance(call.args[0], ast.Name):
            src = call.args[0].id
            module = source_segment(source, func.value)
        elif isinstance(func.value, ast.Name) and call.args:
            src, module = func.value.id, None
        else:
            continue
        text = source_segment(source, statement)
        call_text = source_segment(source, call)
        if not text or not call_text or "\n" in text or (module is not None and "\n" in module):
            continue
        if last_bound.get(src, 0) >= statement.lineno:
            continue  # rebound later: its value after the cell is not the reshape's input
        found.append(
            Reshape(text, statement.targets[0].id, src, module, call_text, statement.lineno)
        )
    return found


def transpose_order(
    before: tuple[int | None, ...], after: tuple[int | None, ...]
) -> list[int] | None:
    """The axes of ``before`` in ``after``'s order, when ``after`` is ``before``'s sizes
    reordered with at least two sizes above 1 moved; else None."""
    if len(before) != len(after) or len(before) < 2:
        return None
    if None in before or None in after or sorted(before) != sorted(after):  # type: ignore[type-var]
        return None
    kept = [size for size in before if size != 1]
    if kept == [size for size in after if size != 1]:
        return None
    used: set[int] = set()
    order: list[int] = []
    for size in after:
        axis = next(i for i, s in enumerate(before) if s == size and i not in used)
        used.add(axis)
        order.append(axis)
    return order


@dataclass(frozen=True)
class PatchReshape:
    """``tf.reshape(patches, (..., C, S, S))`` of ``tf.image.extract_patches``' result."""

    statement: str
    fixed: str
    patches: str
    sizes: tuple[str, str]
    channels: str
    line: int
    function: str | None
    transposed: str | None  # a transpose of the reshape's result that follows it


def _patch_sizes(call: ast.Call, source: str) -> tuple[str, str] | None:
    """The written height and width of ``extract_patches(images, sizes=[1, H, W, 1])``."""
    sizes = next((k.value for k in call.keywords if k.arg == "sizes"), None)
    if sizes is None and len(call.args) >= 2:
        sizes = call.args[1]
    if not isinstance(sizes, (ast.List, ast.Tuple)) or len(sizes.elts) != 4:
        return None
    ends = sizes.elts[0], sizes.elts[3]
    if not all(isinstance(e, ast.Constant) and e.value == 1 for e in ends):
        return None
    height = source_segment(source, sizes.elts[1])
    width = source_segment(source, sizes.elts[2])
    return (height, width) if height and width else None


def patch_reshapes(source: str) -> list[PatchReshape]:
    """Reshapes, in one body (the cell's or a function's), of a name assigned from
    ``extract_patches`` whose last three sizes are (channels, height, width) of the patch:
    the patch's values are laid out height, width, channels (channels fastest)."""
    tree = parsed_source(source)
    if tree is None:
        return []
    bodies: list[tuple[str | None, list[ast.stmt]]] = [(None, tree.body)]
    bodies += [
        (node.name, node.body)
        for node in walk_nodes(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    found: list[PatchReshape] = []
    for function, body in bodies:
        patches: dict[str, tuple[str, str]] = {}
        for index, statement in enumerate(body):
            if not (
                isinstance(statement, ast.Assign)
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
                and isinstance(statement.value, ast.Call)
            ):
                continue
            target, call = statement.targets[0].id, statement.value
            func = call.func
            name = func.attr if isinstance(func, ast.Attribute) else None
            if name == "extract_patches":
                sizes = _patch_sizes(call, source)
                if sizes is not None:
                    patches[target] = sizes
                else:
                    patches.pop(target, None)
                continue
            reshape = _patch_reshape(statement, source, patches, function, body[index + 1 :])
            if reshape is not None:
                found.append(reshape)
            patches.pop(target, None)
    return found


def _patch_reshape(
    statement: ast.Assign,
    source: str,
    patches: dict[str, tuple[str, str]],
    function: str | None,
    after: list[ast.stmt],
) -> PatchReshape | None:
    call = statement.value
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return None
    if call.func.attr != "reshape" or len(call.args) != 2:
        return None
    patch, shape = call.args
    if not isinstance(patch, ast.Name) or patch.id not in patches:
        return None
    if not isinstance(shape, (ast.List, ast.Tuple)) or len(shape.elts) < 4:
        return None
    written = [source_segment(source, e) for e in shape.elts[-3:]]
    height, width = patches[patch.id]
    channels = written[0]
    if written[1:] != [height, width] or not channels or channels in (height, width):
        return None
    if isinstance(shape.elts[-3], ast.Constant) and shape.elts[-3].value == 1:
        return None  # one channel: both orders are the same
    text = source_segment(source, statement)
    shape_text = source_segment(source, shape)
    if not text or not shape_text or "\n" in text:
        return None
    head = [source_segment(source, e) for e in shape.elts[:-3]]
    if not all(head):
        return None
    opened, closed = ("[", "]") if isinstance(shape, ast.List) else ("(", ")")
    reordered = f"{opened}{', '.join([*head, height, width, channels])}{closed}"  # type: ignore[list-item]
    fixed = text.replace(shape_text, reordered, 1)
    target = statement.targets[0]
    name = target.id if isinstance(target, ast.Name) else ""
    transposed = None
    for later in after[:3]:
        later_call = getattr(later, "value", None)
        if (
            isinstance(later_call, ast.Call)
            and isinstance(later_call.func, ast.Attribute)
            and later_call.func.attr == "transpose"
            and later_call.args
            and isinstance(later_call.args[0], ast.Name)
            and later_call.args[0].id == name
        ):
            transposed = source_segment(source, later_call)
            break
    return PatchReshape(
        text, fixed, patch.id, (height, width), channels, statement.lineno, function, transposed
    )


def _patch_text(reshape: PatchReshape) -> str:
    height, width = reshape.sizes
    where = f"line {reshape.line} of this cell" + (
        f", in `{reshape.function}`" if reshape.function else ""
    )
    then = (
        f" The `{reshape.transposed}` after it only moves the scrambled values: with the "
        "reshape in that order it is not needed."
        if reshape.transposed
        else ""
    )
    return (
        f"`{reshape.statement}` ({where}) cuts the last axis of `{reshape.patches}` (from "
        f"`extract_patches`) into ({reshape.channels}, {height}, {width}), but "
        "`extract_patches` lays each patch out row by row, each pixel's channels together "
        f"(height, width, channels: channels fastest). Read in the order ({reshape.channels}, "
        f"{height}, {width}), the values of neighbouring pixels become channels, and the "
        "patches are not pieces of the image, without any error (unless the images have "
        f"one channel).{then} Reshape in the layout the values have: `{reshape.fixed}`."
    )


class ReshapeChecker:
    """After each completed cell: its reshapes whose result is a reordering of the input."""

    def __init__(self) -> None:
        self._statements: dict[str, list[Reshape]] = {}
        self._patches: dict[str, list[PatchReshape]] = {}
        self._named: dict[str, list[NamedAxesReshape]] = {}

    def _named_axes(self, source: str) -> list[NamedAxesReshape]:
        found = self._named.get(source)
        if found is None:
            found = named_axes_reshape.named_axes_reshapes(source)
            if len(self._named) >= _CACHE_SIZE:
                self._named.pop(next(iter(self._named)))
            self._named[source] = found
        return found

    def _cell_statements(self, source: str) -> list[Reshape]:
        found = self._statements.get(source)
        if found is None:
            found = reshape_statements(source)
            if len(self._statements) >= _CACHE_SIZE:
                self._statements.pop(next(iter(self._statements)))
            self._statements[source] = found
        return found

    def notes(self, source: str, namespace: dict[str, object]) -> list[Note]:
        if not source or len(source) > MAX_CELL_CHARS or "reshape" not in source:
            return []
        notes: list[Note] = []
        if "extract_patches" in source:
            patched = self._patches.get(source)
            if patched is None:
                patched = patch_reshapes(source)
                if len(self._patches) >= _CACHE_SIZE:
                    self._patches.pop(next(iter(self._patches)))
                self._patches[source] = patched
            notes += [reports.note(_patch_text(r), SECTION) for r in patched[:MAX_NOTES]]
        told_lines: set[int] = set()
        if "shape" in source.replace("reshape", ""):
            for named in self._named_axes(source)[: MAX_NOTES - len(notes)]:
                notes.append(reports.note(named_axes_reshape.text(named), SECTION))
                if named.function is None:
                    told_lines.add(named.line)
        for reshape in self._cell_statements(source):
            if len(notes) >= MAX_NOTES:
                break
            if reshape.line in told_lines:
                continue  # told above, from the axis names the cell wrote
            if reshape.source not in namespace or reshape.target not in namespace:
                continue
            before = describe(reshape.source, namespace[reshape.source])
            after = describe(reshape.target, namespace[reshape.target])
            if before is None or after is None or before.shape is None or after.shape is None:
                continue
            if before.kind not in _ARRAY_KINDS or after.kind not in _ARRAY_KINDS:
                continue
            if reshape.module is None and before.kind != "array":
                continue  # a tensor has no .transpose method to offer
            order = transpose_order(before.shape, after.shape)
            if order is None:
                continue
            notes.append(
                reports.note(_text(reshape, before.description, after.shape, order), SECTION)
            )
            if len(notes) >= MAX_NOTES:
                break
        return notes


def _text(reshape: Reshape, described: str, shape: tuple[int | None, ...], order: list[int]) -> str:
    if reshape.module is None:
        transposed = f"{reshape.source}.transpose({', '.join(map(str, order))})"
    else:
        transposed = f"{reshape.module}.transpose({reshape.source}, {order})"
    fixed = reshape.statement.replace(reshape.call, transposed, 1)
    return (
        f"`{reshape.statement}` (line {reshape.line} of this cell) reshapes "
        f"`{reshape.source}`, {described}, to {show_shape(shape)}: the same sizes in "
        "another order. A reshape does not swap axes: it keeps the values in memory order "
        f"and cuts them into rows of the new sizes, so `{reshape.target}` mixes values "
        "that belonged to different positions, without any error. If the axes were "
        f"meant to change places, transpose: `{fixed}`."
    )
