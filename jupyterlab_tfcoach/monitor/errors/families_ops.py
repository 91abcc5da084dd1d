"""Error families of single TensorFlow ops (see ``family_record.py`` for a family's shape):
joining tensors whose other axes differ (``tf.concat``, ``tf.stack``), an index past the
end of a table (``tf.gather``, an ``Embedding``, ``x[5]``), ``tf.one_hot`` given float
labels, ``tf.math.top_k`` asking for more entries than the last axis has, a
``tf.transpose`` permutation of another length than the tensor's rank,
``softmax_cross_entropy_with_logits`` given class numbers, ``tf.cast`` of strings, and a
tensor indexed by a tensor of several indices (a boolean mask is valid indexing in TF 2.21).

Each family is recognised by the op's own message (the op TensorFlow names in it, the
exception type), then reads the call on the failing line: its arguments, by position or
keyword, as the user wrote them, so that the rule names the user's operands and the fix
is the user's call with the one argument that broke the rule rewritten.

Each family's record sits after its reading code; ``families.FAMILIES`` lists them in
the order they are tried.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.cell_sources import error_cells
from jupyterlab_tfcoach.monitor.errors.constructor_sites import (
    built_from_parameter,
    constructor_argument,
)
from jupyterlab_tfcoach.monitor.errors.context import (
    ErrorContext,
    code,
    is_postfix_safe,
    rewrite,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, Operand, show_shape
from jupyterlab_tfcoach.monitor.errors.families_skipped_embedding import largest_value
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
    segment_of,
    shape_list,
    tf_alias,
)
from jupyterlab_tfcoach.monitor.errors.lookup_ids import LOOKUP_SECTION, ids_lookup, names_size_of
from jupyterlab_tfcoach.monitor.errors.shapes import indexed_shape
from jupyterlab_tfcoach.monitor.stored_state import is_library_class

# A section of module 1 that teaches joining, reordering and indexing tensors.
JOINING_SECTION = "joining-indexing"


def argument(call: ast.expr | None, position: int, keyword: str) -> ast.expr | None:
    """The argument of ``call`` at ``position`` or named ``keyword`` (None if absent)."""
    if not isinstance(call, ast.Call):
        return None
    for given in call.keywords:
        if given.arg == keyword:
            return given.value
    if len(call.args) > position and not any(
        isinstance(arg, ast.Starred) for arg in call.args[: position + 1]
    ):
        return call.args[position]
    return None


def callee_name(call: ast.expr | None) -> str:
    """``concat`` for ``tf.concat(...)``, ``emb`` for ``emb(...)``; "" for anything else."""
    if not isinstance(call, ast.Call):
        return ""
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _one_line(text: str | None) -> str | None:
    return text if text and "\n" not in text else None


def _fixed_call(line: FailingLine, inner: ast.AST, replacement: str) -> str | None:
    """The failing call with ``inner`` replaced, on one line."""
    if line.call is None:
        return None
    return _one_line(rewrite(line.frame, line.call, inner, replacement))


# ------------------------------------------------------------------ concat and stack
_CONCAT_DIMENSION = re.compile(
    r"ConcatOp : Dimension (?P<dim>\d+) in both shapes must be equal: shape\[(?P<i>\d+)\] = "
    r"\[(?P<a>[\d,]*)\] vs\. shape\[(?P<j>\d+)\] = \[(?P<b>[\d,]*)\]"
)
_CONCAT_RANK = re.compile(
    r"ConcatOp : Ranks of all input tensors should match: shape\[(?P<i>\d+)\] = "
    r"\[(?P<a>[\d,]*)\] vs\. shape\[(?P<j>\d+)\] = \[(?P<b>[\d,]*)\]"
)
_STACK = re.compile(
    r"Shapes of all inputs must match: values\[(?P<i>\d+)\]\.shape = \[(?P<a>[\d,]*)\] != "
    r"values\[(?P<j>\d+)\]\.shape = \[(?P<b>[\d,]*)\]"
)


def _joined_item(values: ast.expr, index: int, line: FailingLine) -> str:
    """The user's spelling of the ``index``-th tensor joined: ``b`` in ``[a, b]``, else
    ``rows[1]`` for a list named ``rows``."""
    if isinstance(values, (ast.List, ast.Tuple)):
        if index < len(values.elts) and not any(isinstance(e, ast.Starred) for e in values.elts):
            return segment_of(line, values.elts[index])
        return ""
    source = segment_of(line, values)
    return f"{source}[{index}]" if source and is_postfix_safe(values) else ""


def _differing_axes(a: tuple[int | None, ...], b: tuple[int | None, ...]) -> list[int]:
    return [axis for axis, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]


def _read_join(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    tf = tf_alias(context)
    name = callee_name(line.call)
    stacking = error.matched(_STACK)
    if stacking and name != "stack":
        return _read_packed_list(error, line, context, tf)
    if name != ("stack" if stacking else "concat"):
        return None
    values = argument(line.call, 0, "values")
    a, b = shape_list(error.group("a")), shape_list(error.group("b"))
    if values is None or a is None or b is None:
        return None
    first = _joined_item(values, int(error.group("i")), line)
    second = _joined_item(values, int(error.group("j")), line)
    if not first or not second:
        return None
    axis_node = argument(line.call, 1, "axis")
    axis_text = segment_of(line, axis_node) if axis_node is not None else "0"
    shown = f"{code(first)} is {show_shape(a)} and {code(second)} is {show_shape(b)}"
    if stacking:
        return _read_stack(line, values, shown, a, b, tf)
    if error.matched(_CONCAT_RANK):
        return _concat_ranks(line, values, shown, a, b, (first, second), tf)
    dim = int(error.group("dim"))
    rule = (
        f"{tf}.concat joins tensors end to end along axis {axis_text}, so every other axis "
        f"must have the same size in all of them, but {shown}: axis {dim} differs "
        f"({a[dim]} vs {b[dim]})"
    )
    fix = None
    if _differing_axes(a, b) == [dim] and axis_node is not None:
        fixed = _fixed_call(line, axis_node, str(dim))
        if fixed:
            fix = f"to join along the axis where they differ, {code(fixed)}"
    return Finding(rule + ".", fix, section=JOINING_SECTION)


def _concat_ranks(
    line: FailingLine,
    values: ast.expr,
    shown: str,
    a: tuple[int | None, ...],
    b: tuple[int | None, ...],
    names: tuple[str, str],
    tf: str,
) -> Finding:
    rule = (
        f"{tf}.concat needs tensors with the same number of axes, but {shown} "
        f"({len(a)} axes against {len(b)})"
    )
    fix = None
    longer, shorter, name = (b, a, names[1]) if len(b) > len(a) else (a, b, names[0])
    extra = [
        axis
        for axis in range(len(longer))
        if longer[axis] == 1 and longer[:axis] + longer[axis + 1 :] == shorter
    ]
    if extra and isinstance(values, (ast.List, ast.Tuple)):
        node = next((e for e in values.elts if segment_of(line, e) == name), None)
        if node is not None:
            fixed = _fixed_call(line, node, f"{tf}.squeeze({name}, axis={extra[0]})")
            if fixed:
                rule += f": {code(name)} has an extra axis of size 1 at position {extra[0]}"
                fix = f"drop it, {code(fixed)}"
    return Finding(rule + ".", fix, section=JOINING_SECTION)


def _read_stack(
    line: FailingLine,
    values: ast.expr,
    shown: str,
    a: tuple[int | None, ...],
    b: tuple[int | None, ...],
    tf: str,
) -> Finding:
    rule = (
        f"{tf}.stack puts tensors of one shape side by side along a new axis, so they must "
        f"all have the same shape, but {shown}"
    )
    fix = None
    values_source = segment_of(line, values)
    differing = _differing_axes(a, b) if len(a) == len(b) else []
    if len(differing) == 1 and values_source and "\n" not in values_source:
        axis = differing[0]
        rule += f": they differ on axis {axis} ({a[axis]} vs {b[axis]})"
        joined = code(f"{tf}.concat({values_source}, axis={axis})")
        if len(a) == 1:
            fix = (
                f"to join them end to end, {joined}; to keep rows of different lengths, "
                f"{code(f'{tf}.ragged.stack({values_source})')}"
            )
        else:
            fix = f"to join them end to end along that axis, {joined}"
    return Finding(rule + ".", fix, section=JOINING_SECTION)


def _read_packed_list(
    error: Recognised, line: FailingLine, context: ErrorContext, tf: str
) -> Finding | None:
    """``tf.reduce_sum([a, b])``: a list given where a tensor is expected is packed into
    one tensor (TensorFlow's ``Pack``, as ``tf.stack`` does), so its tensors must share a
    shape. Claimed only when a list written in the failing call holds, at the message's
    two positions, tensors of exactly the two shapes the message quotes."""
    call = line.call
    a, b = shape_list(error.group("a")), shape_list(error.group("b"))
    if not isinstance(call, ast.Call) or a is None or b is None:
        return None
    i, j = int(error.group("i")), int(error.group("j"))
    written = [*call.args, *(k.value for k in call.keywords)]
    lists = [
        node
        for node in written
        if isinstance(node, (ast.List, ast.Tuple))
        and max(i, j) < len(node.elts)
        and not any(isinstance(e, ast.Starred) for e in node.elts)
    ]
    if len(lists) != 1:
        return None
    values = lists[0]
    items = [operand_of(values.elts[k], line, context) for k in (i, j)]
    if any(item is None or item.shape != shape for item, shape in zip(items, (a, b), strict=True)):
        return None
    first, second = (segment_of(line, values.elts[k]) for k in (i, j))
    shown_list = segment_of(line, values)
    func = segment_of(line, call.func)
    if not first or not second or not shown_list or not func:
        return None
    rule = (
        f"{code(func)} was given the list {code(shown_list)}, and TensorFlow packs a list into "
        f"one tensor (as {tf}.stack does) before using it, so its tensors must all have the "
        f"same shape, but {code(first)} is {show_shape(a)} and {code(second)} is "
        f"{show_shape(b)}"
    )
    fix = None
    names = [segment_of(line, e) for e in values.elts]
    alone = len(call.args) == 1 and not call.keywords and call.args[0] is values
    differing = _differing_axes(a, b) if len(a) == len(b) else []
    if callee_name(call) == "reduce_sum" and alone and all(n and "\n" not in n for n in names):
        summed = " + ".join(f"{func}({n})" for n in names)
        fixed = rewrite(line.frame, line.statement, call, summed) if line.statement else None
        if fixed and "\n" not in fixed:
            fix = f"to sum all their values, sum each and add the sums, {code(fixed)}"
    elif len(differing) == 1:
        joined = _fixed_call(line, values, f"{tf}.concat({shown_list}, axis={differing[0]})")
        if joined:
            fix = f"to join them end to end along the axis where they differ, {code(joined)}"
    return Finding(rule + ".", fix, section=JOINING_SECTION)


JOIN = ErrorFamily(
    "joining tensors whose shapes differ in concat, stack or a packed list",
    messages=(Message(_CONCAT_DIMENSION), Message(_CONCAT_RANK), Message(_STACK)),
    read=_read_join,
    section=JOINING_SECTION,
)


# ------------------------------------------------------------------ indexes out of range
_GATHER_RANGE = re.compile(
    r"indices\[(?P<position>[\d,]+)\] = (?P<value>-?\d+) is not in \[0, (?P<size>\d+)\)"
)
_SLICE_RANGE = re.compile(r"slice index (?P<value>-?\d+) of dimension (?P<axis>\d+) out of bounds")
# Eager: Keras names the layer's call; in fit's graph, the node and the stack name it.
_EMBEDDING = re.compile(
    r"calling Embedding\.call\(\)|/embedding(?:_\d+)?/GatherV2|layers/core/embedding\.py"
)


def _read_index_range(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    tf = tf_alias(context)
    if error.matched(_SLICE_RANGE):
        return _read_slice_range(error, line, context)
    value, size = int(error.group("value")), int(error.group("size"))
    if _EMBEDDING.search(error.parsed.message):
        return _read_embedding_range(value, size, line, context, tf)
    if callee_name(line.call) != "gather":
        return None
    table_node = argument(line.call, 0, "params")
    indices_node = argument(line.call, 1, "indices")
    table = segment_of(line, table_node)
    indices = segment_of(line, indices_node)
    if not table or not indices:
        return None
    rule = (
        f"{tf}.gather reads rows of {code(table)} by their index, so every index must lie in "
        f"[0, {size}) ({size} entries on the axis gathered), but {code(indices)} holds "
        f"{value} (at position [{error.group('position')}])"
    )
    if value < 0:
        rule += "; negative indices do not count from the end in tf.gather"
    return Finding(rule + ".", None, section=JOINING_SECTION)


def _read_slice_range(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    subscript = line.call if isinstance(line.call, ast.Subscript) else None
    if subscript is None:
        return None
    indexed = operand_of(subscript.value, line, context)
    axis, value = int(error.group("axis")), int(error.group("value"))
    if indexed is None or indexed.shape is None or axis >= len(indexed.shape):
        return None
    size = indexed.shape[axis]
    rule = (
        f"{code(indexed.source)} has {size} entries on axis {axis} (indices 0 to "
        f"{size - 1 if size else 0}, or -{size} to -1 from the end), so index {value} is past "
        "its end"
        if size is not None
        else f"index {value} is past the end of axis {axis} of {code(indexed.source)}"
    )
    return Finding(rule + ".", None, section=JOINING_SECTION)


def _embedding_definition(line: FailingLine, context: ErrorContext) -> tuple[str, str] | None:
    """``emb = layers.Embedding(vocab, 8)`` in a running cell -> (its source, the same
    with ``input_dim`` given as ``{}``), the first such call found."""
    for frame in reversed(context.frames()):
        tree = frame.tree()
        if tree is None:
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and callee_name(node) == "Embedding"):
                continue
            dim = argument(node, 0, "input_dim")
            whole = frame.segment(node)
            if dim is None or not whole or "\n" in whole:
                continue
            fixed = rewrite(frame, node, dim, "\0")
            if fixed:
                return whole, fixed
    return None


def _read_embedding_range(
    value: int, size: int, line: FailingLine, context: ErrorContext, tf: str
) -> Finding | None:
    ids_node = argument(line.call, 0, "x")
    ids = segment_of(line, ids_node) if ids_node is not None else ""
    holder = code(ids) if ids else "the input"
    rule = (
        f"An Embedding with input_dim={size} has one row per index 0 to {size - 1}, but "
        f"{holder} holds index {value}: input_dim must be the vocabulary size, the largest "
        "index + 1"
    )
    made = _made_by_learner(value, size, line, context)
    if made is not None:
        return Finding(rule + made[0] + ".", made[1], section=JOINING_SECTION)
    fix = None
    definition = _embedding_definition(line, context)
    lookup = ids_lookup(ids_node, line.frame, context, value)
    constant = vocabulary_constant(context, value)
    if lookup is not None and not (
        constant is not None and names_size_of(constant[0], lookup, line.frame, context)
    ):
        # The layer that made the ids says how many there can be: its own size, not a
        # constant that happens to hold the same number.
        rule += lookup.sentence(value)
        if size == lookup.terms:
            rule += f"; input_dim={size} counts the terms without that slot"
        if definition is not None:
            whole, template = definition
            fixed = template.replace("\0", f"{lookup.name}.vocabulary_size()")
            fix = f"size it by the lookup: in place of {code(whole)}, write {code(fixed)}"
        return Finding(rule + ".", fix, section=LOOKUP_SECTION)
    needed = _vocabulary_size(line, context, ids, ids_node, tf) if ids and "\n" not in ids else None
    if definition is not None and constant is not None:
        whole, template = definition
        name, layer, count = constant
        fix = (
            f"size it by the vocabulary: {code(name)} holds {code(f'{layer}.vocabulary_size()')}"
            f" ({count}); in place of {code(whole)}, write {code(template.replace(chr(0), name))}"
        )
    elif definition is not None and needed is not None:
        whole, template = definition
        fixed = template.replace("\0", needed)
        source = (
            "the largest index written + 1"
            if needed.isdigit()
            else f"the indices (once {code(ids)} exists)"
        )
        fix = (
            f"give it the vocabulary size the indices come from, or size it from {source}: "
            f"in place of {code(whole)}, write {code(fixed)}"
        )
    return Finding(rule + ".", fix, section=JOINING_SECTION)


def _made_by_learner(
    value: int, size: int, line: FailingLine, context: ErrorContext
) -> tuple[str, str | None] | None:
    """An Embedding a learner's class builds from a constructor parameter
    (``self.token_emb = layers.Embedding(vocab_size, ...)``), given the largest id where
    the learner made the object (``TokenAndPositionEmbedding(maxlen, int(x.max()), 16)``):
    that call is what the fix edits (the class is right); ``+ 1`` when the index refused is
    the size itself (the largest id passed as the count of ids)."""
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == "self"
    ):
        return None
    built = built_from_parameter(line.frame, call.func.attr, 0, "input_dim")
    if built is None:
        return None
    cls, parameter = built
    site = constructor_argument(cls, parameter, call.func.attr, context)
    if site is None:
        return None
    written = site.frame.segment(site.argument)
    made = site.frame.segment(site.statement)
    if not written or not made or "\n" in made:
        return None
    said = (
        f". {code(site.instance)} was made by {code(made)} ({site.where}), which passes "
        f"{code(written)} as {code(parameter)}, the input_dim of `self.{call.func.attr}`"
    )
    # The message names the first id out of range: the largest one decides the size.
    ids = argument(call, 0, "inputs")
    held = line.operand(segment_of(line, ids) or "") if ids is not None else None
    largest = largest_value(held.value) if held is not None else None
    constant = vocabulary_constant(context, value)
    if constant is not None and not (isinstance(site.argument, ast.Name)):
        name, layer, count = constant
        fixed = rewrite(site.frame, site.statement, site.argument, name)
        if fixed and "\n" not in fixed:
            said += (
                f"; the notebook already holds the vocabulary size: {code(name)} "
                f"({code(f'{layer}.vocabulary_size()')}, {count})"
            )
            return said, code(fixed)
    if value != size or largest != size:
        return said, None
    said += f": the largest id, {size}, where the number of ids, {size + 1}, is needed"
    fixed = rewrite(site.frame, site.statement, site.argument, f"{written} + 1")
    if not fixed or "\n" in fixed:
        return said, None
    return said, code(fixed)


MAX_NAMES_READ = 5000
_VOCABULARY_LAYERS = ("TextVectorization", "StringLookup", "IntegerLookup")


def vocabulary_constant(context: ErrorContext, refused: int) -> tuple[str, str, int] | None:
    """A number written where the notebook names the right one: the one plain int of the
    namespace that equals a vocabulary layer's ``vocabulary_size()`` (``VOCAB = vec.
    vocabulary_size()``) and covers the refused index, as (that name, the layer's name,
    the size). A teacher names the constant, so the layer grows with the vocabulary."""
    sizes: dict[int, str] = {}
    names = list(context.namespace.items())[:MAX_NAMES_READ]
    for name, value in names:
        cls = type(value)
        if name.startswith("_") or cls.__name__ not in _VOCABULARY_LAYERS:
            continue
        if not is_library_class(cls):
            continue
        try:
            size = value.vocabulary_size()
        except Exception:
            continue
        if type(size) is int and size > refused:
            sizes.setdefault(size, name)
    found = [
        (name, sizes[value], value)
        for name, value in names
        if type(value) is int and value in sizes and not name.startswith("_")
    ]
    if len(found) > 1:
        # Several vocabularies: the one whose layer made the ids, read by the statements
        # the error went through (``seq = codes(...)`` feeding ``vec(seq)``).
        statements = [s for s in (f.statement() for f in context.frames()) if s is not None]
        feeding = _names_feeding(statements, context)
        found = [item for item in found if item[1] in feeding]
    return found[0] if len(found) == 1 else None


def _vocabulary_size(
    line: FailingLine, context: ErrorContext, ids: str, ids_node: ast.expr | None, tf: str
) -> str | None:
    """How the fix sizes the Embedding: from the indices when they are a tensor or an
    array (their largest + 1), or written as numbers in the line (``tf.constant([[3, 12]])``:
    13), from the vocabulary layer that made them otherwise (``vectorizer.vocabulary_size()``:
    ``reduce_max`` cannot read a dataset). A vocabulary layer is named only when it made
    the ids: the failing statement uses it, or an assignment to a name that statement reads
    does (``ds = ds.map(lambda t, y: (words(t), y))``); any other one is unrelated."""
    held = line.operand(ids)
    if held is not None and held.kind in ("tensor", "variable", "keras_variable", "array"):
        return f"int({tf}.reduce_max({ids})) + 1"
    written = _largest_written_id(ids_node)
    if written is not None:
        return str(written + 1)
    feeding = _feeding_names(line, context)
    for name, value in list(context.namespace.items())[:MAX_NAMES_READ]:
        cls = type(value)
        if name.startswith("_") or cls.__name__ not in _VOCABULARY_LAYERS or name not in feeding:
            continue
        if is_library_class(cls):
            return f"{name}.vocabulary_size()"
    return None


def _largest_written_id(node: ast.expr | None) -> int | None:
    """The largest id written as numbers: a literal, or a call's literal first argument
    (``tf.constant([[3, 12]])``, ``np.array([...])``)."""
    if isinstance(node, ast.Call) and node.args:
        node = node.args[0]
    if node is None:
        return None
    try:
        literal = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    numbers: list[int] = []
    pending = [literal]
    while pending and len(numbers) <= MAX_NAMES_READ:
        item = pending.pop()
        if type(item) in (list, tuple):
            pending.extend(item)
        elif type(item) is int:
            numbers.append(item)
        else:
            return None
    return max(numbers) if numbers else None


def _feeding_names(line: FailingLine, context: ErrorContext) -> set[str]:
    """The names the failing statement reads, and those read by the assignments (in the
    cells the error went through and the history) to those names."""
    statement = line.statement
    if statement is None:
        return set()
    return _names_feeding([statement], context)


def _names_feeding(statements: list[ast.stmt], context: ErrorContext) -> set[str]:
    """The names ``statements`` read, and those read by the assignments to those names."""
    read = {
        n.id for statement in statements for n in ast.walk(statement) if isinstance(n, ast.Name)
    }
    found = set(read)
    for cell in error_cells(context):
        tree = cell.tree()
        if tree is None:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Assign):
                continue
            targets = {t.id for t in node.targets if isinstance(t, ast.Name)}
            if targets & read:
                found |= {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)}
    return found


INDEX_RANGE = ErrorFamily(
    "an index past the end of a table, an Embedding or a tensor",
    messages=(Message(_GATHER_RANGE), Message(_SLICE_RANGE)),
    read=_read_index_range,
    section=JOINING_SECTION,
    exception_type="InvalidArgumentError",
)


# ------------------------------------------------------------------ one_hot of floats
_ONE_HOT = re.compile(
    r"Value for attr 'TI' of (?P<dtype>\w+) is not in the list of allowed values.*?OneHot",
    re.S,
)


def _read_one_hot(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    tf = tf_alias(context)
    if callee_name(line.call) != "one_hot":
        return None
    indices_node = argument(line.call, 0, "indices")
    indices = segment_of(line, indices_node)
    if indices_node is None or not indices:
        return None
    rule = (
        f"{tf}.one_hot takes class numbers as integers (int32 or int64), but {code(indices)} "
        f"is {error.group('dtype')}"
    )
    fixed = _fixed_call(line, indices_node, f"{tf}.cast({indices}, {tf}.int32)")
    fix = f"cast the labels, {code(fixed)}" if fixed else None
    return Finding(rule + ".", fix, section="dtype-casting")


ONE_HOT = ErrorFamily(
    "one_hot of float labels",
    messages=(Message(_ONE_HOT),),
    read=_read_one_hot,
    section="dtype-casting",
)


# ------------------------------------------------------------------ top_k
_TOP_K = re.compile(r"input must have at least k columns\. Had (?P<have>\d+), needed (?P<k>\d+)")


def _read_top_k(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    if callee_name(line.call) != "top_k":
        return None
    input_node = argument(line.call, 0, "input")
    k_node = argument(line.call, 1, "k")
    source = segment_of(line, input_node)
    if input_node is None or k_node is None or not source:
        return None
    have, k = error.group("have"), segment_of(line, k_node)
    described = operand_of(input_node, line, context)
    shape = f" {show_shape(described.shape)}" if described and described.shape else ""
    rule = (
        f"top_k picks the k largest entries along the last axis, which has {have} entries in "
        f"{code(source)}{shape}, fewer than k = {error.group('k')}"
    )
    fix = None
    if is_postfix_safe(input_node):
        fixed = _fixed_call(line, k_node, f"min({k}, {source}.shape[-1])")
        if fixed:
            fix = (
                f"ask for at most {have} (to pick along another axis, transpose it to the "
                f"last position first), {code(fixed)}"
            )
    return Finding(rule + ".", fix, section=JOINING_SECTION)


TOP_K = ErrorFamily(
    "top_k larger than the last axis",
    messages=(Message(_TOP_K),),
    read=_read_top_k,
    section=JOINING_SECTION,
)


# ------------------------------------------------------------------ transpose
_TRANSPOSE = re.compile(
    r"transpose expects a vector of size (?P<rank>\d+)\. But input\(1\) is a vector of size "
    r"(?P<given>\d+)"
)


def _read_transpose(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    if callee_name(line.call) != "transpose":
        return None
    tensor_node = argument(line.call, 0, "a")
    perm_node = argument(line.call, 1, "perm")
    tensor = segment_of(line, tensor_node)
    if perm_node is None or not tensor:
        return None
    rank, given = int(error.group("rank")), int(error.group("given"))
    described = operand_of(tensor_node, line, context) if tensor_node is not None else None
    shape = f" {show_shape(described.shape)}" if described and described.shape else ""
    rule = (
        f"perm lists every axis of {code(tensor)}{shape} once, in its new order: {rank} axes "
        f"need {rank} entries, but {code(segment_of(line, perm_node))} has {given}"
    )
    fix = None
    if rank >= 2:
        swapped = [*range(rank - 2), rank - 1, rank - 2]
        fixed = _fixed_call(line, perm_node, str(swapped))
        if fixed:
            fix = f"to swap its last two axes, {code(fixed)}"
            if given > rank:
                fix = f"to add an axis, use {tf_alias(context)}.expand_dims first; " + fix
    return Finding(rule + ".", fix, section=JOINING_SECTION)


TRANSPOSE = ErrorFamily(
    "a transpose permutation of another length than the rank",
    messages=(Message(_TRANSPOSE),),
    read=_read_transpose,
    section=JOINING_SECTION,
)


# ------------------------------------------------------------------ softmax cross-entropy
_XENT = re.compile(
    r"logits and labels must be (?:broadcastable|same size): logits_size=\[(?P<logits>[\d,]*)\] "
    r"labels_size=\[(?P<labels>[\d,]*)\]"
)
_XENT_DTYPE = re.compile(
    r"cannot compute SoftmaxCrossEntropyWithLogits as input #1\(zero-based\) was expected to "
    r"be a \w+ tensor but is a (?P<dtype>\w+) tensor"
)


def _read_cross_entropy(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    tf = tf_alias(context)
    call = line.call
    if callee_name(call) != "softmax_cross_entropy_with_logits":
        return None
    labels_node = argument(call, 0, "labels")
    logits_node = argument(call, 1, "logits")
    if labels_node is None or logits_node is None:
        return None
    labels = operand_of(labels_node, line, context)
    logits = operand_of(logits_node, line, context)
    if labels is None or logits is None or labels.shape is None or logits.shape is None:
        return None
    if not (labels.dtype or "").startswith(("int", "uint")):
        rule = (
            f"softmax_cross_entropy_with_logits wants labels shaped like the logits, one "
            f"probability per class: {code(labels.source)} is {show_shape(labels.shape)} and "
            f"{code(logits.source)} is {show_shape(logits.shape)}"
        )
        return Finding(rule + ".", None, section="labels-and-loss")
    rule = (
        f"softmax_cross_entropy_with_logits wants one probability per class (labels shaped "
        f"like {code(logits.source)} {show_shape(logits.shape)}), but {code(labels.source)} is "
        f"{show_shape(labels.shape)} {labels.dtype}: class numbers"
    )
    fix = None
    if isinstance(call, ast.Call) and len(labels.shape) + 1 == len(logits.shape):
        func = segment_of(line, call.func)
        sparse = func[: -len("softmax_cross_entropy_with_logits")] + "sparse_"
        fixed = _fixed_call(line, call.func, sparse + "softmax_cross_entropy_with_logits")
        if fixed:
            fix = f"for class numbers use the sparse version, {code(fixed)}"
            if logits.shape[-1] is not None:
                hot = f"{tf}.one_hot({labels.source}, {logits.shape[-1]})"
                fix = (
                    f"pass one-hot labels, labels={code(hot)}, or, for class numbers, the "
                    f"sparse version: {code(fixed)}"
                )
    return Finding(rule + ".", fix, section="labels-and-loss")


CROSS_ENTROPY = ErrorFamily(
    "class numbers given to softmax_cross_entropy_with_logits",
    messages=(Message(_XENT), Message(_XENT_DTYPE)),
    read=_read_cross_entropy,
    section="labels-and-loss",
)


# ------------------------------------------------------------------ casting strings
_CAST_STRING = re.compile(r"Cast string to (?P<dtype>\w+) is not supported")
_TO_NUMBER = ("float32", "float64", "int32", "int64")


def _read_cast_string(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    tf = tf_alias(context)
    if callee_name(line.call) != "cast":
        return None
    value_node = argument(line.call, 0, "x")
    source = segment_of(line, value_node)
    if value_node is None or not source:
        return None
    dtype = error.group("dtype")
    rule = (
        f"tf.cast changes the type of numbers; it does not read text, and {code(source)} "
        f"holds strings. Numbers written as text are parsed with {tf}.strings.to_number; "
        f"words (categories) are mapped to ids with a StringLookup layer"
    )
    fix = None
    if dtype in _TO_NUMBER and line.call is not None:
        fixed = _fixed_call(
            line, line.call, f"{tf}.strings.to_number({source}, out_type={tf}.{dtype})"
        )
        if fixed:
            fix = f"to parse numbers, {code(fixed)}"
    return Finding(rule + ".", fix, section="dtype-casting")


CAST_STRING = ErrorFamily(
    "cast of strings to numbers",
    messages=(Message(_CAST_STRING),),
    read=_read_cast_string,
    section="dtype-casting",
    exception_type="UnimplementedError",
)


# ------------------------------------------------------------------ indexing by a tensor
_TENSOR_INDEX = re.compile(
    r"Only integers, slices \(`:`\), ellipsis \(`\.\.\.`\), tf\.newaxis \(`None`\) and scalar "
    r"tf\.int32/tf\.int64 tensors are valid indices, got (?P<got>.{0,200})",
    re.S,
)


def _index_operand(
    subscript: ast.Subscript, line: FailingLine, context: ErrorContext
) -> tuple[int, ast.expr, Operand] | None:
    """The position and node of the index that is a tensor or array of several values
    (``idx`` in ``x[idx]``, in ``x[:, idx]`` at position 1)."""
    parts = subscript.slice.elts if isinstance(subscript.slice, ast.Tuple) else [subscript.slice]
    for position, part in enumerate(parts):
        if isinstance(part, ast.Slice):
            continue
        described = operand_of(part, line, context) or _sliced_index(part, line, context)
        if described is not None and described.shape:
            return position, part, described
        if isinstance(part, ast.List):
            return position, part, Operand(segment_of(line, part), "list", "a list")
    return None


def _sliced_index(node: ast.expr, line: FailingLine, context: ErrorContext) -> Operand | None:
    """An index written as a constant slice of an array or tensor (``pairs[:, 0]``, a
    column of ids): its shape worked out from the array's, never running the indexing."""
    if not isinstance(node, ast.Subscript):
        return None
    base = operand_of(node.value, line, context)
    if base is None or base.shape is None or base.dtype is None:
        return None
    shape = indexed_shape(node, line.frame, context)
    source = segment_of(line, node)
    if not shape or not source or "\n" in source:
        return None
    sliced = tuple(shape)
    words = base.description.replace(show_shape(base.shape), show_shape(sliced), 1)
    return Operand(source, base.kind, words, sliced, base.dtype)


def _read_tensor_index(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    tf = tf_alias(context)
    subscript = line.call if isinstance(line.call, ast.Subscript) else None
    if subscript is None or not is_postfix_safe(subscript.value):
        return None
    found = _index_operand(subscript, line, context)
    if found is None:
        return None
    position, _node, index = found
    parts = subscript.slice.elts if isinstance(subscript.slice, ast.Tuple) else [subscript.slice]
    indexed = segment_of(line, subscript.value)
    paired = _row_numbers_then_index(subscript, parts, line, context)
    if paired is not None:
        # ``x[np.arange(n), idx]``: NumPy's per-row pick, written for a tensor.
        index, rows, kept = paired
        rule = (
            f"Square brackets on a tensor take integers, slices and scalar integer tensors "
            f"only; {code(segment_of(line, subscript.slice))} pairs each row number of "
            f"{code(indexed)} with one entry of {code(index.source)}, {index.description}: "
            f"one index per row ({rows} rows), which tf.gather takes along axis 1 with "
            f"batch_dims=1 (shape {show_shape(kept)})"
        )
        fix = code(f"{tf}.gather({indexed}, {index.source}, axis=1, batch_dims=1)")
        return Finding(rule + ".", fix, section=JOINING_SECTION)
    rule = (
        f"Square brackets on a tensor take integers, slices and scalar integer tensors only; "
        f"{code(index.source)} is {index.description}"
    )
    earlier_full = all(
        isinstance(p, ast.Slice) and p.lower is None and p.upper is None and p.step is None
        for p in parts[:position]
    )
    fix = None
    if len(parts) == position + 1 and earlier_full and "\n" not in index.source:
        axis = f", axis={position}" if position else ""
        per_row = _one_index_per_row(subscript.value, position, index, line, context)
        if per_row is not None:
            rows, kept = per_row
            rule += (
                f", one per row of {code(indexed)} ({rows} indices for {rows} rows): "
                f"to pick {code(f'{indexed}[i, {index.source}[i]]')} for each row, gather "
                f"along axis {position} with batch_dims=1 (shape {show_shape(kept)}); "
                f"without batch_dims, tf.gather gives every row all {rows} indices"
            )
            fix = f"{code(f'{tf}.gather({indexed}, {index.source}{axis}, batch_dims=1)')}"
        else:
            rule += f", several indices: pick them along axis {position} with tf.gather"
            fix = f"{code(f'{tf}.gather({indexed}, {index.source}{axis})')}"
    return Finding(rule + ".", fix, section=JOINING_SECTION)


def _row_numbers_then_index(
    subscript: ast.Subscript, parts: list[ast.expr], line: FailingLine, context: ErrorContext
) -> tuple[Operand, int, tuple[int | None, ...]] | None:
    """(the index, rows, the pick's shape) for ``x[np.arange(n), idx]`` (``tf.range``,
    ``range``) with ``idx`` one integer per row of ``x``."""
    if len(parts) != 2 or not isinstance(parts[0], ast.Call):
        return None
    func = parts[0].func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in ("arange", "range") or len(parts[0].args) != 1 or parts[0].keywords:
        return None
    index = operand_of(parts[1], line, context)
    if index is None or "\n" in index.source:
        return None
    per_row = _one_index_per_row(subscript.value, 1, index, line, context)
    return (index, *per_row) if per_row is not None else None


def _one_index_per_row(
    indexed: ast.expr, position: int, index: Operand, line: FailingLine, context: ErrorContext
) -> tuple[int, tuple[int | None, ...]] | None:
    """(rows, the per-row pick's shape) when ``x[:, idx]`` has one integer index per row of
    ``x``: ``idx`` (n,) and ``x`` (n, k, ...) with k != n. A NumPy habit reads such a line
    as "row i takes column idx[i]"; the plain gather would give an (n, n) result instead.
    A square axis (k == n) leaves the intent open, so it is not read."""
    if position < 1 or index.shape is None or len(index.shape) != 1:
        return None
    if not (index.dtype or "").startswith(("int", "uint")):
        return None
    held = operand_of(indexed, line, context)
    shape = held.shape if held is not None else None
    if shape is None or len(shape) <= position:
        return None
    rows = shape[0]
    if rows is None or rows < 2 or index.shape[0] != rows or shape[position] in (rows, None):
        return None
    return rows, (*shape[:position], *shape[position + 1 :])


TENSOR_INDEX = ErrorFamily(
    "a tensor indexed by several indices",
    messages=(Message(_TENSOR_INDEX),),
    read=_read_tensor_index,
    section=JOINING_SECTION,
    exception_type="TypeError",
)
