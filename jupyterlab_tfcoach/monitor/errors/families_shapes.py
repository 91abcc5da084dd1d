"""Error families about shapes (see ``family_record.py`` for a family's shape):
matmul's inner dimensions (a vector met by a weight told as one example or a batch of
scalars from the weight's input size), element-wise ops that cannot broadcast (a reduction that
dropped its axis without ``keepdims=True`` among them), a convolution window
larger than its input, None sizes while tracing, a reshape to another number of values,
an argument an ``input_signature`` rejects (one example where it declares batches among
them) and a failed ``assert_shapes``.

Each family's record sits after its reading code; ``families.FAMILIES`` lists them in
the order they are tried.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor.errors.cell_sources import assignments_in_cells, cell_frame
from jupyterlab_tfcoach.monitor.errors.class_id_rows import SECTION as CLASS_IDS_SECTION
from jupyterlab_tfcoach.monitor.errors.class_id_rows import class_ids_against_scores
from jupyterlab_tfcoach.monitor.errors.context import (
    ErrorContext,
    code,
    index_origin,
    innermost_function,
    one_line_code,
    rewrite,
    rewrite_all,
    value_kind,
)
from jupyterlab_tfcoach.monitor.errors.doubled_widths import SECTION as DOUBLED_SECTION
from jupyterlab_tfcoach.monitor.errors.doubled_widths import bidirectional_width
from jupyterlab_tfcoach.monitor.errors.failing_line import (
    FailingLine,
    Operand,
    _dims,
    _shape,
    built_input_shape,
    model_input_shapes,
    show_shape,
    value_of,
)
from jupyterlab_tfcoach.monitor.errors.families_signatures import cast_fix
from jupyterlab_tfcoach.monitor.errors.family_record import (
    GENERAL_SECTION,
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
    segment_of,
    shape_list,
    tf_alias,
)
from jupyterlab_tfcoach.monitor.errors.gathered_rows import gathered_rows
from jupyterlab_tfcoach.monitor.errors.one_axis_growth import grown_one_axis
from jupyterlab_tfcoach.monitor.errors.row_weights import per_row_vector
from jupyterlab_tfcoach.monitor.stored_state import library_attribute

# ------------------------------------------------------------------ shared by matmul, broadcast
_MATMUL_EAGER = re.compile(
    r"Matrix size-incompatible: In\[0\]: \[(?P<a>[\d,]*)\], In\[1\]: \[(?P<b>[\d,]*)\]"
)
_MATMUL_RANKS = re.compile(
    r"In\[0\] and In\[1\] has different ndims: \[(?P<a>[\d,]*)\] vs\. \[(?P<b>[\d,]*)\]"
)
_MATMUL_RANK_ONE = re.compile(r"In\[(?P<which>[01])\] ndims must be >= 2")
# Graph mode: the op is named in the message (matmul's, or an element-wise one).
_GRAPH_DIMENSIONS = re.compile(
    r"Dimensions must be equal, but are (?P<d1>\d+) and (?P<d2>\d+) for "
    r"'\{\{node [^}]*\}\} = (?P<op>\w+)\[.*?with input shapes: "
    r"\[(?P<a>[^\]]*)\], \[(?P<b>[^\]]*)\]",
    re.S,
)
_MATMUL_OPS = ("MatMul", "BatchMatMulV2", "BatchMatMulV3", "_MklMatMul", "_MklBatchMatMulV2")


def _binary_operations(
    line: FailingLine, operator: type[ast.operator], functions: tuple[str, ...]
) -> list[tuple[ast.expr, ast.expr, ast.expr]]:
    """(node, left, right) for each ``a <op> b`` or ``tf.<function>(a, b)`` on the line."""
    found = []
    for part in line.frame.header():
        for node in ast.walk(part):
            if isinstance(node, ast.BinOp) and type(node.op) is operator:
                found.append((node, node.left, node.right))
            elif isinstance(node, ast.Call) and len(node.args) >= 2:
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in functions and not any(isinstance(a, ast.Starred) for a in node.args):
                    found.append((node, node.args[0], node.args[1]))
    exact = [found_one for found_one in found if line.frame.at_position(found_one[0])]
    return exact or found


def _pick(
    line: FailingLine,
    context: ErrorContext,
    candidates: list[tuple[ast.expr, ast.expr, ast.expr]],
    shapes: tuple[tuple[int | None, ...] | None, tuple[int | None, ...] | None],
) -> tuple[ast.expr, Operand | None, Operand | None] | None:
    """The operation whose operands have the shapes TensorFlow reported (any, if unknown)."""
    for node, left, right in candidates:
        operands = (operand_of(left, line, context), operand_of(right, line, context))
        if all(
            shape is None or operand is None or operand.shape is None or operand.shape == shape
            for operand, shape in zip(operands, shapes, strict=True)
        ):
            return node, operands[0], operands[1]
    return None


# ------------------------------------------------------------------ matmul
def _read_matmul(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    shapes: tuple[tuple[int | None, ...] | None, tuple[int | None, ...] | None] = (None, None)
    # A rank-1 operand: its shape is read from the frame.
    if not error.matched(_MATMUL_RANK_ONE):
        shapes = (shape_list(error.group("a")), shape_list(error.group("b")))
    candidates = _binary_operations(line, ast.MatMult, ("matmul",))
    picked = _pick(line, context, candidates, shapes)
    if picked is None:
        return _matmul_rule(shapes, None, None, line, context, None)
    node, left, right = picked
    return _matmul_rule(shapes, left, right, line, context, node)


def _matmul_rule(
    shapes: tuple[tuple[int | None, ...] | None, tuple[int | None, ...] | None],
    left: Operand | None,
    right: Operand | None,
    line: FailingLine,
    context: ErrorContext,
    node: ast.expr | None,
) -> Finding:
    a = (left.shape if left is not None else None) or shapes[0]
    b = (right.shape if right is not None else None) or shapes[1]
    a_name = code(left.source) if left is not None else "the left operand"
    b_name = code(right.source) if right is not None else "the right operand"
    tf = tf_alias(context)
    if (a is not None and len(a) < 2) or (b is not None and len(b) < 2):
        one = a_name if a is not None and len(a) < 2 else b_name
        if one == a_name and a is not None and len(a) == 1 and left is not None:
            read = _vector_into_weight(a[0], b, left, line, context)
            if read is not None:
                return read
        rule = (
            f"matmul multiplies matrices: both operands need at least 2 axes, but {one} has "
            "one (a single example without its batch axis, or a vector)"
        )
        fix = _batch_axis_fix(line, context, left if one == a_name else right)
        return Finding(rule + ".", fix, section="batch-dimension")
    if a is None or b is None:
        return Finding(
            "matmul needs the last axis of the left operand to equal the second-to-last "
            "axis of the right one.",
            None,
        )
    transposed = _transposed_operands(node)
    inner_a, inner_b = (a[-2] if transposed[0] else a[-1]), (b[-1] if transposed[1] else b[-2])
    axis_a = "second-to-last" if transposed[0] else "last"
    axis_b = "last" if transposed[1] else "second-to-last"
    written = " and ".join(
        f"{code(keyword)}" for keyword, on in zip(transposed[2], transposed[:2], strict=True) if on
    )
    rule = (
        f"matmul needs the {axis_a} axis of {a_name} to equal the {axis_b} axis of "
        f"{b_name}{f' (with {written})' if written else ''}: {inner_a} vs {inner_b}"
    )
    doubled = bidirectional_width((inner_a, inner_b), context)
    if doubled is not None:
        return Finding(f"{rule}. {doubled[0]}", doubled[1], section=DOUBLED_SECTION)
    fix = None
    if b[-1] == a[-1] and right is not None and not any(transposed[:2]):
        fix = _transposed_weight_fix(right, line, context)
        if fix is None and node is not None and isinstance(node, ast.Call):
            fixed = _with_keyword(line, node, "transpose_b=True")
            fix = f"{b_name} looks transposed: {code(fixed)}" if fixed else None
        elif fix is None and node is not None:
            fixed = rewrite(line.frame, node, _node_of(node, 1), f"{tf}.transpose({right.source})")
            fix = f"{b_name} looks transposed: {code(fixed)}" if fixed else None
    return Finding(rule + ".", fix)


def _transposed_operands(node: ast.expr | None) -> tuple[bool, bool, tuple[str, str]]:
    """Whether ``tf.matmul(a, b, transpose_b=True)`` (or ``adjoint_*``) transposes each
    operand, and the keywords written for them."""
    flags = [False, False]
    keywords = ["", ""]
    if isinstance(node, ast.Call):
        for keyword in node.keywords:
            for index, side in enumerate("ab"):
                if keyword.arg in (f"transpose_{side}", f"adjoint_{side}"):
                    value = keyword.value
                    on = isinstance(value, ast.Constant) and value.value is True
                    flags[index] = on
                    keywords[index] = f"{keyword.arg}=True"
    return flags[0], flags[1], (keywords[0], keywords[1])


def _node_of(node: ast.expr, index: int) -> ast.expr:
    if isinstance(node, ast.BinOp):
        return (node.left, node.right)[index]
    return node.args[index]  # type: ignore[attr-defined,no-any-return]


def _with_keyword(line: FailingLine, call: ast.Call, keyword: str) -> str | None:
    source = line.frame.segment(call)
    if not source or not source.endswith(")") or "\n" in source:
        return None
    return f"{source[:-1]}, {keyword})"


def _transposed_weight_fix(right: Operand, line: FailingLine, context: ErrorContext) -> str | None:
    """``self.kernel = self.add_weight(shape=(A, B), ...)`` in the cells -> ``shape=(B, A)``."""
    if not right.source.startswith("self."):
        return None
    attribute = right.source[len("self.") :]
    for frame in context.frames():
        tree = frame.tree()
        if tree is None:
            continue
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Attribute)
                and node.targets[0].attr == attribute
                and isinstance(node.value, ast.Call)
            ):
                continue
            for keyword in node.value.keywords:
                value = keyword.value
                if keyword.arg == "shape" and isinstance(value, ast.Tuple) and len(value.elts) == 2:
                    first, second = (frame.segment(element) for element in value.elts)
                    old = frame.segment(value)
                    if first and second and old:
                        return (
                            f"{code(right.source)} was created the other way round: in "
                            f"{code('build')}, write {code(f'shape=({second}, {first})')} "
                            f"instead of {code(f'shape={old}')}"
                        )
    return None


def _batch_axis_fix(
    line: FailingLine, context: ErrorContext, operand: Operand | None
) -> str | None:
    """The argument of the running cell's call that is the operand without a batch axis:
    ``reg(one_sample)`` -> ``reg(tf.expand_dims(one_sample, 0))``."""
    if operand is None or operand.value is None:
        return None
    tf = tf_alias(context)
    for frame in reversed(context.frames()):
        for part in frame.header():
            for node in ast.walk(part):
                if not isinstance(node, ast.Call):
                    continue
                for argument in node.args:
                    found, value = value_of(argument, frame, context)
                    if found and value is operand.value:
                        source = frame.segment(argument) or ""
                        fixed = rewrite(frame, node, argument, f"{tf}.expand_dims({source}, 0)")
                        if fixed and "\n" not in fixed:
                            return f"{_origin(source, context)}give it a batch axis: {code(fixed)}"
    return None


def _layer_of_frame(line: FailingLine, context: ErrorContext) -> Any:
    """The Keras layer whose method the failing line runs in (its ``self``), or None."""
    if line.frame.local_names is None:
        return None
    found, layer = context.lookup("self", line.frame)
    return layer if found and value_kind(layer) in ("layer", "model") else None


def _cell_argument(size: int, context: ErrorContext) -> tuple[str, ast.Call, ast.expr, Any] | None:
    """The running cell's argument that holds ``size`` values on one axis, given to a
    call: ``(its source, the call, the argument, the frame)``."""
    frames = context.frames()
    if not frames:
        return None
    frame = frames[-1]
    for part in frame.header():
        for node in ast.walk(part):
            if not isinstance(node, ast.Call):
                continue
            for argument in node.args:
                found, value = value_of(argument, frame, context)
                if found and _shape(value) == (size,):
                    source = frame.segment(argument)
                    if source and "\n" not in source:
                        return source, node, argument, frame
    return None


def _vector_into_weight(
    size: int,
    weight: tuple[int | None, ...] | None,
    vector: Operand,
    line: FailingLine,
    context: ErrorContext,
) -> Finding | None:
    """A vector of ``size`` values multiplied by a weight: one example without its batch
    axis, or a batch of scalars without their feature axis. Told apart by the size the
    weight expects per example (its second-to-last axis): equal to ``size``, a batch axis
    is missing; 1, a feature axis is; other, the sizes disagree and no axis helps. When
    the layer was built on this vector (its recorded input shape has one axis), the
    weight took the values as features and its size tells nothing: both readings are
    said, each with its edit, and the layer must be made anew after it."""
    if weight is None or len(weight) < 2 or weight[-2] is None:
        return None
    expected = weight[-2]
    layer = _layer_of_frame(line, context)
    built = built_input_shape(layer) if layer is not None else None
    built_on_vector = built is not None and len(built) == 1
    name = code(vector.source)
    found = _cell_argument(size, context)
    if built_on_vector:
        rule = (
            f"matmul multiplies matrices: {name} has one axis of {size} values, and the "
            f"layer was built on it, so its weight took the {size} values as {size} "
            f"features of one example. A layer that multiplies by a weight reads "
            f"(batch, features): say which the {size} values are"
        )
        if found is None:
            return Finding(rule + ".", None, section="batch-dimension")
        source, call, argument, frame = found
        as_batch = rewrite(frame, call, argument, f"{source}[None, :]")
        as_features = rewrite(frame, call, argument, f"{source}[:, None]")
        if not as_batch or not as_features or "\n" in as_batch + as_features:
            return Finding(rule + ".", None, section="batch-dimension")
        fix = (
            f"make the layer anew (its weight was built for {size} features), then give "
            f"{code(source)} its missing axis: one example of {size} features is "
            f"{code(as_batch)}; {size} examples of one feature each (a grid or a column of "
            f"values) is {code(as_features)}"
        )
        return Finding(rule + ".", fix, section="batch-dimension")
    if expected == size and size != 1:
        return None  # one example without its batch axis: the reading below
    if expected == 1 and found is not None:
        source, call, argument, frame = found
        fixed = rewrite(frame, call, argument, f"{source}[:, None]")
        rule = (
            f"matmul multiplies matrices: {name} has one axis of {size} values, and the "
            f"weight expects 1 feature per example (its shape {show_shape(weight)}): these "
            f"are {size} examples of one feature each, missing their feature axis"
        )
        if not fixed or "\n" in fixed:
            return Finding(rule + ".", None, section="batch-dimension")
        return Finding(
            rule + ".", f"give it a feature axis: {code(fixed)}", section="batch-dimension"
        )
    if expected not in (1, size):
        rule = (
            f"matmul multiplies matrices: {name} has one axis of {size} values, but the "
            f"weight expects {expected} features per example (its shape "
            f"{show_shape(weight)}): neither one example of {size} features nor {size} "
            "examples of one feature fits it; the data or the layer is not the one meant"
        )
        return Finding(rule + ".", None, section="batch-dimension")
    return None


def _origin(name: str, context: ErrorContext) -> str:
    """``one = xs[0]`` named, with the slice that keeps the batch axis, or ""."""
    origin = index_origin(name, context)
    if origin is None:
        return ""
    return (
        f"{code(origin.statement)} dropped the batch axis (an integer index takes one item "
        f"without it; {code(origin.kept)} keeps it, as {code(origin.fixed)}), or "
    )


MATMUL = ErrorFamily(
    "matmul inner dimensions",
    messages=(
        Message(_MATMUL_EAGER),
        Message(_MATMUL_RANKS),
        Message(_GRAPH_DIMENSIONS, ops=_MATMUL_OPS),
        Message(_MATMUL_RANK_ONE),
    ),
    read=_read_matmul,
    section=GENERAL_SECTION,  # a rank-1 operand: "batch-dimension"
)


# ------------------------------------------------------------------ broadcasting
_INCOMPATIBLE = re.compile(
    r"Incompatible shapes: \[(?P<a>[\d,]*)\] vs\. \[(?P<b>[\d,]*)\](?: \[Op:(?P<op>\w+)\])?"
)
_ELEMENTWISE: dict[str, tuple[type[ast.operator], tuple[str, ...]]] = {
    "AddV2": (ast.Add, ("add",)),
    "Add": (ast.Add, ("add",)),
    "Sub": (ast.Sub, ("subtract",)),
    "Mul": (ast.Mult, ("multiply",)),
    "RealDiv": (ast.Div, ("divide", "truediv")),
    "Maximum": (ast.BitOr, ("maximum",)),
    "Minimum": (ast.BitOr, ("minimum",)),
    "SquaredDifference": (ast.BitOr, ("squared_difference",)),
    "Pow": (ast.Pow, ("pow",)),
}


def _read_broadcast(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    op = error.group("op")  # None when the eager message names no op
    shapes = (shape_list(error.group("a")), shape_list(error.group("b")))
    a, b = shapes
    left = right = None
    node = None
    if op in _ELEMENTWISE:
        operator, functions = _ELEMENTWISE[op]
        picked = _pick(line, context, _binary_operations(line, operator, functions), shapes)
        if picked is not None:
            node, left, right = picked
    names = (
        code(left.source) if left is not None else _written_side(line, node, 0, "left"),
        code(right.source) if right is not None else _written_side(line, node, 1, "right"),
    )
    if a is None or b is None:
        return None
    axis = _failing_axis(a, b)
    rule = (
        "Element-wise ops line shapes up from the right, and along each axis the sizes must "
        f"be equal or one of them 1: {names[0]} {show_shape(a)} and {names[1]} "
        f"{show_shape(b)} differ at axis {axis} ({a[axis]} vs {b[axis]})"
    )
    if axis == -1:
        doubled = bidirectional_width((a[axis], b[axis]), context)
        if doubled is not None:
            return Finding(f"{rule}. {doubled[0]}", doubled[1], section=DOUBLED_SECTION)
    fix = None
    if node is not None:
        kept = _without_keepdims(node, (a, b), line, context)
        if kept is not None:
            return Finding(rule + ". " + kept[0] + ".", kept[1])
    tf = tf_alias(context)
    # An operand the error is about (its values are one side's, maybe with an axis of 1
    # added: ``row_sums[:, None]``) that a reduction over the examples made.
    sizes = {_size(a), _size(b)}
    for operand in line.operands[:8]:
        if operand.shape is None or _size(operand.shape) not in sizes:
            continue
        reduced = _reduced_over_examples(operand, a + b, line, context)
        if reduced is not None:
            return Finding(rule + ". " + reduced[0] + ".", reduced[1])
    # A side made by a gather that took whole rows: the cause is upstream, no axis helps.
    rows = gathered_rows((a, b), node, line, context)
    if rows is not None:
        return Finding(rule + ". " + rows[0] + ".", rows[1], section="joining-indexing")
    # Class ids, one per row, set against a score per class: one-hot rows, not an axis.
    ids = class_ids_against_scores(node, (a, b), line, context)
    if ids is not None:
        return Finding(rule + ". " + ids[0] + ".", ids[1], section=CLASS_IDS_SECTION)
    # One float per row scaling a table of rows: the vector needs its trailing axis.
    per_row = per_row_vector(node, (a, b), line, context)
    if per_row is not None:
        return Finding(rule + ". " + per_row[0] + ".", per_row[1])
    if node is not None and right is not None and left is not None:
        if len(a) == len(b) == 2 and a == b[::-1]:
            fixed = rewrite(line.frame, node, _node_of(node, 1), f"{tf}.transpose({right.source})")
            fix = f"one of them is transposed: {code(fixed)}" if fixed else None
        elif len(b) == len(a) - 1 and b == a[: len(b)]:
            fixed = rewrite(
                line.frame, node, _node_of(node, 1), f"{tf}.expand_dims({right.source}, -1)"
            )
            fix = f"add the missing last axis to {names[1]}: {code(fixed)}" if fixed else None
        elif len(a) == len(b) - 1 and a == b[: len(a)]:
            fixed = rewrite(
                line.frame, node, _node_of(node, 0), f"{tf}.expand_dims({left.source}, -1)"
            )
            fix = f"add the missing last axis to {names[0]}: {code(fixed)}" if fixed else None
    if fix is None:
        grown = grown_one_axis((a, b), axis, line, context)
        if grown is not None:
            return Finding(rule + ". " + grown[0] + ".", grown[1])
    if fix is None and node is not None and (left is not None or right is not None):
        table = any(side is not None and side.kind in _TABLES for side in (left, right))
        pairs = _every_pair(node, (a, b), line, table)
        if pairs is not None:
            return Finding(rule + ". " + pairs[0] + ".", pairs[1])
    return Finding(rule + ".", fix)


# A side held in one of these is a table of parameters (an embedding table, centroids,
# prototypes): its rows are candidates for each row of the other side, never examples that
# could be paired with the other side's examples.
_TABLES = ("variable", "keras_variable")
# Operands shown as written in a fix that need no parentheses around them when indexed.
_ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)


def _every_pair(
    node: ast.expr,
    shapes: tuple[tuple[int | None, ...], tuple[int | None, ...]],
    line: FailingLine,
    table: bool,
) -> tuple[str, str | None] | None:
    """Two tables of rows of one width and different row counts, ``(N, D)`` against
    ``(M, D)`` (or two vectors of different lengths): an element-wise op pairs row i with
    row i, and such a line is how every row of one is written against every row of the
    other (distances from each query to each candidate). Each operand gets an axis of its
    own, ``a[:, None, :] - b[None, :, :]``, for an ``(N, M, D)`` result. The fix is
    printed only when no call around the operation reduces over an axis the new one would
    shift (``axis=-1`` on the features keeps its meaning; ``axis=1`` would not), and
    only when one side is a table of parameters (``table``: a variable): two batches of
    examples with different counts (predictions against labels) are a data mismatch as
    often, so there both readings are told and no fix is printed."""
    a, b = shapes
    if None in a or None in b or 1 in a[:1] + b[:1] or len(a) != len(b):
        return None
    if len(a) == 2 and a[1] == b[1] and a[0] != b[0]:
        indexes, result, unit = ("[:, None, :]", "[None, :, :]"), (a[0], b[0], a[1]), "row"
        units = "rows"
    elif len(a) == 1 and a[0] != b[0]:
        indexes, result, unit = ("[:, None]", "[None, :]"), (a[0], b[0]), "entry"
        units = "entries"
    else:
        return None
    frame = line.frame
    sides = (_node_of(node, 0), _node_of(node, 1))
    written = [frame.segment(side) for side in sides]
    if not all(written) or any("\n" in text for text in written if text):
        return None
    names = [code(text) for text in written if text]
    text = (
        f"{names[0]} and {names[1]} hold different numbers of {units}, so they cannot be "
        f"paired {unit} by {unit}. To combine every {unit} of {names[0]} with every {unit} of "
        f"{names[1]} (a {show_shape(result)} result), give each its own axis"
    )
    statement = line.statement
    if statement is None or not _keeps_axes(statement, node, len(a)):
        return text, None
    replacements: list[tuple[ast.AST, str]] = [
        (side, (source if isinstance(side, _ATOMS) else f"({source})") + index)
        for side, source, index in zip(sides, written, indexes, strict=True)
        if source
    ]
    fixed = one_line_code(rewrite_all(frame, statement, replacements))
    if table or fixed is None:
        return text, fixed
    return (
        f"{text}, as in {fixed}; if they were meant to be paired {unit} by {unit}, they must "
        f"hold the same number of {units}"
    ), None


def _keeps_axes(statement: ast.stmt, node: ast.expr, rank: int) -> bool:
    """Whether every call around ``node`` in ``statement`` reads no axis the pairing's
    new axis would shift: none given, or (for tables) only the last one, ``axis=-1``."""
    for call in ast.walk(statement):
        if not isinstance(call, ast.Call) or call is node:
            continue
        if not any(inner is node for inner in ast.walk(call)):
            continue
        for keyword in call.keywords:
            if keyword.arg not in ("axis", "axes", "keepdims", "keep_dims"):
                continue
            if keyword.arg == "axis" and rank == 2:
                value = keyword.value
                if (
                    isinstance(value, ast.UnaryOp)
                    and isinstance(value.op, ast.USub)
                    and isinstance(value.operand, ast.Constant)
                    and value.operand.value == 1
                ):
                    continue
            return False
        if len(call.args) > 1 and any(arg is not node for arg in call.args[1:]):
            # A positional axis (``tf.norm(d, 2, 1)``) is not read: no fix.
            positional = [arg for arg in call.args[1:] if isinstance(arg, ast.Constant)]
            if positional:
                return False
    return True


# Reductions that take ``keepdims`` (TensorFlow's and NumPy's, functions and methods).
_KEEPDIMS_REDUCTIONS = frozenset(
    {
        "reduce_sum",
        "reduce_mean",
        "reduce_max",
        "reduce_min",
        "reduce_prod",
        "reduce_std",
        "reduce_variance",
        "reduce_logsumexp",
        "sum",
        "mean",
        "max",
        "min",
        "std",
        "var",
        "prod",
    }
)


def _without_keepdims(
    node: ast.expr,
    shapes: tuple[tuple[int | None, ...], tuple[int | None, ...]],
    line: FailingLine,
    context: ErrorContext,
) -> tuple[str, str | None] | None:
    """``x - tf.reduce_mean(x, axis=1)``: one side is a reduction over an axis other than
    the first, without ``keepdims=True``, of a value of the other side's rank. The reduced
    axis is dropped, so the result lines up from the right against the wrong axis (one
    value per row sits under the columns); ``keepdims=True`` keeps it as an axis of 1,
    which broadcasts. (The rule, the line or the assignment with ``keepdims=True``.)"""
    for index in (0, 1):
        side, other = _node_of(node, index), shapes[1 - index]
        if len(shapes[index]) != len(other) - 1 or len(other) < 2:
            continue
        frame, statement, call = line.frame, line.statement, side
        made_by = ""
        if isinstance(side, ast.Name):
            made = next(iter(assignments_in_cells(side.id, context)), None)
            if made is None:
                continue
            cell, assignment = made
            frame, statement, call = cell_frame(cell), assignment, assignment.value  # type: ignore[assignment]
            made_by = f"`{side.id}` comes from {code(cell.segment(call) or '')}: "
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr in _KEEPDIMS_REDUCTIONS
            and not any(k.arg in ("keepdims", "keep_dims") for k in call.keywords)
        ):
            continue
        axis = next((k.value for k in call.keywords if k.arg == "axis"), None)
        if axis is None:
            positional = 1 if _reduced_argument(call) is not None else 0
            axis = call.args[positional] if len(call.args) > positional else None
        try:
            reduced_axis = ast.literal_eval(axis) if axis is not None else None
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        if type(reduced_axis) is not int or reduced_axis == 0:
            continue
        written = frame.segment(call)
        if not written or not written.endswith(")") or statement is None:
            continue
        rule = (
            f"{made_by}{code(written)} drops the axis it reduces ({reduced_axis}), so its "
            f"{show_shape(shapes[index])} result lines up from the right against the last axis "
            f"of the {show_shape(other)} side, not against the axis it was computed along; "
            "keep the reduced axis as size 1 with keepdims=True, which broadcasts"
        )
        fixed = rewrite(frame, statement, call, f"{written[:-1]}, keepdims=True)")
        if not fixed or "\n" in fixed:
            return rule, None
        return rule, code(fixed)
    return None


def _reduced_argument(call: ast.Call) -> ast.expr | None:
    """The reduced value of ``tf.reduce_mean(x, 1)`` (x); None for ``x.mean(1)``."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        if func.value.id in ("tf", "np", "numpy", "tensorflow", "math", "ops") and call.args:
            return call.args[0]
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute):
        return call.args[0] if call.args else None  # tf.math.reduce_mean(x, 1)
    return None


def _written_side(line: FailingLine, node: ast.expr | None, index: int, side: str) -> str:
    """A side of the operation as written (``tf.reduce_mean(x, axis=1)``), short ones only."""
    written = line.frame.segment(_node_of(node, index)) if node is not None else None
    if written and "\n" not in written and len(written) <= 60:
        return code(written)
    return f"the {side} operand"


def _size(shape: tuple[int | None, ...]) -> int | None:
    total = 1
    for dim in shape:
        if dim is None:
            return None
        total *= dim
    return total


_REDUCTIONS = (
    "argmax",
    "argmin",
    "reduce_sum",
    "reduce_mean",
    "reduce_max",
    "reduce_min",
    "sum",
    "mean",
    "max",
    "min",
)


def _reduced_over_examples(
    operand: Operand | None,
    other: tuple[int | None, ...],
    line: FailingLine,
    context: ErrorContext,
) -> tuple[str, str | None] | None:
    """``predicted = tf.argmax(probs, axis=0)``: an operand made by a reduction over axis
    0 of an (N, C) tensor, which holds one value per column (C) where the other operand
    has one per example (N): the reduction ran across the examples. (The rule, the
    assignment with ``axis=-1``.)"""
    if operand is None or not operand.source.isidentifier() or not other:
        return None
    for cell, statement in assignments_in_cells(operand.source, context):
        call = statement.value
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr in _REDUCTIONS
            and call.args
            and isinstance(call.args[0], ast.Name)
        ):
            return None
        axis_node = next((k.value for k in call.keywords if k.arg == "axis"), None)
        if axis_node is None and len(call.args) > 1:
            axis_node = call.args[1]
        if not (isinstance(axis_node, ast.Constant) and axis_node.value == 0):
            return None
        found, reduced = context.lookup(call.args[0].id, None)
        if not found or value_kind(reduced) not in ("tensor", "array", "variable"):
            return None  # only TensorFlow's and NumPy's own shape is read
        dims = tuple(reduced.shape)
        if len(dims) != 2 or dims[0] not in other or dims[0] == dims[1]:
            return None
        written = cell.segment(call) or ""
        source = call.args[0].id
        rule = (
            f"`{operand.source}` comes from {code(written)}: axis 0 of `{source}` "
            f"({dims[0]}, {dims[1]}) runs across its {dims[0]} rows (the examples), so it "
            f"holds one value per column ({dims[1]}), not one per example; reduce over the "
            "last axis"
        )
        axis_text = cell.segment(axis_node)
        shown = cell.segment(statement)
        if not axis_text or not shown or "\n" in shown:
            return rule, None
        if axis_node.lineno != call.lineno or written.count("\n"):
            return rule, None
        start = axis_node.col_offset - call.col_offset  # the literal's place in the call
        if written[start : start + len(axis_text)] != axis_text:
            return rule, None
        fixed_call = written[:start] + "-1" + written[start + len(axis_text) :]
        return rule, code(shown.replace(written, fixed_call, 1))
    return None


def _failing_axis(a: tuple[int | None, ...], b: tuple[int | None, ...]) -> int:
    for axis in range(-1, -min(len(a), len(b)) - 1, -1):
        x, y = a[axis], b[axis]
        if x is not None and y is not None and x != y and 1 not in (x, y):
            return axis
    return -1


BROADCAST = ErrorFamily(
    "incompatible shapes in element-wise ops",
    messages=(Message(_INCOMPATIBLE), Message(_GRAPH_DIMENSIONS, other_than=_MATMUL_OPS)),
    read=_read_broadcast,
    section="broadcasting",
)


# ------------------------------------------------------------------ negative conv sizes
_NEGATIVE_SIZE = re.compile(
    r"Computed output size would be negative: (?P<size>-?\d+) \[input_size: (?P<input>\d+), "
    r"effective_filter_size: (?P<filter>\d+), stride: (?P<stride>\d+)\]"
)


# Keras 3 checks the window against the input before TensorFlow runs (conv, pooling).
_KERAS_NEGATIVE_SIZE = re.compile(
    r"Computed output size would be zero or negative\. Received:? `inputs[.\s]shape="
    r"\((?P<shape>[^)]*)\)`, "
    r"`(?:kernel shape=\((?P<kernel>[^)]*)\)|pool_size=\[(?P<pool>[^\]]*)\])`"
    r".*?`padding=(?P<padding>\w+)`",
    re.S,
)


def _read_negative_size(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    if error.matched(_KERAS_NEGATIVE_SIZE):
        return _read_keras_negative_size(error, line, context)
    size, window = error.group("input"), error.group("filter")
    rule = (
        f"A convolution or pooling window of {window} does not fit on an axis of size {size}: "
        "the layer read the input's axes one place off, which usually means the batch axis "
        "is missing (or the image is smaller than the stack of windows)"
    )
    fix = None
    tf = tf_alias(context)
    for operand in line.operands:
        if (
            operand.kind in ("model", "layer")
            and isinstance(line.call, ast.Call)
            and line.call.args
        ):
            argument = line.call.args[0]
            given = operand_of(argument, line, context)
            expected = model_input_shapes(operand.value)
            if given is not None and given.shape is not None and expected:
                if tuple(expected[0][1:]) == given.shape:
                    source = given.source
                    fixed = rewrite(
                        line.frame, line.call, argument, f"{tf}.expand_dims({source}, 0)"
                    )
                    if fixed:
                        fix = (
                            f"{code(source)} is one example {show_shape(given.shape)}; the model "
                            f"takes batches {show_shape(expected[0])}: {code(fixed)}"
                        )
            break
    return Finding(rule + ".", fix)


def _read_keras_negative_size(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """The window of a Keras 3 conv or pooling layer larger than the image's spatial axes
    (channels last): the rule names both; the fix keeps the size with ``padding="same"``
    in the user's construction of the layer called on the failing line."""
    shape = shape_list(error.group("shape"))
    if shape is None or len(shape) < 3:
        return None
    spatial = shape[1:-1]
    if error.group("kernel") is not None:
        kernel = shape_list(error.group("kernel"))
        window = kernel[: len(spatial)] if kernel else None
        what = "convolution window"
    else:
        window = shape_list(error.group("pool").replace(" ", ","))
        what = "pooling window"
    if not window:
        return None
    rule = (
        f"A {what} of {show_shape(tuple(window))} does not fit on the spatial axes "
        f"{show_shape(spatial)} of its input {show_shape(shape)} (batch, then the spatial axes, "
        "channels last): with padding='valid' every window shrinks the image, so the image is "
        "smaller than the stack of windows, or its axes are in another order"
    )
    return Finding(rule + ".", _same_padding_fix(line, context))


def _same_padding_fix(line: FailingLine, context: ErrorContext) -> str | None:
    """``conv = layers.Conv2D(8, 3, padding="same")``: the layer called on the failing line,
    rebuilt where a running cell assigns it, with padding that keeps the spatial size."""
    call = line.call
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
        return None
    name = call.func.id
    for frame in reversed(context.frames()):
        tree = frame.tree()
        for node in ast.walk(tree) if tree is not None else ():
            if not (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == name
                and isinstance(node.value, ast.Call)
                and not any(keyword.arg == "padding" for keyword in node.value.keywords)
            ):
                continue
            built = frame.segment(node.value)
            if not built or "\n" in built or not built.endswith(")"):
                return None
            separator = ", " if node.value.args or node.value.keywords else ""
            fixed = f'{name} = {built[:-1]}{separator}padding="same")'
            return f"keep the spatial size with padding: {code(fixed)}"
    return None


NEGATIVE_SIZE = ErrorFamily(
    "negative convolution output size",
    messages=(Message(_NEGATIVE_SIZE), Message(_KERAS_NEGATIVE_SIZE)),
    read=_read_negative_size,
    section="batch-dimension",
)


# ------------------------------------------------------------------ unknown sizes in graphs
_NONE_DIMENSION = re.compile(r"Failed to convert elements of \((?P<shape>[^)]*None[^)]*)\) to")
# ``tf.zeros(x.shape)`` with an unknown size (TF 2.21's wording for a whole TensorShape).
_PARTIAL_SHAPE = re.compile(
    r"Cannot convert a partially known TensorShape \((?P<shape>[^)]*None[^)]*)\) to a Tensor"
)


def _read_unknown_dimension(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    tf = tf_alias(context)
    static = [
        node
        for part in line.frame.header()
        for node in ast.walk(part)
        if isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "shape"
    ]
    shape = error.match.groupdict().get("shape") if error.match is not None else None
    if shape is None:
        # "Expected int32, but got None" names no shape: the family's only when a static
        # size read on the line is None, and the shape is that value's.
        shape = _unknown_static_shape(static, line, context)
        if shape is None:
            return None
    rule = (
        f"While a function is traced (in fit, a tf.function or a dataset's map) the batch "
        f"size is unknown, so a static shape holds None: ({shape}). "
        f"{code(f'{tf}.shape(x)')} gives the sizes when the graph runs"
    )
    declared = _open_batch_signature(line)
    if declared is not None and static:
        function, signature = declared
        read = segment_of(line, static[0])
        rule += (
            f". {code(function)}'s input_signature, {code(signature)}, leaves that size open: "
            f"one trace serves every call, so {code(read)} is None whatever the call gives "
            f"(wrapped in a list, {code(f'[{read}]')}, it fails the same way)"
        )
    whole = [
        node
        for part in line.frame.header()
        for node in ast.walk(part)
        if isinstance(node, ast.Attribute) and node.attr == "shape"
    ]
    # The sizes the message says are None: a static subscript at another index (the 4 of
    # ``x.shape[1]`` in (None, 4)) is known and stays as it is.
    unknown = {
        index
        for index, size in enumerate(part.strip() for part in shape.split(","))
        if size == "None"
    }
    replacements: list[tuple[ast.AST, str]] = []
    for node in static:
        owner = segment_of(line, node.value.value)  # type: ignore[attr-defined]
        index = segment_of(line, node.slice)
        position = node.slice.value if isinstance(node.slice, ast.Constant) else None
        if not (owner and index) or (isinstance(position, int) and position not in unknown):
            continue
        replacements.append((node, f"{tf}.shape({owner})[{index}]"))
    if not static:
        for node in whole[:1]:
            owner = segment_of(line, node.value)
            if owner:
                replacements.append((node, f"{tf}.shape({owner})"))
    if not replacements:
        return Finding(rule + ".", None)
    # The whole statement rewritten, every unknown size in it at once: a span naming one
    # part would leave ``x.shape[0]`` elsewhere on the line (or be applied to another part).
    statement = line.frame.statement()
    fixed = None
    if statement is not None and not hasattr(statement, "body"):
        fixed = one_line_code(rewrite_all(line.frame, statement, replacements))
    if fixed is not None:
        return Finding(rule + ".", f"use the dynamic shape, {fixed}")
    said = ", ".join(code(text) for _, text in replacements)
    return Finding(f"{rule}: use {said} on this line.", None)


_MAX_SIGNATURE = 120


def _open_batch_signature(line: FailingLine) -> tuple[str, str] | None:
    """(the function, its ``input_signature=`` as written) when the failing line is in a
    function of the cell decorated with an ``input_signature`` that writes ``None``."""
    tree = line.frame.tree()
    function = innermost_function(tree, line.frame.position.line) if tree is not None else None
    if function is None:
        return None
    for decorator in function.decorator_list:
        if not isinstance(decorator, ast.Call):
            continue
        for keyword in decorator.keywords:
            if keyword.arg != "input_signature":
                continue
            written = line.frame.segment(keyword.value)
            if (
                written
                and "\n" not in written
                and len(written) <= _MAX_SIGNATURE
                and "None" in written
            ):
                return function.name, written
    return None


def _unknown_static_shape(
    static: list[ast.Subscript], line: FailingLine, context: ErrorContext
) -> str | None:
    """``None, 5``: the shape of the first value whose ``.shape[k]`` the line reads and
    finds None (a constant ``k``); None when every size it reads is known."""
    for node in static:
        index = node.slice.value if isinstance(node.slice, ast.Constant) else None
        found, value = value_of(node.value.value, line.frame, context)  # type: ignore[attr-defined]
        dims = _static_dims(value) if found else None
        if dims is not None and isinstance(index, int) and -len(dims) <= index < len(dims):
            if dims[index] is None:
                return ", ".join("None" if size is None else str(size) for size in dims)
    return None


def _static_dims(value: Any) -> tuple[int | None, ...] | None:
    shape = library_attribute(value, "shape")
    try:
        dims = tuple(shape)  # type: ignore[arg-type]
    except Exception:
        return None
    if not all(size is None or type(size) is int for size in dims):
        return None
    return dims


# ``tf.ones((x.shape[0], 4))`` while tracing: the None meets an int32 conversion.
_NONE_INT = re.compile(r"Expected int(?:32|64), but got None of type 'NoneType'")
# ``tf.zeros(x.shape[0])`` while tracing: the None itself given as a shape.
_NONE_VALUES = re.compile(r"None values not supported")

UNKNOWN_DIMENSION = ErrorFamily(
    "None sizes while tracing",
    messages=(
        Message(_NONE_DIMENSION),
        Message(_PARTIAL_SHAPE),
        Message(_NONE_INT),
        Message(_NONE_VALUES),
    ),
    read=_read_unknown_dimension,
    section=GENERAL_SECTION,
)


# ------------------------------------------------------------------ reshape
_RESHAPE = re.compile(
    r"Input to reshape is a tensor with (?P<have>\d+) values, but the requested shape "
    r"(?:has|requires a multiple of) (?P<want>\d+)"
)


def _read_reshape(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    rule = (
        f"reshape keeps every value and only rearranges them: {error.group('have')} values "
        f"cannot fill a shape of {error.group('want')}; the product of the new shape must "
        "equal the old one (one axis may be -1 to be computed)"
    )
    return Finding(rule + ".", None)


RESHAPE = ErrorFamily(
    "reshape to a different number of values",
    messages=(Message(_RESHAPE),),
    read=_read_reshape,
    section=GENERAL_SECTION,
)


# ------------------------------------------------------------------ signatures, assertions
_SIGNATURE = re.compile(
    r"Can not cast TensorSpec\(shape=\((?P<given>[^)]*)\), dtype=tf\.(?P<given_dtype>\w+)"
    r"[^)]*\) to TensorSpec\(shape=\((?P<wanted>[^)]*)\), dtype=tf\.(?P<wanted_dtype>\w+)"
)


def _read_signature(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    given, wanted = shape_list(error.group("given")), shape_list(error.group("wanted"))
    if given is None or wanted is None:
        return None
    given_dtype, wanted_dtype = error.group("given_dtype"), error.group("wanted_dtype")
    rule = (
        f"The tf.function's input_signature declares {show_shape(wanted)} "
        f"{wanted_dtype} and accepts nothing else; the argument is "
        f"{show_shape(given)} {given_dtype}"
    )
    fits = len(given) == len(wanted) and all(
        w is None or g == w for g, w in zip(given, wanted, strict=True)
    )
    if given_dtype != wanted_dtype and fits:
        # Only the dtype differs: a tensor's dtype is never converted on the way in.
        cast = cast_fix(line, context, given_dtype, wanted_dtype, given)
        rule += (
            ": a tensor's dtype is never converted to the signature's (NumPy arrays and "
            "Python numbers are)"
        )
        if cast is None:
            return Finding(rule + f"; cast it to {wanted_dtype} first.", None)
        return Finding(f"{rule}; `{cast[0]}` is that tensor.", code(cast[1]))
    fix = None
    if (
        given_dtype == wanted_dtype
        and len(given) == len(wanted)
        and given[1:] == wanted[1:]
        and wanted[0] is not None
        and given[:1] != wanted[:1]
    ):
        tf = tf_alias(context)
        rest = ", ".join(str(d) for d in wanted[1:])
        spec = f"{tf}.TensorSpec([None, {rest}], {tf}.{wanted_dtype})"
        fix = f"leave the batch axis unknown in the signature: {code(spec)}"
    elif (
        given_dtype == wanted_dtype
        and len(wanted) == len(given) + 1
        and wanted[-1] == 1
        and all(w is None or g == w for g, w in zip(given, wanted[:-1], strict=True))
    ):
        found = _dropped_axis(given, line, context)
        if found is not None:
            rule += found[0]
            fix = found[1]
    elif (
        given_dtype == wanted_dtype
        and len(wanted) == len(given) + 1
        and wanted[0] is None
        and all(w is None or g == w for g, w in zip(given, wanted[1:], strict=True))
    ):
        rule += (
            ": the first axis of the signature (None) counts the examples, and the argument "
            "is one example without it"
        )
        fix = _batch_of_one(given, line, context)
    return Finding(rule + ".", fix)


def _batch_of_one(
    given: tuple[int | None, ...], line: FailingLine, context: ErrorContext
) -> str | None:
    """The call with the argument of shape ``given`` made a batch of one (``x[3:4]`` for
    ``x[3]``, else the batch axis added in front)."""
    from jupyterlab_tfcoach.monitor.errors.shapes import _BATCH, _fixed_argument, indexed_shape

    call = line.call
    if not isinstance(call, ast.Call) or line.statement is None or not call.args:
        return None
    shaped = [a for a in call.args if indexed_shape(a, line.frame, context) == list(given)]
    argument = shaped[0] if len(shaped) == 1 else (call.args[0] if len(call.args) == 1 else None)
    source = line.frame.segment(argument) if argument is not None else None
    if argument is None or not source:
        return None
    replacement = _fixed_argument(_BATCH, argument, source, line.frame, context)
    fixed = rewrite(line.frame, line.statement, argument, replacement)
    return code(fixed) if fixed and "\n" not in fixed else None


# Reductions that drop the axis they reduce unless given ``keepdims=True``.
_AXIS_DROPPING = frozenset(
    {"sum", "mean", "max", "min", "prod", "std", "var"}
    | {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min"}
)


def _dropped_axis(
    given: tuple[int | None, ...], line: FailingLine, context: ErrorContext
) -> tuple[str, str | None] | None:
    """The argument whose last axis of size 1 a reduction dropped (``p = x.sum(axis=1)``,
    newest in the running cell before the line): that assignment with ``keepdims=True``;
    for another argument of that shape, the call with ``[..., None]`` on it."""
    held = [o for o in line.with_shape(given) if o.kind in ("array", "tensor")]
    if len(held) > 1:
        held = _at_declared_position(held, (*given, 1), line, context)
    if len(held) != 1 or not held[0].source.isidentifier():
        return None
    name = held[0].source
    said = (
        f"; {code(name)} has one axis fewer than declared: the signature wants a last axis "
        "of size 1"
    )
    tree = line.frame.tree()
    failing = line.statement
    assignments = [
        node
        for node in (tree.body if tree is not None else [])
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id == name
        and failing is not None
        and node.lineno < failing.lineno
    ]
    if assignments:
        statement = assignments[-1]
        call = statement.value
        func = call.func if isinstance(call, ast.Call) else None
        reduction = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if (
            isinstance(call, ast.Call)
            and reduction in _AXIS_DROPPING
            and any(k.arg == "axis" for k in call.keywords)
            and not any(k.arg in ("keepdims", "keep_dims") for k in call.keywords)
        ):
            written = line.frame.segment(call) or ""
            fixed = rewrite(line.frame, statement, call, f"{written[:-1].rstrip()}, keepdims=True)")
            if written and fixed and "\n" not in fixed:
                return (
                    f"{said}, which `.{reduction}(axis=...)` on line {statement.lineno} "
                    f"dropped ({code('keepdims=True')} keeps it)",
                    f"in line {statement.lineno} of this cell, {code(fixed)}",
                )
    node = next(
        (
            n
            for part in line.frame.header()
            for n in ast.walk(part)
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
        ),
        None,
    )
    fixed = rewrite(line.frame, failing, node, f"{name}[..., None]") if node and failing else None
    return said, code(fixed) if fixed and "\n" not in fixed else None


def _at_declared_position(
    held: list[Any], wanted: tuple[int | None, ...], line: FailingLine, context: ErrorContext
) -> list[Any]:
    """Of several arguments of the refused shape, the one at the position whose spec in
    the function's ``input_signature`` (read from the tf.function, stored by TensorFlow)
    has the declared shape."""
    call = line.call
    if not isinstance(call, ast.Call):
        return []
    found, function = value_of(call.func, line.frame, context)
    signature = library_attribute(function, "input_signature") if found else None
    if type(signature) not in (list, tuple):
        return []
    positions = []
    for index, spec in enumerate(list(signature)[:_MAX_SPECS]):
        shape = _dims(library_attribute(spec, "shape"))
        if shape is None or len(shape) != len(wanted):
            continue
        if all(w is None or s == w for s, w in zip(wanted, shape, strict=True)):
            positions.append(index)
    sources = {
        line.frame.segment(call.args[index]) for index in positions if index < len(call.args)
    }
    return [operand for operand in held if operand.source in sources]


_MAX_SPECS = 50


SIGNATURE = ErrorFamily(
    "an argument a tf.function's input_signature rejects",
    messages=(Message(_SIGNATURE),),
    read=_read_signature,
    section="input-signature",
)


_ASSERTION = re.compile(r"must have rank|Specified by tensor|must have size|must have shape")


def _read_shape_assertion(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    if "assert_shapes" not in (line.call_source or ""):
        return None
    return Finding(
        "tf.debugging.assert_shapes found a tensor whose shape is not the one declared for "
        "it (the same letter means the same size in every tensor): make the shapes equal "
        "before the arithmetic, with tf.squeeze or tf.reshape.",
        None,
    )


SHAPE_ASSERTION = ErrorFamily(
    "a failed shape assertion",
    messages=(Message(_ASSERTION),),
    read=_read_shape_assertion,
    section="broadcasting",
)
