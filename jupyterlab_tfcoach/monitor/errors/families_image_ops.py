"""Image ops refused by a size the learner did not write or did not adapt (issue #25), read
from the op's own signature and the operands' shapes, not from the message alone:

- a window larger than the images: ``tf.image.ssim(a, b, max_val=1.0)`` on 8x8 images
  raises an assertion that prints only the shape and 11. The window is the callee's
  ``filter_size`` (its default, 11, when the call leaves it out), and the images' height
  and width are smaller. The entry names the argument, its value (the default, said so)
  and the images' size, and writes the call with ``filter_size=`` the largest odd size that
  fits. Only a TensorFlow image function with a window parameter and images of rank 3 or 4
  is read; the multi-scale SSIM (which shrinks the images once per scale) is left out, its
  limit is not the image's size.
- ``depth_to_space`` given a channel count its block size does not divide: the op moves
  ``block_size**2`` channels into each block of pixels, so the layer before it must make
  ``block_size**2 * C`` channels. The entry names the block size, the channels, and the
  layer that made them: the name the running cell passes, assigned from a Keras
  convolution or dense layer written in the cells, or, for an op in a function that
  builds a model, the last assignment of its input before it in that function. Its fix,
  when the layer's channel count is written as
  - a product of whole numbers ``C * k`` with ``k`` a square (the count of another block
    size): that statement making ``C * block_size**2``;
  - a product with the block size once among its factors (``Conv2D(3 * R)`` before
    ``depth_to_space(x, R)``: the name the failing call passes as the block, or the same
    literal): the count multiplied by the block size again (``3 * R * R``).

Values are read from the frames' locals and the namespace (shapes and ints only); nothing
is run.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

from jupyterlab_tfcoach.monitor.errors.cell_sources import (
    assignments_in_cells,
    cell_frame,
    error_cells,
)
from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    code,
    rewrite,
    value_kind,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, Operand
from jupyterlab_tfcoach.monitor.errors.families_arguments import library_callable
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Recognised,
    operand_of,
)

# A parameter of an image op that sizes a sliding window over height and width.
_WINDOW_PARAMETERS = ("filter_size", "window_size")
# Keras layers whose first argument (or ``filters``/``units``) is the channels they make.
_CHANNEL_LAYERS = frozenset(
    {"Conv2D", "Conv2DTranspose", "SeparableConv2D", "Conv1D", "Conv3D", "Dense"}
)
_MAX_FACTORS = 4


def _bound_arguments(
    call: ast.Call, parameters: list[inspect.Parameter]
) -> dict[str, ast.expr] | None:
    """The call's arguments by parameter name, bound as Python binds them; None when the
    call spreads ``*args`` or ``**kwargs``."""
    if any(isinstance(argument, ast.Starred) for argument in call.args):
        return None
    if any(keyword.arg is None for keyword in call.keywords):
        return None
    positional = [
        p
        for p in parameters
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    if len(call.args) > len(positional):
        return None
    bound = {p.name: argument for p, argument in zip(positional, call.args, strict=False)}
    for keyword in call.keywords:
        if keyword.arg is not None:
            bound[keyword.arg] = keyword.value
    return bound


def _library_call(
    line: FailingLine, context: ErrorContext
) -> tuple[ast.Call, Any, list[inspect.Parameter], dict[str, ast.expr]] | None:
    call = line.call
    if not isinstance(call, ast.Call):
        return None
    found = library_callable(call.func, line.frame, context)
    if found is None:
        return None
    callee, is_method = found
    try:
        parameters = list(inspect.signature(callee).parameters.values())
    except (TypeError, ValueError):
        return None
    if is_method and parameters:
        parameters = parameters[1:]
    bound = _bound_arguments(call, parameters)
    if bound is None:
        return None
    return call, callee, parameters, bound


def _whole(value: object) -> int | None:
    return value if type(value) is int else None


def _image_sizes(operand: Operand | None) -> tuple[int, int] | None:
    """(height, width) of a rank-3 or rank-4 image tensor or array."""
    if operand is None or operand.kind not in ("tensor", "array", "variable"):
        return None
    shape = operand.shape
    if shape is None or len(shape) not in (3, 4):
        return None
    height, width = shape[-3], shape[-2]
    if type(height) is not int or type(width) is not int:
        return None
    return height, width


def _read_window(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    found = _library_call(line, context)
    if found is None:
        return None
    call, callee, parameters, bound = found
    if "image" not in str(getattr(callee, "__module__", "")):
        return None
    names = [p.name for p in parameters]
    if "power_factors" in names:
        return None  # multi-scale: the images shrink per scale, the limit is not their size
    window = next((p for p in parameters if p.name in _WINDOW_PARAMETERS), None)
    if window is None:
        return None
    given = bound.get(window.name)
    if given is not None:
        operand = operand_of(given, line, context)
        size = _whole(operand.value) if operand is not None else None
        if size is None and isinstance(given, ast.Constant):
            size = _whole(given.value)
    else:
        size = _whole(window.default)
    if size is None:
        return None
    images = []
    for parameter in names[: names.index(window.name)]:
        node = bound.get(parameter)
        operand = operand_of(node, line, context) if node is not None else None
        sizes = _image_sizes(operand)
        if operand is not None and sizes is not None:
            images.append((operand, sizes))
    if not images:
        return None
    smallest = min(min(sizes) for _, sizes in images)
    if size <= smallest:
        return None
    function = line.frame.segment(call.func) or ""
    shown = " and ".join(
        f"{code(operand.source)} ({sizes[0]}x{sizes[1]}, {operand.description})"
        for operand, sizes in images
    )
    how = (
        f"{code(f'{window.name}={size}')}, the default, since the call does not give it"
        if given is None
        else f"{code(f'{window.name}={line.frame.segment(given)}')}, {size}"
    )
    fits = smallest if smallest % 2 else smallest - 1
    rule = (
        f"{code(function)} slides a {size}x{size} window over each image ({how}), and the "
        f"images are smaller: {shown}. The window must fit inside the height and width. "
        f"Pass {code(f'{window.name}=')} no larger than {smallest}, or compute it on "
        f"larger images (a smaller window compares finer detail: its scores are not "
        f"comparable with {size}x{size} ones)"
    )
    if fits < 3:
        return Finding(rule + ".", None)
    written = line.frame.segment(call) or ""
    if given is not None:
        replaced = rewrite(line.frame, line.statement or call, given, str(fits))
    else:
        opened = written[:-1].rstrip()
        separator = "" if opened.endswith("(") else ", "
        replaced = rewrite(
            line.frame, line.statement or call, call, f"{opened}{separator}{window.name}={fits})"
        )
    if not written.endswith(")") or replaced is None or "\n" in replaced:
        return Finding(rule + ".", None)
    return Finding(rule + ".", code(replaced))


def _factors(node: ast.expr) -> list[int] | None:
    """``3 * 4`` -> [3, 4]: a product of whole-number literals, else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return [node.value]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        left, right = _factors(node.left), _factors(node.right)
        if left is None or right is None or len(left) + len(right) > _MAX_FACTORS:
            return None
        return left + right
    return None


def _square_root(number: int) -> int | None:
    root = int(number**0.5 + 0.5)
    return root if root >= 2 and root * root == number else None


def _block_once(
    argument: ast.expr,
    block: int,
    block_node: ast.expr,
    line: FailingLine,
    channels: int,
    context: ErrorContext,
    frame: CellFrame | None,
) -> str | None:
    """``Conv2D(3 * R)`` before ``depth_to_space(x, R)``: the layer's channel count is
    written as a product with the block size once among its factors (the very name the
    failing call passes as the block, or the same number written as a literal on both), so
    it makes ``C * block`` channels where the op needs ``C * block**2``. The factor's text,
    to multiply by once more; None for any other count (the learner's intent is unread)."""
    if not (isinstance(argument, ast.BinOp) and isinstance(argument.op, ast.Mult)):
        return None
    factors: list[ast.expr] = []
    pending: list[ast.expr] = [argument]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            pending += [node.left, node.right]
        else:
            factors.append(node)
    if len(factors) > _MAX_FACTORS:
        return None
    values: list[int] = []
    for factor in factors:
        if isinstance(factor, ast.Constant) and type(factor.value) is int:
            values.append(factor.value)
        elif isinstance(factor, ast.Name):
            known, value = context.lookup(factor.id, frame)
            if not known or type(value) is not int:
                return None
            values.append(value)
        else:
            return None
    product = 1
    for value in values:
        product *= value
    if product != channels or channels % block or (channels // block) % block == 0:
        return None
    written_block = line.frame.segment(block_node)
    for factor, value in zip(factors, values, strict=True):
        if value != block:
            continue
        if isinstance(factor, ast.Name) and factor.id == written_block:
            return factor.id
        if isinstance(factor, ast.Constant) and isinstance(block_node, ast.Constant):
            return str(block)
    return None


def _layer_channels(assignment: ast.Assign) -> ast.expr | None:
    """The channels argument of ``name = SomeConv(channels, ...)(inputs)``, a Keras layer
    that makes channels constructed and called in the assignment."""
    value = assignment.value
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Call)):
        return None
    layer = value.func
    called = layer.func
    kind = called.attr if isinstance(called, ast.Attribute) else getattr(called, "id", "")
    if kind not in _CHANNEL_LAYERS:
        return None
    argument = layer.args[0] if layer.args else None
    for keyword in layer.keywords:
        if keyword.arg in ("filters", "units"):
            argument = keyword.value
    return argument


def _whole_value(node: ast.expr, frame: CellFrame | None, context: ErrorContext) -> int | None:
    """A whole number written as literals and names multiplied (``3 * R``), read from the
    frame's locals, else the namespace."""
    if isinstance(node, ast.Constant):
        return _whole(node.value)
    if isinstance(node, ast.Name):
        known, value = context.lookup(node.id, frame)
        return _whole(value) if known else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        left = _whole_value(node.left, frame, context)
        right = _whole_value(node.right, frame, context)
        return left * right if left is not None and right is not None else None
    return None


def _local_producer(
    channels: int, input_node: ast.expr, line: FailingLine, context: ErrorContext
) -> tuple[str, str, ast.expr, ast.Assign, Any, CellFrame] | None:
    """The layer that made the op's input inside the function the failing line runs in
    (a model built by a function: ``h = layers.Conv2D(2 * K, 3)(h)`` then the op on
    ``h``): the last assignment of that name before the line, taken only when its channel
    count, read in the frame, is the input's."""
    if not isinstance(input_node, ast.Name):
        return None
    functions = [
        f
        for f in line.frame.enclosing_functions()
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    if not functions:
        return None
    before = line.frame.position.line
    found: ast.Assign | None = None
    for node in ast.walk(functions[-1]):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == input_node.id
            and node.lineno < before
            and (found is None or node.lineno > found.lineno)
        ):
            found = node
    if found is None:
        return None
    argument = _layer_channels(found)
    if argument is None or _whole_value(argument, line.frame, context) != channels:
        return None
    source = line.frame.source()
    cell = next((c for c in error_cells(context) if c.source == source), None)
    written = cell.segment(found) if cell is not None else None
    if cell is None or not written or "\n" in written:
        return None
    where = f"line {found.lineno} of {cell.label}"
    return input_node.id, where, argument, found, cell, line.frame


def _producer(
    channels: int, line: FailingLine, context: ErrorContext
) -> tuple[str, str, ast.expr, ast.Assign, Any, CellFrame | None] | None:
    """(the name, where, the channels argument, the statement, its cell)
    for the one name the running cell passes holding ``channels`` on its last axis, made by
    a Keras layer constructed in its assignment."""
    frames = context.frames()
    if not frames:
        return None
    outer = frames[-1]
    statement = outer.statement()
    if statement is None:
        return None
    candidates = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            value = context.lookup(node.id, outer)[1]
            if value_kind(value) not in ("tensor", "symbolic", "keras_tensor", "array"):
                continue
            try:
                shape = tuple(value.shape)
            except Exception:
                continue
            if len(shape) == 4 and shape[-1] == channels:
                candidates.add(node.id)
    if len(candidates) != 1:
        return None
    name = candidates.pop()
    running = outer.source()
    for cell, assignment in assignments_in_cells(name, context):
        if cell.source == running and assignment.lineno >= outer.position.line:
            continue
        argument = _layer_channels(assignment)
        written = cell.segment(assignment)
        if argument is None or not written or "\n" in written:
            return None
        return name, f"line {assignment.lineno} of {cell.label}", argument, assignment, cell, None
    return None


def _read_block(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    found = _library_call(line, context)
    if found is None:
        return None
    call, callee, parameters, bound = found
    if not str(getattr(callee, "__name__", "")).startswith("depth_to_space"):
        return None
    data_format = bound.get("data_format")
    if data_format is not None and not (
        isinstance(data_format, ast.Constant) and data_format.value == "NHWC"
    ):
        return None
    block_node = bound.get("block_size")
    input_node = next(
        (bound[p.name] for p in parameters if p.name in ("input", "x") and p.name in bound),
        None,
    )
    if block_node is None or input_node is None:
        return None
    block_operand = operand_of(block_node, line, context)
    block = _whole(block_operand.value) if block_operand is not None else None
    if block is None and isinstance(block_node, ast.Constant):
        block = _whole(block_node.value)
    images = operand_of(input_node, line, context)
    if block is None or block < 2 or images is None or images.shape is None:
        return None
    if len(images.shape) != 4 or type(images.shape[-1]) is not int:
        return None
    channels = images.shape[-1]
    square = block * block
    if channels % square == 0:
        return None
    function = line.frame.segment(call.func) or "depth_to_space"
    rule = (
        f"{code(function)} with a block size of {block} moves each group of {block} * "
        f"{block} = {square} channels into a {block}x{block} block of pixels, so its input "
        f"needs {square} * C channels for C channels out; {code(images.source)} has "
        f"{channels}, which {square} does not divide"
    )
    made = _local_producer(channels, input_node, line, context) or _producer(
        channels, line, context
    )
    if made is None:
        return Finding(
            rule + f": give it a multiple of {square} channels ({square} * 3 = "
            f"{square * 3} for an RGB image out), made so by the layer before it.",
            None,
        )
    name, where, argument, assignment, cell, frame = made
    layer_source = cell.segment(assignment.value.func) or ""  # type: ignore[attr-defined]
    rule += f". They come from {code(name)}, made by {code(layer_source)} ({where})"
    once = _block_once(argument, block, block_node, line, channels, context, frame)
    if once is not None:
        written = cell.segment(argument) or ""
        fixed = rewrite(cell_frame(cell), assignment, argument, f"{written} * {once}")
        out = channels // block
        rule += (
            f": {code(written)} = {channels} is {out} channels times the block size once, "
            f"and a {block}x{block} block takes it twice: {code(f'{written} * {once}')} = "
            f"{channels * block} channels give {out} channels out"
        )
        if fixed is None or "\n" in fixed:
            return Finding(rule + ".", None)
        label = "" if cell.label == "this cell" else f"in {cell.label}, "
        return Finding(rule + ".", f"{label}{code(fixed)}")
    factors = _factors(argument)
    if factors is None or len(factors) < 2:
        return Finding(rule + f": it must produce {square} * C channels.", None)
    out, rest = factors[0], 1
    for factor in factors[1:]:
        rest *= factor
    old = _square_root(rest)
    if out * rest != channels or old is None or old == block:
        return Finding(rule + f": it must produce {square} * C channels.", None)
    replacement = f"{out} * {square}"
    fixed = rewrite(cell_frame(cell), assignment, argument, replacement)
    rule += (
        f", {out} * {rest} = {channels} channels: the count for a block size of {old}. For "
        f"{out} channels out at a block size of {block} it must make {out} * {square} = "
        f"{out * square}"
    )
    if fixed is None or "\n" in fixed:
        return Finding(rule + ".", None)
    label = "" if cell.label == "this cell" else f"in {cell.label}, "
    return Finding(rule + ".", f"{label}{code(fixed)}")


WINDOW_SIZE = ErrorFamily(
    "an image op's window larger than the images",
    messages=(),
    read=_read_window,
    section="shape-dtype-device",
)
DEPTH_TO_SPACE_CHANNELS = ErrorFamily(
    "depth_to_space given channels its block size does not divide",
    messages=(),
    read=_read_block,
    section="shape-dtype-device",
)
