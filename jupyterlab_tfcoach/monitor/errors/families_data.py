"""Error families about data pipelines and graph loops (see ``family_record.py`` for a
family's shape): batching dataset elements of different shapes, a loop variable whose
shape or dtype changes in a loop AutoGraph converts, and arguments that do not fit a library
function or a dataset's elements (read in ``calls.py``), ``fit`` given x and y of
different lengths, and ragged Python lists made into a tensor or a dataset.

Each family's record sits after its reading code; ``families.FAMILIES`` lists them in
the order they are tried.
"""

from __future__ import annotations

import ast
import re
import sys

from jupyterlab_tfcoach.monitor.errors.calls import explain_call_arguments
from jupyterlab_tfcoach.monitor.errors.cell_sources import (
    SourceCell,
    assignments_in_cells,
    cell_frame,
)
from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    code,
    is_postfix_safe,
    one_line_code,
    rewrite,
    rewrite_all,
    value_kind,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, describe, show_shape
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
from jupyterlab_tfcoach.monitor.errors.loop_accumulators import accumulator_start

# ------------------------------------------------------------------ batching sequences
_BATCH_SHAPES = re.compile(
    r"Cannot batch tensors with different shapes in component (?P<component>\d+)\. First "
    r"element had shape \[(?P<first>[\d,]*)\] and element (?P<index>\d+) had shape "
    r"\[(?P<other>[\d,]*)\]"
)


def _read_uneven_batch(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    first, other = shape_list(error.group("first")), shape_list(error.group("other"))
    if first is None or other is None:
        return None
    batch = next(
        (
            node
            for part in line.frame.header()
            for node in ast.walk(part)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "batch"
        ),
        None,
    )
    rule = (
        f".batch(n) stacks elements into one tensor, so all must have one shape, but one "
        f"element is {show_shape(first)} and another {show_shape(other)}: sequences of "
        f"different lengths. padded_batch pads each batch to its longest element (with 0), "
        f"ragged_batch makes a tf.RaggedTensor"
    )
    if batch is None:
        return Finding(rule + ".", _batched_earlier(line, context))
    dataset = batch.func.value  # type: ignore[attr-defined]
    origin = _built_from(dataset, line, context)
    if origin:
        rule += f". {origin}"
    whole = segment_of(line, batch)
    receiver = segment_of(line, dataset)
    fixed = f"{receiver}.padded_batch{whole[len(receiver) + len('.batch') :]}"
    fix = f"pad each batch, in place of {code(whole)}: {code(fixed)}" if receiver else None
    return Finding(rule + ".", fix)


def _batched_earlier(line: FailingLine, context: ErrorContext) -> str | None:
    """``batched = seq_ds.batch(4)`` made the dataset the failing line reads (in the
    running cell before it, else in the cells): that statement with ``padded_batch``."""
    names = [
        node.id
        for part in line.frame.header()
        for node in ast.walk(part)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    ]
    tree = line.frame.tree()
    for name in names:
        found, value = context.lookup(name, line.frame)
        if not found or value_kind(value) != "dataset":
            continue
        candidates: list[tuple[ast.Assign, CellFrame, str]] = [
            (node, line.frame, "this cell")
            for node in (tree.body if tree is not None else [])
            if isinstance(node, ast.Assign)
            and node.lineno < line.frame.position.line
            and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
        ][-1:]
        if not candidates:
            for cell, statement in assignments_in_cells(name, context):
                candidates = [(statement, cell_frame(cell), cell.label)]
                break
        for statement, frame, where in candidates:
            call = statement.value
            if not (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr == "batch"
            ):
                return None
            receiver = frame.segment(call.func.value) or ""
            whole = frame.segment(call) or ""
            fixed = rewrite(
                frame, statement, call, f"{receiver}.padded_batch{whole[len(receiver) + 6 :]}"
            )
            if not receiver or not fixed or "\n" in fixed:
                return None
            return (
                f"pad each batch where {code(name)} is made (line {statement.lineno} of "
                f"{where}): {code(fixed)}"
            )
    return None


def _built_from(dataset: ast.expr, line: FailingLine, context: ErrorContext) -> str | None:
    """``seq_ds`` is built from ``token_lists`` (a list of ...): the Python lists its
    defining statement reads, found in the cells the error went through."""
    if not isinstance(dataset, ast.Name):
        return None
    for frame in context.frames():
        tree = frame.tree()
        if tree is None:
            continue
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Assign)
                and any(
                    isinstance(target, ast.Name) and target.id == dataset.id
                    for target in node.targets
                )
            ):
                continue
            lists = []
            for inner in ast.walk(node.value):
                if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load):
                    found, value = context.lookup(inner.id, frame)
                    described = describe(inner.id, value) if found else None
                    if described is not None and described.kind == "list":
                        lists.append(f"{code(inner.id)} ({described.description})")
            if lists:
                return f"{code(dataset.id)} is built from " + " and ".join(lists[:2])
    return None


UNEVEN_BATCH = ErrorFamily(
    "batching elements of different shapes",
    messages=(Message(_BATCH_SHAPES),),
    read=_read_uneven_batch,
    section="tf-data",
)


# ------------------------------------------------------------------ loop variables
_LOOP_SHAPE = re.compile(
    r"'(?P<name>\w+)' has shape (?P<before>\([^)]*\)) before the loop, but shape "
    r"(?P<after>\([^)]*\)) after one iteration"
)


def _read_loop_shape(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    name, before, after = error.group("name"), error.group("before"), error.group("after")
    tf = tf_alias(context)
    statement = line.statement
    rank = len(shape_list(before.strip("()")) or ())
    loop = ""
    growth = ""
    if isinstance(statement, (ast.For, ast.While)):
        header = segment_of(
            line, statement.iter if isinstance(statement, ast.For) else statement.test
        )
        loop = f"`for ... in {header}:`" if isinstance(statement, ast.For) else f"`while {header}:`"
        for child in ast.walk(statement):
            if (
                isinstance(child, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == name for t in child.targets)
                and isinstance(child.value, ast.Call)
            ):
                growth = (
                    f" ({code(segment_of(line, child.value.func))} on line {child.lineno} grows it)"
                )
                break
    rule = (
        f"AutoGraph turns {loop or 'a loop over a tensor'} into a tf.while_loop, whose loop "
        f"variables must keep one shape: {code(name)} is {before} before the loop and "
        f"{after} after one iteration{growth}. Collect values in a tf.TensorArray and "
        f".stack() it, or declare that the size varies"
    )
    invariant = f"{tf}.TensorShape([{', '.join(['None'] * rank)}])"
    fixed = (
        f"{tf}.autograph.experimental.set_loop_options(shape_invariants=[({name}, {invariant})])"
    )
    fix = None
    if isinstance(statement, (ast.For, ast.While)) and statement.body:
        # Where it goes, by line number: the span alone is no edit a learner can place.
        cell = re.search(r" of (this cell|cell In\[\d+\])", line.where)
        place = f"line {statement.body[0].lineno}" + (
            "" if cell is None or cell.group(1) == "this cell" else f" of {cell.group(1)}"
        )
        fix = f"put {code(fixed)} before {place}, as the first line of the loop's body"
    return Finding(rule + ".", fix)


LOOP_SHAPE = ErrorFamily(
    "a loop variable whose shape changes in a graph loop",
    messages=(Message(_LOOP_SHAPE),),
    read=_read_loop_shape,
    section="python-loops",
)


_LOOP_DTYPE = re.compile(
    r"'(?P<name>\w+)' has dtype (?P<before>\w+) before the loop, but dtype (?P<after>\w+) "
    r"after one iteration"
)
_INTEGER_DTYPES = ("int", "uint")
_FLOAT_DTYPES = ("float", "bfloat", "half")


def _read_loop_dtype(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    """An integer loop variable given floats (``total = 0``, then ``total =
    tf.reduce_sum(x)`` in the loop): the fix starts it as a float where it starts
    (``loop_accumulators.py``); a cast inside the loop would meet the same rule."""
    name, before, after = error.group("name"), error.group("before"), error.group("after")
    rule = (
        "AutoGraph turns a loop over a tensor or a dataset into a graph loop, whose loop "
        f"variables keep one dtype: {code(name)} is {before} before the loop and {after} "
        "after one iteration"
    )
    if not (before.startswith(_INTEGER_DTYPES) and after.startswith(_FLOAT_DTYPES)):
        return Finding(rule + f". Start {code(name)} with the dtype the loop gives it.", None)
    start = accumulator_start(line.frame, name, after, tf_alias(context))
    if start is None:
        return Finding(rule + f". Start {code(name)} as a float before the loop.", None)
    rule += (
        f". It starts as an integer, {code(start.statement)} on line {start.line}: start "
        "it as a float instead"
    )
    return Finding(rule + ".", code(start.fixed))


LOOP_DTYPE = ErrorFamily(
    "a loop variable whose dtype changes in a graph loop",
    messages=(Message(_LOOP_DTYPE),),
    read=_read_loop_dtype,
    section="python-loops",
)


# ------------------------------------------------------------------ x and y of different lengths
_CARDINALITY = re.compile(
    r"Data cardinality is ambiguous.*?'x' sizes: (?P<x>[\d, ]+?)\s*'y' sizes: (?P<y>[\d, ]+)",
    re.S,
)
_FIT_METHODS = ("fit", "evaluate", "train_on_batch", "test_on_batch", "predict")


def _fit_call(line: FailingLine) -> tuple[ast.Call, ast.expr, ast.expr] | None:
    """``model.fit(x, y, ...)`` on the failing line: the call, its x and its y."""
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in _FIT_METHODS
    ):
        return None
    given = {keyword.arg: keyword.value for keyword in call.keywords if keyword.arg}
    x = call.args[0] if call.args else given.get("x")
    y = call.args[1] if len(call.args) > 1 else given.get("y")
    return (call, x, y) if x is not None and y is not None else None


def _read_cardinality(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    found = _fit_call(line)
    if found is None:
        return None
    call, x_node, y_node = found
    x_sizes, y_sizes = shape_list(error.group("x")), shape_list(error.group("y"))
    if not x_sizes or not y_sizes:
        return None
    x, y = segment_of(line, x_node), segment_of(line, y_node)
    if len(x_sizes) != 1 or len(y_sizes) != 1 or not x or not y:
        return None
    x_size, y_size = x_sizes[0], y_sizes[0]
    method = call.func.attr  # type: ignore[attr-defined]
    weights = _SAMPLE_WEIGHT_SIZES.search(error.parsed.message)
    if x_size == y_size:
        # x and y agree: the odd one out is the weights (read, never blamed on x and y).
        if weights is None or weights.group("size") == str(x_size):
            return None
        return _per_label_weights(call, y_node, int(weights.group("size")), x_size, line, context)
    rule = (
        f"{method} pairs example i of x with label i of y, so both need the same length on "
        f"axis 0, but {code(x)} holds {x_size} examples and {code(y)} {y_size}"
    )
    fix = None
    longer = x_node if (x_size or 0) > (y_size or 0) else y_node
    shorter_size = min(x_size or 0, y_size or 0)
    if is_postfix_safe(longer) and shorter_size:
        longer_source = segment_of(line, longer)
        fixed = rewrite(line.frame, call, longer, f"{longer_source}[:{shorter_size}]")
        if fixed and "\n" not in fixed:
            fix = (
                f"find where they diverged (a filter or split applied to one only); if their "
                f"first {shorter_size} rows belong together, {code(fixed)}"
            )
    return Finding(rule + ".", fix)


_SAMPLE_WEIGHT_SIZES = re.compile(r"'sample_weight' sizes: (?P<size>\d+)")


def _per_label_weights(
    call: ast.Call,
    y_node: ast.expr,
    size: int,
    examples: int | None,
    line: FailingLine,
    context: ErrorContext,
) -> Finding | None:
    """``fit(x, y, sample_weight=w)`` with one weight per class or label (``w`` of length
    ``y.shape[-1]``, or one per class id), where fit wants one per example. The fix gives
    each example its own weight from ``w``: the weight of its class (a gather for integer
    labels, ``y @ w`` for one-hot rows), or for multi-hot rows the largest weight among
    its labels (1 where it has none)."""
    node = next((k.value for k in call.keywords if k.arg == "sample_weight"), None)
    if node is None:
        return None
    weights, labels = segment_of(line, node), segment_of(line, y_node)
    y = operand_of(y_node, line, context)
    if not weights or not labels or y is None or not y.shape:
        return None
    other = _built_from_other_rows(node, size, call, line, context)
    if other is not None:
        return other
    if len(y.shape) == 1 and not _table_for_labels(y.value, size):
        # Not one weight per class (some label has no entry): say only what is known.
        rule = (
            f"`sample_weight` gives each example (row of x) its own weight, so it needs "
            f"{examples} entries, but {code(weights)} has {size}"
        )
        return Finding(rule + ".", None)
    rule = (
        f"`sample_weight` gives each example (row of x) its own weight, so it needs "
        f"{examples} entries, but {code(weights)} has {size}: one per "
        f"{'label' if len(y.shape) == 2 else 'class'}"
    )
    np = context.module_alias("numpy", "np")
    table = f"{np}.asarray({weights})"
    fixed_weights = None
    if len(y.shape) == 1 and y.dtype is not None and "int" in y.dtype:
        rule += ", and each example takes the weight of its own class"
        fixed_weights = f"{table}[{labels}]"
    elif len(y.shape) == 2 and y.shape[1] == size:
        if _one_hot_rows(y.value):
            rule += ", and each one-hot row picks the weight of its class"
            fixed_weights = f"{labels} @ {table}"
        else:
            rule += (
                ", and a row can have several labels: weight each example by the largest "
                "weight among its labels (1 for a row with none); a weight per label inside "
                "the loss needs a loss function written with those weights"
            )
            fixed_weights = f"{np}.max({np}.where({labels} > 0, {table}, 1.0), axis=1)"
    if fixed_weights is None:
        return Finding(rule + ".", None)
    fixed = rewrite(line.frame, line.statement or call, node, fixed_weights)
    return Finding(rule + ".", code(fixed) if fixed and "\n" not in fixed else None)


_MAX_LABELS = 10_000_000
_MAX_NAMES = 400


def _table_for_labels(labels: object, size: int) -> bool:
    """Whether a table of ``size`` weights can be indexed by every label (a NumPy array of
    integer labels whose largest is below ``size``); a tensor is not read: True."""
    numpy = sys.modules.get("numpy")
    if numpy is None or type(labels) is not numpy.ndarray:
        return True
    try:
        if labels.size == 0 or labels.size > _MAX_LABELS or labels.dtype.kind not in "iu":
            return True
        return int(labels.max()) < size
    except Exception:
        return True


def _length(value: object) -> int | None:
    """The first-axis length of a NumPy array or a tensor (shape read, nothing computed)."""
    shape = (
        getattr(value, "shape", None)
        if type(value).__module__.startswith(("numpy", "tensorflow"))
        else None
    )
    try:
        return int(shape[0]) if shape is not None and len(shape) and shape[0] is not None else None
    except Exception:
        return None


def _built_from_other_rows(
    node: ast.expr, size: int, call: ast.Call, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """Weights with as many entries as another of the learner's arrays (the validation
    labels): built from those rows, not from the examples fit trains on. Read from the
    statement that made the weights (``sw = table[y_va]``): the array of that length it
    names, swapped for fit's own labels (or x) of the same kind in the fix."""
    if not isinstance(node, ast.Name):
        return None
    found = _fit_call(line)
    if found is None:
        return None
    _, x_node, y_node = found
    for cell, statement in assignments_in_cells(node.id, context):
        names = [n for n in ast.walk(statement.value) if isinstance(n, ast.Name)]
        for name in names[:_MAX_NAMES]:
            if name.id == node.id:
                continue
            present, value = context.lookup(name.id, None)
            if not present or _length(value) != size:
                continue
            return _other_rows_finding(
                node.id, name, value, size, x_node, y_node, cell, statement, line, context
            )
        return None
    return None


def _other_rows_finding(
    weights: str,
    source: ast.Name,
    value: object,
    size: int,
    x_node: ast.expr,
    y_node: ast.expr,
    cell: SourceCell,
    statement: ast.Assign,
    line: FailingLine,
    context: ErrorContext,
) -> Finding:
    x, y = segment_of(line, x_node), segment_of(line, y_node)
    x_operand = operand_of(x_node, line, context)
    examples = x_operand.shape[0] if x_operand is not None and x_operand.shape else None
    written = cell.segment(statement) or ""
    made = f" ({code(written)} in {cell.label})" if written and "\n" not in written else ""
    rule = (
        f"{code(weights)} has {size} entries, as many as {code(source.id)}: it was built "
        f"from {code(source.id)}{made}, but fit trains on the {examples} examples of "
        f"{code(x)} and {code(y)}, and `sample_weight` gives each of those its own weight"
    )
    replacement = None
    y_value = operand_of(y_node, line, context)
    x_value = x_operand
    for candidate, operand in ((y_node, y_value), (x_node, x_value)):
        if not isinstance(candidate, ast.Name) or operand is None or operand.shape is None:
            continue
        same_rank = len(operand.shape) == len(getattr(value, "shape", ()) or ())
        if not same_rank or _dtype_kind(operand.value) != _dtype_kind(value):
            continue
        # Sure only when the two are the same data's splits: labels indexing a table of
        # weights (``table[y_va]`` for ``y_tr``), or names of one stem (``y_va``, ``y_tr``).
        indexed = any(
            isinstance(n, ast.Subscript)
            and isinstance(n.slice, ast.Name)
            and n.slice.id == source.id
            for n in ast.walk(statement.value)
        )
        if (indexed and _dtype_kind(value) == "int") or _same_stem(source.id, candidate.id):
            replacement = candidate.id
        break
    if replacement is None:
        return Finding(rule + f": build {code(weights)} from the training rows.", None)
    frame = cell_frame(cell)
    fixed = rewrite_all(
        frame,
        statement,
        [
            (n, replacement)
            for n in ast.walk(statement.value)
            if isinstance(n, ast.Name) and n.id == source.id
        ],
    )
    if not fixed or "\n" in fixed:
        return Finding(rule + f": build {code(weights)} from the training rows.", None)
    rule += f": build it from {code(replacement)}, then run the fit again"
    return Finding(rule + ".", code(fixed))


def _same_stem(one: str, other: str) -> bool:
    """``y_va`` and ``y_tr``, ``kinds_val`` and ``kinds_train``: one name, two splits."""
    size = 0
    for left, right in zip(one, other, strict=False):
        if left != right:
            break
        size += 1
    stem = one[:size]
    return len(stem) >= 2 and stem.endswith("_") and one != other


def _dtype_kind(value: object) -> str | None:
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return None
    name = getattr(dtype, "name", None) or str(dtype)
    if type(name) is not str:
        return None
    return "int" if "int" in name else "float" if "float" in name else name


def _one_hot_rows(value: object) -> bool:
    """Every row of a NumPy array sums to 1 (a tensor is not read: False)."""
    numpy = sys.modules.get("numpy")
    if numpy is None or type(value) is not numpy.ndarray:
        return False
    try:
        return bool((value.sum(axis=1) == 1).all())
    except Exception:
        return False


# ``from_tensor_slices((features, labels))`` with parts of different lengths.
_SLICES = re.compile(r"Dimensions (?P<x>\d+) and (?P<y>\d+) are not compatible")


def _read_slices(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    """``Dataset.from_tensor_slices((x, y))`` (or a dict) whose parts differ on axis 0: the
    two parts of those lengths, named as written (a part whose shape cannot be read takes
    the length no other part has); fix, the longer cut to the shorter's length."""
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "from_tensor_slices"
        and call.args
        and isinstance(call.args[0], (ast.Tuple, ast.Dict))
    ):
        return None
    sizes = (int(error.group("x")), int(error.group("y")))
    given = call.args[0]
    elements = list(given.elts if isinstance(given, ast.Tuple) else given.values)
    if len(elements) < 2 or sizes[0] == sizes[1]:
        return None
    lengths: list[int | None] = []
    for node in elements:
        operand = operand_of(node, line, context)
        lengths.append(operand.shape[0] if operand is not None and operand.shape else None)
    picked: list[ast.expr] = []
    for size in sizes:
        known = [node for node, n in zip(elements, lengths, strict=True) if n == size]
        unknown = [node for node, n in zip(elements, lengths, strict=True) if n is None]
        choice = known if known else unknown
        if len(choice) != 1 or choice[0] in picked:
            return None
        picked.append(choice[0])
    sources = [segment_of(line, node) for node in picked]
    if not all(sources) or any("\n" in source for source in sources):
        return None
    rule = (
        "from_tensor_slices cuts every part it is given along axis 0 into one element per "
        f"row, so the parts need the same length there, but {code(sources[0])} has "
        f"{sizes[0]} rows and {code(sources[1])} {sizes[1]}"
    )
    longer = 0 if sizes[0] > sizes[1] else 1
    long_node, long_source = picked[longer], sources[longer]
    short_size = min(sizes)
    fixed = (
        rewrite(line.frame, call, long_node, f"{long_source}[:{short_size}]")
        if is_postfix_safe(long_node) and short_size
        else None
    )
    if not fixed or "\n" in fixed:
        return Finding(rule + ".", None, section="tf-data")
    fix = (
        f"find where they diverged (a filter or split applied to one only); if their "
        f"first {short_size} rows belong together, {code(fixed)}"
    )
    return Finding(rule + ".", fix, section="tf-data")


def _read_uneven(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    if error.matched(_SLICES):
        return _read_slices(error, line, context)
    return _read_cardinality(error, line, context)


UNEVEN_XY = ErrorFamily(
    "x and y of different lengths",
    messages=(Message(_CARDINALITY), Message(_SLICES)),
    read=_read_uneven,
    section="batch-dimension",
    exception_type="ValueError",
)


# ------------------------------------------------------------------ ragged Python lists
_RAGGED = re.compile(r"Can't convert non-rectangular Python sequence to Tensor")
# NumPy's own refusal (``np.array(token_lists)``): no TensorFlow frame, so it is claimed
# only in a notebook that holds TensorFlow or Keras, for rows of plain numbers.
_NUMPY_RAGGED = re.compile(
    r"setting an array element with a sequence\. The requested array has an inhomogeneous "
    r"shape"
)
# Enough rows to see two lengths, few enough to stay within the error budget.
_MAX_ROWS = 1000
_MAX_ITEMS = 50


def _row_lengths(value: object) -> list[int] | None:
    """The lengths of a list's rows when they are lists or tuples of plain numbers."""
    if type(value) not in (list, tuple) or not value:
        return None
    lengths = []
    for row in value[:_MAX_ROWS]:  # type: ignore[index]
        if type(row) not in (list, tuple):
            return None
        if not all(type(item) in (int, float, bool) for item in row[:_MAX_ITEMS]):
            return None
        lengths.append(len(row))
    return lengths


def _ragged_parts(
    node: ast.expr, line: FailingLine, context: ErrorContext
) -> list[tuple[ast.expr, list[int] | None]]:
    """Every argument (or element of a tuple argument) that is a ragged list: its node and
    its rows' lengths (None when its rows are nested deeper). All of them, because
    ``from_tensor_slices((texts, labels))`` with both ragged fails again when the fix
    converts only the first."""
    parts = node.elts if isinstance(node, ast.Tuple) else [node]
    found: list[tuple[ast.expr, list[int] | None]] = []
    for part in parts:
        if isinstance(part, ast.List) and all(isinstance(e, ast.List) for e in part.elts):
            literal = [len(row.elts) for row in part.elts]  # type: ignore[attr-defined]
            if len(set(literal)) > 1:
                found.append((part, literal))
            continue
        described = operand_of(part, line, context)
        if described is None or described.kind != "list":
            continue
        lengths = _row_lengths(described.value)
        if lengths is not None and len(set(lengths)) > 1:
            found.append((part, lengths))
        elif (
            lengths is None
            and type(described.value) in (list, tuple)
            and not _same_shapes(described.value)
        ):
            found.append((part, None))
    return found


def _same_shapes(items: list[object] | tuple[object, ...]) -> bool:
    """Whether every item (of the first ones) is an array or tensor of one shape: such a
    list converts as it is, it is not a ragged part."""
    shapes = set()
    for item in items[:_MAX_ROWS]:
        shape = getattr(item, "shape", None)
        if type(shape).__name__ not in ("tuple", "TensorShape"):
            return False
        try:
            shapes.add(tuple(shape))
        except Exception:
            return False
    return len(shapes) == 1


def _arrays_in_a_list(node: ast.expr, line: FailingLine, context: ErrorContext) -> bool:
    """``[features, labels]``: a list literal of arrays or tensors of different shapes,
    which TensorFlow reads as ONE tensor to stack (the learner meant a pair). The entry
    already describes each of them."""
    if not isinstance(node, ast.List) or len(node.elts) < 2:
        return False
    described = [operand_of(item, line, context) for item in node.elts]
    shapes = {d.shape if d is not None else None for d in described}
    return None not in shapes and len(shapes) > 1


def _read_ragged(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    tf = tf_alias(context)
    call = line.call
    if not isinstance(call, ast.Call) or not call.args:
        return None
    listed = call.args[0]
    if isinstance(listed, ast.List) and _arrays_in_a_list(listed, line, context):
        parts = [segment_of(line, element) for element in listed.elts]
        if not all(parts):
            return None
        pair = "(" + ", ".join(part or "" for part in parts) + ")"
        rule = (
            "A list of arrays is read as one tensor whose rows are those arrays, "
            "so they must have the same shape; to keep them as separate parts of each "
            f"element (features and labels), pass a tuple: {code(pair)}"
        )
        fixed = rewrite(line.frame, call, listed, pair)
        fix = one_line_code(fixed)
        return Finding(rule + ".", fix)
    found = _ragged_parts(call.args[0], line, context)
    if not found:
        return None
    if error.matched(_NUMPY_RAGGED) and not (
        all(lengths for _, lengths in found) and _library_notebook(context)
    ):
        return None
    keras = context.module_alias("keras", f"{tf}.keras")
    described: list[tuple[str, str]] = []
    replacements: list[tuple[ast.AST, str]] = []
    for part, lengths in found:
        source = segment_of(line, part)
        if not source:
            return None
        shown = ""
        if lengths:
            distinct = sorted(set(lengths))
            more = ", ..." if len(distinct) > 4 else ""
            shown = f" (rows of {', '.join(str(n) for n in distinct[:4])}{more} items)"
        described.append((code(source), shown))
        replacements.append(
            (
                part,
                f"{keras}.utils.pad_sequences({source}, padding='post')"
                if lengths
                else f"{tf}.ragged.constant({source})",
            )
        )
    if len(described) == 1:
        uneven = f"{described[0][0]} holds rows of different lengths{described[0][1]}"
    else:
        named = " and ".join(source + shown for source, shown in described)
        uneven = f"{named} each hold rows of different lengths"
    rule = (
        f"A tensor (like a NumPy array) is a rectangular block, the same length in every "
        f"row, but {uneven}. Pad them "
        f"to one length (padding, with a mask if the model must ignore it), or keep them "
        f"ragged with {tf}.ragged.constant"
    )
    part, lengths = found[0]
    # A ragged tensor cannot be given to `tf.constant` itself: it replaces that call.
    converting = (
        len(found) == 1
        and not lengths
        and isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in ("constant", "convert_to_tensor")
        and call.args
        and call.args[0] is part
    )
    if converting:
        fixed = rewrite(line.frame, call, call, replacements[0][1])
    else:
        fixed = rewrite_all(line.frame, call, replacements)
    fix = one_line_code(fixed)
    return Finding(rule + ".", fix)


def _library_notebook(context: ErrorContext) -> bool:
    """Whether the namespace holds TensorFlow or Keras (a notebook that uses them)."""
    modules = [sys.modules.get(name) for name in ("tensorflow", "keras")]
    return any(
        value is module
        for module in modules
        if module is not None
        for value in context.namespace.values()
    )


RAGGED_LISTS = ErrorFamily(
    "ragged Python lists made into a tensor",
    messages=(Message(_RAGGED), Message(_NUMPY_RAGGED)),
    read=_read_ragged,
    section="tf-data",
    exception_type="ValueError",
    without_library=True,
)


# ------------------------------------------------------------------ call arguments
def _read_call_arguments(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    found = explain_call_arguments(error.parsed, line, context)
    return Finding(*found) if found is not None else None


CALL_ARGUMENTS = ErrorFamily(
    "arguments that do not fit a library function or a dataset's elements",
    # No message: what was written against what the callee declares (``calls.py``).
    messages=(),
    read=_read_call_arguments,
    section="tf-data",  # a call of another function than a dataset's: "shape-dtype-device"
    # Too many positional arguments fail at the call, before TensorFlow runs.
    without_library=True,
)


# ------------------------------------------------------------------ a dataset used as a list
# ``next(ds)`` / ``ds[0]`` on a tf.data dataset: Python raises, naming the dataset's class
# (``'_BatchDataset' object is not an iterator``), with no TensorFlow frame in between.
_NOT_ITERATOR = re.compile(r"'(?P<cls>_?\w*Dataset\w*)' object is not (?P<what>an iterator)")
_NOT_SUBSCRIPTABLE = re.compile(r"'(?P<cls>_?\w*Dataset\w*)' object is not (?P<what>subscriptable)")


def _dataset_used_as(
    line: FailingLine, what: str
) -> tuple[ast.expr, ast.expr, ast.expr | None] | None:
    """The ``next(ds)`` call or ``ds[i]`` subscript on the failing line: (the whole
    expression, the dataset's expression, the index)."""
    if line.statement is None:
        return None
    for node in ast.walk(line.statement):
        if (
            what == "an iterator"
            and isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "next"
            and len(node.args) == 1
        ):
            return node, node.args[0], None
        if what == "subscriptable" and isinstance(node, ast.Subscript):
            return node, node.value, node.slice
    return None


def _read_dataset_as_list(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    assert error.match is not None
    found = _dataset_used_as(line, error.group("what"))
    if found is None:
        return None
    whole, dataset, index = found
    name = segment_of(line, dataset)
    if not name:
        return None
    if error.group("cls") == "_VariantDataset":
        windows = _windows_mapped(name, context)
        if windows is not None:
            return windows
    rule = (
        f"A tf.data.Dataset is iterable but neither an iterator nor a list: "
        f"`for batch in {name}:` walks it (a new pass each time), `iter({name})` gives an "
        f"iterator to call next() on, and `{name}.take(n)` / `{name}.skip(n)` select elements"
    )
    replacement: str | None = f"next(iter({name}))"
    if index is not None:
        try:
            position = ast.literal_eval(index)
        except Exception:
            position = None
        replacement = (
            f"next(iter({name}.skip({position})))"
            if type(position) is int and position > 0
            else f"next(iter({name}))"
            if position == 0
            else None
        )
    fix = None
    if replacement is not None:
        fixed = rewrite(line.frame, line.statement, whole, replacement)
        fix = one_line_code(fixed)
    return Finding(rule + ".", fix)


def _windows_mapped(element: str, context: ErrorContext) -> Finding | None:
    """``ds.window(n).map(split)`` whose function indexes its element: ``window`` makes a
    dataset of datasets (each window a small dataset, not a tensor), so the element is a
    dataset. The fix batches each window into one tensor first:
    ``ds.window(n, ...).flat_map(lambda w: w.batch(n)).map(split)``."""
    for frame in reversed(context.frames()):
        statement = frame.statement()
        if statement is None:
            continue
        for node in ast.walk(statement):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("map", "filter")
            ):
                continue
            function = frame.segment(node.args[0]) if node.args else None
            if isinstance(node.func.value, ast.Name) and function:
                # ``wins = ds.window(n)`` a line above ``wins.map(split)``: the dataset's
                # origin is that assignment, and the fix goes there.
                made = _window_assignment(frame, node.func.value.id, statement.lineno)
                if made is not None:
                    return _windows_at(frame, made, made.value, element, function)
                continue
            if not (
                isinstance(node.func.value, ast.Call)
                and isinstance(node.func.value.func, ast.Attribute)
                and node.func.value.func.attr == "window"
            ):
                continue
            window = node.func.value
            size = next((k.value for k in window.keywords if k.arg == "size"), None)
            size = size if size is not None else (window.args[0] if window.args else None)
            size_source = frame.segment(size) if size is not None else None
            window_source = frame.segment(window)
            function = frame.segment(node.args[0]) if node.args else None
            if not size_source or not window_source or not function:
                return None
            batched = f"{window_source}.flat_map(lambda w: w.batch({size_source}))"
            fixed = rewrite(frame, statement, window, batched)
            rule = (
                f"{code(window_source)} makes a dataset whose elements are themselves small "
                f"datasets (one small dataset per window), so "
                f"{code(function)} gets a dataset as {code(element)}, which cannot be indexed "
                f"or sliced. Batch each window into one tensor of {code(size_source)} values "
                f"first, with {code(f'flat_map(lambda w: w.batch({size_source}))')}"
            )
            texts = any(
                isinstance(n, ast.Constant) and isinstance(n.value, str)
                for n in ast.walk(statement)
            )
            # A statement over lines in parentheses is shown on one (no text to respace).
            fix = one_line_code(" ".join(fixed.split()) if fixed and not texts else fixed)
            return Finding(rule + ".", fix)
    return None


def _window_assignment(frame: CellFrame, name: str, before: int) -> ast.Assign | None:
    """The newest ``name = <dataset>.window(...)`` of the frame's cell above line
    ``before`` (the last assignment to ``name`` there, which must be the window)."""
    tree = frame.tree()
    if tree is None:
        return None
    latest: ast.Assign | None = None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and node.lineno < before
            and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
            and (latest is None or node.lineno > latest.lineno)
        ):
            latest = node
    if latest is None:
        return None
    value = latest.value
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "window"
    ):
        return latest
    return None


def _windows_at(
    frame: CellFrame, statement: ast.Assign, window: ast.expr, element: str, function: str
) -> Finding | None:
    """The window fix written where the windows are made, a statement before the map."""
    assert isinstance(window, ast.Call)
    size = next((k.value for k in window.keywords if k.arg == "size"), None)
    size = size if size is not None else (window.args[0] if window.args else None)
    size_source = frame.segment(size) if size is not None else None
    window_source = frame.segment(window)
    whole = frame.segment(statement)
    if not size_source or not window_source or not whole or "\n" in whole:
        return None
    batched = f"{window_source}.flat_map(lambda w: w.batch({size_source}))"
    fixed = rewrite(frame, statement, window, batched)
    if not fixed or "\n" in fixed:
        return None
    rule = (
        f"{code(whole)} (line {statement.lineno} of its cell) makes a dataset whose elements "
        f"are themselves small datasets (one small dataset per window), so {code(function)} "
        f"gets a dataset as {code(element)}, which cannot be indexed or sliced. Batch each "
        f"window into one tensor of {code(size_source)} values with "
        f"{code(f'flat_map(lambda w: w.batch({size_source}))')}, on the line that makes "
        "the windows."
    )
    return Finding(rule, code(fixed))


DATASET_AS_LIST = ErrorFamily(
    "a dataset used as an iterator or a list",
    messages=(Message(_NOT_ITERATOR), Message(_NOT_SUBSCRIPTABLE)),
    exception_type="TypeError",
    read=_read_dataset_as_list,
    section="tf-data",
    # Python raises it in the user's line; the message names tf.data's class.
    without_library=True,
)
