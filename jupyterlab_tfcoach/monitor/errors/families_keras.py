"""Error families from Keras (see ``family_record.py`` for a family's shape): a layer
given an input of another size or rank than it was built for, labels that do not fit
the loss (or a model that outputs a prediction per position), and a functional model
whose inputs its outputs were not computed from.

Each family's record sits after its reading code; ``families.FAMILIES`` lists them in
the order they are tried.
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Any

from jupyterlab_tfcoach.monitor.errors.cell_sources import (
    SourceCell,
    assignments_in_cells,
    cell_frame,
    error_cells,
    nodes_in_cells,
    string_literal,
)
from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    code,
    is_postfix_safe,
    on_one_line,
    one_line_code,
    rewrite,
)
from jupyterlab_tfcoach.monitor.errors.declared_output_shape import declared_output_finding
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, show_shape, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
    segment_of,
    shape_list,
)
from jupyterlab_tfcoach.monitor.stored_state import is_library_class

# ------------------------------------------------------------------ layer input
LAYER_AXIS = re.compile(
    r"Input (?P<index>\d+)(?: with name '[^']*')? of layer ['\"](?P<layer>[^'\"]+)['\"] is "
    r"incompatible with the "
    r"layer: expected axis (?P<axis>-?\d+) of input shape to have value (?P<value>\d+), but "
    r"received input with shape \((?P<given>[^)]*)\)"
)
_LAYER_NDIM = re.compile(
    r"Input (?P<index>\d+)(?: with name '[^']*')? of layer ['\"](?P<layer>[^'\"]+)['\"] is "
    r"incompatible with the "
    r"layer: expected (?P<what>(?:min_|max_)?ndim)=(?P<expected>\d+), found ndim=(?P<found>\d+)\."
    r" Full shape received: \((?P<given>[^)]*)\)"
)

# Keras 3's check of a model's declared inputs against the data, axis by axis.
_LAYER_SHAPE = re.compile(
    r"Input (?P<index>\d+)(?: with name '[^']*')? of layer ['\"](?P<layer>[^'\"]+)['\"] is "
    r"incompatible with the layer: expected shape=\((?P<expected>[^)]*)\), "
    r"found shape=\((?P<given>[^)]*)\)"
)


def _read_declared_rank(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """``keras.Input(shape=(300, 8))`` for data of shape (300, 8): the declared shape
    counted the examples (or left out an axis). ``shape`` excludes the batch axis, so the
    fix is the data's shape without its first axis, when the Input is written in a running
    cell that has not trained the model before the failing call."""
    expected, given = shape_list(error.group("expected")), shape_list(error.group("given"))
    if expected is None or given is None or len(expected) == len(given) or len(given) < 2:
        return None
    rule = (
        f"The model declares inputs of shape {show_shape(expected)} (the batch axis first, "
        f"then the Input's shape) but the data is {show_shape(given)}: "
        f"{len(expected) - 1} axes per example against {len(given) - 1}. "
        "`Input(shape=...)` describes ONE example, without the number of examples"
    )
    # No model name: a fit of the model in the cell does not rule the Input out (usually it
    # is the failing call itself; the declared rank is what disagrees with the data).
    declared = _input_call("", line, context)
    if declared is None:
        return Finding(rule + ".", None)
    frame, input_call, shape_node = declared
    per_example = ", ".join(str(size) for size in given[1:]) + ("," if len(given) == 2 else "")
    fixed = rewrite(frame, input_call, shape_node, f"({per_example})")
    whole = frame.segment(input_call)
    if not fixed or not whole or "\n" in fixed:
        return Finding(rule + ".", None)
    return Finding(
        rule + f", so {code(whole)} should declare the data's example shape.", code(fixed)
    )


def _read_layer_input(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    if error.matched(_LAYER_SHAPE):
        return _read_declared_rank(error, line, context)
    if error.matched(LAYER_AXIS):
        layer, value = error.group("layer"), error.group("value")
        given = error.group("given")
        rule = (
            f"Layer '{layer}' was built for inputs whose axis {error.group('axis')} has size "
            f"{value} (its weights were sized on its first call) and now gets shape ({given})"
        )
        fix = (
            f"feed it data with {value} features on that axis, or build a new layer (or "
            "model) for the new input size"
        )
        shifted = _layer_index_off_by_one(error, line, context)
        if shifted is not None:
            return shifted
        # A custom layer's compute_output_shape unlike its call: the data fits the model.
        inner = declared_output_finding(error, line, context)
        if inner is not None:
            return inner
        declared = _declared_input(error, line, context)
        if declared is not None:
            return declared
        return Finding(rule + ".", fix)
    expected, found = int(error.group("expected")), int(error.group("found"))
    rule = (
        f"Layer '{error.group('layer')}' needs inputs with {expected} axes"
        f"{' or more' if error.group('what') == 'min_ndim' else ''} (the batch axis first), "
        f"but got shape ({error.group('given')}) with {found}"
    )
    if expected == 4 and found == 3:
        rule += ": images need a channel axis, (batch, height, width, channels)"
    return Finding(rule + ".", None)


def layers_item(node: ast.expr) -> tuple[ast.expr, int] | None:
    """(``m``, ``1``) for ``m.layers[1]``, a model's layer picked with an int literal; None
    for anything else."""
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "layers"
        and isinstance(node.slice, ast.Constant)
        and type(node.slice.value) is int
    ):
        return node.value.value, node.slice.value
    return None


def _indexed_layer(
    node: ast.expr, line: FailingLine, context: ErrorContext
) -> tuple[ast.Subscript, CellFrame, ast.AST] | None:
    """``m.layers[1]`` as written in the call, or the ``m.layers[1]`` a name called was
    assigned from in the cells (``layer = m.layers[1]``): (the subscript, a frame over
    where it is written, the statement to rewrite there)."""
    if isinstance(node, ast.Subscript) and layers_item(node) is not None:
        return node, line.frame, line.statement or node
    if isinstance(node, ast.Name):
        for cell, assignment in assignments_in_cells(node.id, context):
            found = _indexed_layer(assignment.value, line, context)
            if found is None:
                return None
            return found[0], cell_frame(cell), assignment
    return None


def _last_input_size(layer: Any) -> int | None:
    """The size of the last axis a built layer of a model takes (its ``input``'s shape,
    as Keras stores it for a functional model's layers)."""
    from jupyterlab_tfcoach.monitor.stored_state import library_attribute

    tensor = library_attribute(layer, "input")
    shape = library_attribute(tensor, "shape") if tensor is not None else None
    if type(shape) is not tuple or not shape or type(shape[-1]) is not int:
        return None
    return shape[-1]


def _layer_index_off_by_one(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """``m.layers[1](features)`` in a functional model, where ``layers[0]`` is the
    ``InputLayer``: the learner counted the layers as a Sequential lists them, and the
    features fit the next (or previous) layer. The fix names the layer:
    ``m.get_layer("head")``."""
    from jupyterlab_tfcoach.monitor.stored_state import library_attribute

    call = line.call
    if not isinstance(call, ast.Call) or error.group("axis") not in ("-1",):
        return None
    located = _indexed_layer(call.func, line, context)
    if located is None:
        return None
    indexed, written_in, statement = located
    model_node = indexed.value.value  # type: ignore[attr-defined]
    model_name = written_in.segment(model_node)
    found, model = (
        value_of(model_node, line.frame, context)
        if written_in is line.frame
        else context.lookup(model_name or "", line.frame)
    )
    layers = library_attribute(model, "layers") if found else None
    index = indexed.slice.value  # type: ignore[attr-defined]
    if type(layers) is not list or not 0 <= index < len(layers):
        return None
    given = shape_list(error.group("given"))
    if not given or given[-1] is None:
        return None
    first_class = type(layers[0])
    if type.__dict__["__name__"].__get__(first_class) != "InputLayer":
        return None
    for neighbour in (index + 1, index - 1):
        if not 0 < neighbour < len(layers) or _last_input_size(layers[neighbour]) != given[-1]:
            continue
        name = library_attribute(layers[neighbour], "name")
        if type(name) is not str or not model_name:
            return None
        wanted = f"{model_name}.get_layer({name!r})".replace("'", '"')
        fixed = rewrite(written_in, statement, indexed, wanted)
        again = "" if written_in is line.frame else ", then run this line again"
        return Finding(
            f"{code(written_in.segment(indexed) or '')} is layer '{error.group('layer')}', "
            f"which takes {error.group('value')} features, and the data has {given[-1]}, "
            f"what '{name}' ({code(f'{model_name}.layers[{neighbour}]')}) takes: the index "
            f"is off by one. A functional model lists its `InputLayer` first, so "
            f"`{model_name}.layers[0]` is the input, not the first layer you wrote (a "
            "Sequential model does not list it). Ask for the layer by its name.",
            code(fixed) + again if fixed and "\n" not in fixed else None,
        )
    return None


_DATA_METHODS = ("predict", "fit", "evaluate", "predict_on_batch", "train_on_batch")


def _declared_input(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    """A model given data with another number of features than its ``Input`` declares:
    which one to change. The model built in a running cell (its ``Input((3,))`` there) and
    not trained in it is built for this data: the fix is the Input's shape. A model from an
    earlier cell, or trained in this one, has weights for its features: the data must
    change."""
    from jupyterlab_tfcoach.monitor.errors.failing_line import model_input_shapes

    call = line.call
    if not (isinstance(call, ast.Call) and call.args and error.group("axis") == "-1"):
        return None
    method = call.func.attr if isinstance(call.func, ast.Attribute) else "__call__"
    model_node = call.func.value if isinstance(call.func, ast.Attribute) else call.func
    if method not in (*_DATA_METHODS, "__call__"):
        return None
    model = operand_of(model_node, line, context)
    data = operand_of(call.args[0], line, context)
    given = shape_list(error.group("given"))
    if model is None or model.kind != "model" or given is None:
        return None
    inputs = model_input_shapes(model.value)
    wanted = int(error.group("value"))
    if len(inputs) != 1 or inputs[0][-1] != wanted or len(inputs[0]) != len(given):
        return None
    data_name = code(data.source) if data is not None else "the data"
    features = given[-1]
    rule = (
        f"{code(model.source)} takes inputs {show_shape(inputs[0])}, {wanted} features per "
        f"example, but {data_name} has {features} {show_shape(given)}"
    )
    declared = _input_call(model.source, line, context)
    if declared is None:
        rule += (
            f": {code(model.source)} was built before this cell (its weights are sized for "
            f"{wanted} features), so the data must change"
        )
        fix = f"give it the same {wanted} features per example it was built (and trained) for"
        from jupyterlab_tfcoach.monitor.errors.families_model_data import rebuilt_input

        rebuilt = rebuilt_input(model.source, model.value, context, features)
        if rebuilt is not None:
            label, whole, fixed = rebuilt
            fix += (
                f"; or, to use {features}, in {label}, in place of {code(whole)}, "
                f"{code(fixed)}, then run it, compile and fit again"
            )
        return Finding(rule + ".", fix)
    frame, input_call, shape_node = declared
    last = shape_node.elts[-1]  # type: ignore[attr-defined]
    fixed = rewrite(frame, input_call, last, str(features))
    whole = frame.segment(input_call)
    if not fixed or not whole or "\n" in fixed:
        return None
    rule += (
        f": the model is built in this cell, untrained, from {code(whole)}, so its Input "
        f"shape is what to change if the data is right"
    )
    return Finding(rule + ".", f"declare the data's {features} features, {code(fixed)}")


def _input_call(
    model: str, line: FailingLine, context: ErrorContext
) -> tuple[CellFrame, ast.Call, ast.expr] | None:
    """``keras.Input((3,))`` in a running cell that builds a model and does not fit
    ``model`` there: the call and its shape tuple."""
    for frame in reversed(context.frames()):
        tree = frame.tree()
        if tree is None:
            continue
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
        if any(
            isinstance(node.func, ast.Attribute)
            and node.func.attr in ("fit", "train_on_batch")
            and frame.segment(node.func.value) == model
            for node in calls
        ):
            return None
        inputs = [
            node
            for node in calls
            if (isinstance(node.func, ast.Attribute) and node.func.attr == "Input")
            or (isinstance(node.func, ast.Name) and node.func.id == "Input")
        ]
        if len(inputs) != 1:
            continue
        node = inputs[0]
        shape = next((k.value for k in node.keywords if k.arg == "shape"), None)
        shape = shape if shape is not None else (node.args[0] if node.args else None)
        if isinstance(shape, ast.Tuple) and shape.elts:
            return frame, node, shape
    return None


LAYER_INPUT = ErrorFamily(
    "a layer's expected input",
    # Those the missing-axis explainer (``shapes.py``) did not take.
    messages=(Message(_LAYER_SHAPE), Message(LAYER_AXIS), Message(_LAYER_NDIM)),
    read=_read_layer_input,
    section="batch-dimension",
)


# ------------------------------------------------------------------ losses and labels
_TARGET_RANK = re.compile(
    r"Arguments `target` and `output` must have the same rank \(ndim\)\. Received: "
    r"target\.shape=\((?P<target>[^)]*)\), output\.shape=\((?P<output>[^)]*)\)"
)
_SPARSE_RANK = re.compile(
    r"Argument `output` must have rank \(ndim\) `target\.ndim - 1`\. Received: "
    r"target\.shape=\((?P<target>[^)]*)\), output\.shape=\((?P<output>[^)]*)\)"
)
_LABEL_RANGE = re.compile(
    r"Received a label value of (?P<value>-?\d+) which is outside the valid range of "
    r"\[0, (?P<classes>\d+)\)"
)
_FIT_METHODS = ("fit", "evaluate", "train_on_batch", "test_on_batch")


def _fit_labels(line: FailingLine, context: ErrorContext) -> tuple[ast.Call, ast.expr] | None:
    """The ``model.fit(x, y)`` call on the failing line (or the running cell) and its y."""
    for frame in reversed(context.frames()):
        for part in frame.header():
            for node in ast.walk(part):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in _FIT_METHODS
                ):
                    if len(node.args) >= 2:
                        return node, node.args[1]
                    for keyword in node.keywords:
                        if keyword.arg == "y":
                            return node, keyword.value
    return None


def _compile_loss(frame: CellFrame, model: str) -> ast.Constant | None:
    """The ``loss="..."`` of ``<model>.compile(...)`` in the failing cell."""
    tree = frame.tree()
    if tree is None:
        return None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "compile"
            and frame.segment(node.func.value) == model
        ):
            for keyword in node.keywords:
                if (
                    keyword.arg == "loss"
                    and isinstance(keyword.value, ast.Constant)
                    and type(keyword.value.value) is str
                ):
                    return keyword.value
    return None


class _CompiledLoss:
    """``net.compile(..., loss=...)`` in the cells: the loss as written and how to swap it
    for its sparse form in that statement."""

    def __init__(self, cell: SourceCell, statement: ast.stmt, loss: ast.expr) -> None:
        self.cell = cell
        self.statement = statement
        self.loss = loss
        self.written = "loss=" + (cell.segment(loss) or "...")

    def sparse(self) -> str | None:
        """The sparse loss written as the user wrote theirs (a string in their quotes, a
        class with the same keywords, a function of the same module)."""
        loss = self.loss
        if isinstance(loss, ast.Constant) and type(loss.value) is str:
            return string_literal(self.cell.segment(loss), "sparse_categorical_crossentropy")
        if isinstance(loss, ast.Call) and isinstance(loss.func, ast.Attribute):
            owner = self.cell.segment(loss.func.value)
            keywords = [self.cell.segment(k) for k in loss.keywords]
            if owner and not loss.args and all(keywords):
                return f"{owner}.SparseCategoricalCrossentropy({', '.join(keywords)})"  # type: ignore[arg-type]
        if isinstance(loss, ast.Attribute):
            owner = self.cell.segment(loss.value)
            return f"{owner}.sparse_categorical_crossentropy" if owner else None
        return None

    def categorical(self) -> str | None:
        """The categorical loss written as the user wrote their sparse one (its keywords
        kept), or None for another loss."""
        loss = self.loss
        if isinstance(loss, ast.Constant) and type(loss.value) is str:
            if loss.value != "sparse_categorical_crossentropy":
                return None
            return string_literal(self.cell.segment(loss), "categorical_crossentropy")
        func = loss.func if isinstance(loss, ast.Call) else loss
        if not isinstance(func, ast.Attribute) or not func.attr.startswith(("Sparse", "sparse_")):
            return None
        owner = self.cell.segment(func.value)
        name = func.attr[len("Sparse") :] if func.attr.startswith("Sparse") else func.attr[7:]
        if not owner or name not in ("CategoricalCrossentropy", "categorical_crossentropy"):
            return None
        if not isinstance(loss, ast.Call):
            return f"{owner}.{name}"
        arguments = [self.cell.segment(a) for a in (*loss.args, *loss.keywords)]
        if not all(arguments):
            return None
        return f"{owner}.{name}({', '.join(arguments)})"  # type: ignore[arg-type]

    def statement_with(self, loss: str) -> str | None:
        fixed = rewrite(cell_frame(self.cell), self.statement, self.loss, loss)
        return fixed if fixed and "\n" not in fixed and len(fixed) <= 200 else None


def _compiled_loss(model: str, context: ErrorContext) -> _CompiledLoss | None:
    """The newest ``<model>.compile(..., loss=...)`` statement in the cells."""
    for cell in error_cells(context):
        tree = cell.tree()
        if tree is None:
            continue
        for statement in reversed(tree.body):
            call = statement.value if isinstance(statement, ast.Expr) else None
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr == "compile"
                and cell.segment(call.func.value) == model
            ):
                loss = next((k.value for k in call.keywords if k.arg == "loss"), None)
                return _CompiledLoss(cell, statement, loss) if loss is not None else None
    return None


def _read_labels(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    fit = _fit_labels(line, context)
    frames = context.frames()
    frame = frames[-1] if frames else line.frame
    labels = operand_of(fit[1], line, context, frame) if fit else None
    labels_name = code(labels.source) if labels is not None else "the labels"
    model = ""
    if fit is not None:
        model = frame.segment(fit[0].func.value) or ""  # type: ignore[attr-defined]
    loss = _compile_loss(frame, model) if model else None
    if error.matched(_TARGET_RANK):
        target, output = shape_list(error.group("target")), shape_list(error.group("output"))
        positions = _labels_per_position(target, output, labels, model, context)
        if positions is not None:
            return positions
        if target is not None and output is not None and len(output) > 2 >= len(target):
            return _per_position(output, target, labels_name, fit, line, context)
        if target is None or output is None or len(target) + 1 != len(output):
            return None
        compiled = _compiled_loss(model, context) if model else None
        integers = labels is not None and "int" in (labels.dtype or "")
        rule = (
            f"The loss compares {labels_name} (shape {show_shape(target)} per batch: one class "
            f"number per example) with the model's output {show_shape(output)} (one "
            "probability per class)"
        )
        if compiled is not None:
            rule += (
                f": {code(compiled.written)} (the model's compiled loss) wants labels shaped "
                "like the output (one-hot or 0/1, one column per class)"
            )
        else:
            rule += ": a categorical loss wants one-hot labels shaped like the output"
        fix = None
        sparse = compiled.sparse() if compiled is not None else None
        if compiled is not None and sparse is not None and integers and (output[-1] or 0) > 1:
            rule += (
                f"; {labels_name} holds integer class numbers, which "
                f"{code('SparseCategoricalCrossentropy')} "
                f"({code(repr('sparse_categorical_crossentropy'))}) takes"
            )
            fixed = compiled.statement_with(sparse)
            fix = (
                f"for integer class labels use the sparse loss: {code(fixed)}"
                if fixed
                else f"for integer class labels use the sparse loss: in "
                f"{code(model + '.compile(...)')}, write {code('loss=' + sparse)}"
            )
        return Finding(rule + ".", fix)
    if error.matched(_SPARSE_RANK):
        target, output = shape_list(error.group("target")), shape_list(error.group("output"))
        if target is None or output is None:
            return None
        rule = (
            f"sparse_categorical_crossentropy wants one class number per example and one "
            f"row of class scores per example, but the model outputs {show_shape(output)} for "
            f"labels {show_shape(target)}"
        )
        if len(output) > 2 and len(target) <= 1:
            return _per_position(output, target, labels_name, fit, line, context)
        fix = None
        one_hot = len(target) == len(output) and target[-1] == output[-1] != 1
        several = _multi_hot_rows(labels.value) if labels is not None and one_hot else None
        if several:
            rows = labels.value.shape[0] if labels is not None else 0
            rule += (
                f": {labels_name} are multi-hot, not one-hot ({several} of {rows} rows hold "
                "more than one 1: several labels per example), which no softmax loss fits"
            )
            fix = (
                "one yes/no per label: give the last layer activation='sigmoid' and in "
                f"{code(model + '.compile(...)')} write "
                f"{code('loss=' + repr('binary_crossentropy'))} (with "
                f"{code('metrics=[keras.metrics.BinaryAccuracy(threshold=0.5)]')})"
            )
        elif one_hot and (soft := _class_share_rows(labels, labels_name, line, context)):
            rule += soft[0]
            fix = soft[1]
        elif one_hot and loss is not None and loss.value == "sparse_categorical_crossentropy":
            rule += f": {labels_name} look one-hot (a row per example, one column per class)"
            fix = (
                f"for one-hot labels use the categorical loss: in {code(model + '.compile(...)')}"
                f", write {code('loss=' + repr('categorical_crossentropy'))}"
            )
        elif one_hot and model:
            found = _one_hot_for_sparse(model, labels, fit, frame, context)
            if found is not None:
                rule += found[0]
                fix = found[1]
        return Finding(rule + ".", fix)
    value, classes = int(error.group("value")), int(error.group("classes"))
    rule = (
        f"With {classes} output units the labels must be 0 to {classes - 1}, but "
        f"{labels_name} holds {value}"
    )
    fix = None
    low = _minimum(labels.value) if labels is not None else None
    if labels is not None and fit is not None and low == 1 and value == classes:
        fixed = rewrite(frame, fit[0], fit[1], f"{labels.source} - 1")
        if fixed and "\n" not in fixed:
            fix = f"the labels start at 1: shift them to start at 0, {code(fixed)}"
    elif value >= classes:
        fix = f"give the last layer {value + 1} units (one per class)"
    return Finding(rule + ".", fix)


def _labels_dtype(labels: Any, context: ErrorContext) -> tuple[str, str] | None:
    """(what holds the labels, their dtype): fit's ``y``, else the label component of the
    dataset fit was given (its ``element_spec``: nothing is read from the data)."""
    from jupyterlab_tfcoach.monitor.stored_state import library_attribute

    if labels is not None:
        return (code(labels.source), labels.dtype) if labels.dtype else None
    fitted = _fit_call(context)
    if fitted is None:
        return None
    frame, node = fitted
    # ``pairs.batch(16).prefetch(1)``: the labels' dtype is ``pairs``'.
    data = node.args[0]
    while (
        isinstance(data, ast.Call)
        and isinstance(data.func, ast.Attribute)
        and data.func.attr in _DTYPE_KEEPING_METHODS
    ):
        data = data.func.value
    found, dataset = value_of(data, frame, context)
    spec = library_attribute(dataset, "element_spec") if found else None
    if type(spec) is not tuple or len(spec) < 2:
        return None
    dtype = library_attribute(library_attribute(spec[1], "dtype"), "name")
    written = frame.segment(node.args[0])
    if type(dtype) is not str or not written:
        return None
    return f"the labels of {code(on_one_line(written))}", dtype


def _fit_call(context: ErrorContext) -> tuple[CellFrame, ast.Call] | None:
    """The ``model.fit(data, ...)`` call (or evaluate, ...) of a frame's failing line, the
    running cell's first."""
    for frame in reversed(context.frames()):
        for part in frame.header():
            for node in ast.walk(part):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in _FIT_METHODS
                    and node.args
                ):
                    return frame, node
    return None


# Dataset methods that keep the dtype of each component.
_DTYPE_KEEPING_METHODS = frozenset(
    {"batch", "padded_batch", "shuffle", "prefetch", "cache", "repeat", "take", "skip"}
)


def _labels_per_position(
    target: tuple[int | None, ...] | None,
    output: tuple[int | None, ...] | None,
    labels: Any,
    model: str,
    context: ErrorContext,
) -> Finding | None:
    """Integer labels shaped like the output without its class axis, ``(None, 7)`` for
    ``(None, 7, 13)`` (a class number per position: a sequence tagger, a seq2seq decoder,
    a segmentation map), given to a model compiled with a categorical loss, which wants a
    one-hot row per position. Not a model that forgot to flatten: its output has the
    labels' positions. Fix: the compile statement with the sparse loss."""
    if target is None or output is None or len(target) < 2 or len(target) + 1 != len(output):
        return None
    if any(t != o for t, o in zip(target, output[:-1], strict=False) if None not in (t, o)):
        return None
    held = _labels_dtype(labels, context)
    if held is None or not held[1].startswith(("int", "uint")) or (output[-1] or 0) < 2:
        return None
    if not model:
        # ``model.fit(dataset)``: no ``y`` written, the model is fit's owner.
        fitted = _fit_call(context)
        owner = fitted[1].func.value if fitted is not None else None  # type: ignore[attr-defined]
        model = (fitted[0].segment(owner) or "") if fitted is not None and owner else ""
    compiled = _compiled_loss(model, context) if model else None
    sparse = compiled.sparse() if compiled is not None else None
    if compiled is None or sparse is None or "sparse" in compiled.written.lower():
        return None
    positions = f"each of its {output[-2]} positions" if output[-2] is not None else "each position"
    rule = (
        f"The model outputs {show_shape(output)}: a row of {output[-1]} class probabilities "
        f"at {positions}, and {held[0]} are {show_shape(target)} "
        f"{held[1]}: one class number per position. {code(compiled.written)} (the compiled "
        f"loss, {compiled.cell.label}) wants a one-hot row per position, shaped like the "
        f"output; class numbers go with the sparse loss, {code(sparse)}, which compares "
        "each position's number with that position's row (no Flatten: the model is right "
        "to predict per position)"
    )
    fixed = compiled.statement_with(sparse)
    fix = (
        code(fixed)
        if fixed
        else f"in {code(model + '.compile(...)')}, write {code('loss=' + sparse)}"
    )
    return Finding(rule + ".", fix, section="labels-and-loss")


def _fit_data(context: ErrorContext) -> tuple[str, Any, str] | None:
    """(model name, the data fit was given first, its source) for a ``model.fit(data, ...)``
    call on the running cell's failing line."""
    for frame in reversed(context.frames()):
        for part in frame.header():
            for node in ast.walk(part):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in _FIT_METHODS
                    and node.args
                ):
                    model = frame.segment(node.func.value)
                    data = frame.segment(node.args[0])
                    found, value = value_of(node.args[0], frame, context)
                    if model and data and found:
                        return model, value, data
    return None


def _float_label_rows(labels: Any, context: ErrorContext) -> tuple[str, str, bool] | None:
    """(model, what holds the labels, whether some values lie strictly between 0 and 1)
    for float labels fit was given: its ``y`` when some values are shares (values read),
    else the label component of the dataset it was given (``element_spec``: dtype
    only)."""
    from jupyterlab_tfcoach.monitor.stored_state import library_attribute

    fitted = _fit_data(context)
    if fitted is None:
        return None
    model, data, data_source = fitted
    if labels is not None and labels.value is not None and labels.kind in ("array", "tensor"):
        if not (labels.dtype or "").startswith(("float", "bfloat", "half")):
            return None
        numpy = sys.modules.get("numpy")
        values = labels.value
        try:
            if labels.kind == "tensor":
                values = library_attribute(values, "numpy")()
            between = bool(numpy is not None and ((values > 0) & (values < 1)).any())
        except Exception:
            return None
        # Exact one-hot rows of an array turn into class numbers in the call itself
        # (``_one_hot_for_sparse``): only shares of several classes are told here.
        return (model, code(labels.source), True) if between else None
    spec = library_attribute(data, "element_spec") if labels is None else None
    if type(spec) is not tuple or len(spec) < 2:
        return None
    dtype = library_attribute(library_attribute(spec[1], "dtype"), "name")
    if type(dtype) is not str or not dtype.startswith(("float", "bfloat", "half")):
        return None
    return model, f"the labels of {code(data_source)}", False


def _class_share_rows(
    labels: Any, labels_name: str, line: FailingLine, context: ErrorContext
) -> tuple[str, str | None] | None:
    """Float label rows, one column per class (one-hot, or mixed and smoothed shares as
    mixup, CutMix and label smoothing make), given to a model compiled with a sparse loss:
    the rows are the categorical loss's format; turning them into class numbers would
    throw the shares away. Fix: the compile statement with the categorical loss, its
    arguments kept."""
    found = _float_label_rows(labels, context)
    if found is None:
        return None
    model, held, between = found
    compiled = _compiled_loss(model, context)
    if compiled is None or "sparse" not in compiled.written.lower():
        return None
    shares = (
        "some values lie between 0 and 1: shares of several classes, as mixup, CutMix or "
        "label smoothing make"
        if between
        else "one-hot rows, or the shares of several classes that mixup, CutMix or label "
        "smoothing make"
    )
    said = (
        f": {held} are float rows with one column per class ({shares}), and "
        f"{code(model)} was compiled with {code(compiled.written)} ({compiled.cell.label}), "
        "which takes one class number per example. Rows of class shares go with the "
        "categorical loss (class numbers would drop the shares)"
    )
    categorical = compiled.categorical()
    if categorical is None:
        return said, None
    fixed = compiled.statement_with(categorical)
    if fixed is not None:
        return said, f"compile with the categorical loss, {code(fixed)}"
    return said, (
        f"compile with the categorical loss: in {code(model + '.compile(...)')}, in place of "
        f"{code(compiled.written)}, write {code('loss=' + categorical)}"
    )


def _one_hot_for_sparse(
    model: str,
    labels: Any,
    fit: tuple[ast.Call, ast.expr] | None,
    frame: CellFrame,
    context: ErrorContext,
) -> tuple[str, str | None] | None:
    """One-hot labels given to a model compiled (in any cell) with a sparse loss written
    as a class or a function (``keras.losses.SparseCategoricalCrossentropy()``): the loss
    named as written; fix, the labels turned into class numbers in the learner's call."""
    compiled = _compiled_loss(model, context)
    if compiled is None or "sparse" not in compiled.written.lower():
        return None
    names = code(labels.source) if labels is not None else "the labels"
    said = (
        f": {names} look one-hot (a row per example, one column per class), and "
        f"{code(model)} was compiled with {code(compiled.written)} ({compiled.cell.label}), "
        "which takes one class number per example"
    )
    if fit is None or labels is None or labels.kind not in ("array", "tensor"):
        return said, None
    numpy = context.module_alias("numpy", "np")
    fixed = rewrite(frame, fit[0], fit[1], f"{numpy}.argmax({labels.source}, axis=-1)")
    if not fixed or "\n" in fixed:
        return said, None
    return said, (f"give the class numbers (or compile with the categorical loss), {code(fixed)}")


def _per_position(
    output: tuple[int | None, ...],
    target: tuple[int | None, ...],
    labels_name: str,
    fit: tuple[ast.Call, ast.expr] | None,
    line: FailingLine,
    context: ErrorContext,
) -> Finding:
    """The model outputs a grid of predictions (``(None, 6, 6, 3)``) for one label per
    example: a Dense layer met a rank>2 input, and acts on its last axis only. The fix
    inserts a Flatten before that Dense, in the user's spelling of the layers module."""
    rule = (
        f"The model outputs {show_shape(output)}, a prediction per position, for "
        f"{labels_name} shaped {show_shape(target)} (one label per example): Dense acts on "
        "the last axis only, so a Dense layer given an image-like (rank>2) input keeps the "
        "other axes. Flatten (or global pooling) must come first"
    )
    fix = _flatten_fix(fit, line, context)
    return Finding(rule + ".", fix)


_MAX_MODEL_LAYERS = 200


def _flatten_fix(
    fit: tuple[ast.Call, ast.expr] | None, line: FailingLine, context: ErrorContext
) -> str | None:
    """``layers.Flatten(), layers.Dense(3)`` (in a Sequential list) or
    ``layers.Dense(3)(layers.Flatten()(h))`` (functional): the first Dense layer of the
    model built for a rank>2 input, found as the same-numbered Dense call in the cell
    that defines the model."""
    from jupyterlab_tfcoach.monitor.errors.failing_line import layer_input_shape
    from jupyterlab_tfcoach.monitor.stored_state import is_library_class, keras_sublayers

    if fit is None:
        return None
    frames = context.frames()
    frame = frames[-1] if frames else line.frame
    model_node = fit[0].func.value  # type: ignore[attr-defined]
    model_name = frame.segment(model_node)
    found, model = value_of(model_node, frame, context)
    if not found or not model_name:
        return None
    dense_index = 0
    target_index = None
    for layer in list(keras_sublayers(model))[:_MAX_MODEL_LAYERS]:
        cls = type(layer)
        if not is_library_class(cls) or type.__dict__["__name__"].__get__(cls) != "Dense":
            continue
        shape = layer_input_shape(layer) or _built_shape(layer)
        if shape is not None and len(shape) > 2:
            target_index = dense_index
            break
        dense_index += 1
    if target_index is None:
        return None
    for source in _cell_sources(frame, context):
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        if not any(
            isinstance(node, ast.Assign)
            and any(ast.get_source_segment(source, t) == model_name for t in node.targets)
            for node in ast.walk(tree)
        ):
            continue
        calls = sorted(
            (
                node
                for node in ast.walk(tree)
                if isinstance(node, ast.Call)
                and (
                    (isinstance(node.func, ast.Attribute) and node.func.attr == "Dense")
                    or (isinstance(node.func, ast.Name) and node.func.id == "Dense")
                )
            ),
            key=lambda node: (node.lineno, node.col_offset),
        )
        if len(calls) <= target_index:
            return None
        dense = calls[target_index]
        return _flatten_before(dense, tree, source)
    return None


def _built_shape(layer: Any) -> tuple[int | None, ...] | None:
    """The input shape in a layer's ``_build_shapes_dict`` when Keras stores it in its
    tracked dict (a ``dict`` subclass): read with ``dict``'s own code."""
    from jupyterlab_tfcoach.monitor.stored_state import stored

    shapes = stored(layer, "_build_shapes_dict")
    if not isinstance(shapes, dict) or dict.__len__(shapes) != 1:
        return None
    shape = next(iter(dict.values(shapes)))
    if type(shape) is tuple and all(d is None or type(d) is int for d in shape):
        return shape
    return None


def _cell_sources(frame: CellFrame, context: ErrorContext) -> list[str]:
    """The failing cell's source, then the cell history ``In`` (read only), newest first."""
    sources = [frame.source()]
    history = context.namespace.get("In")
    if type(history) is list:
        budget = 200_000  # characters parsed at most: explaining stays within its budget
        for text in reversed(history[-200:]):
            if type(text) is str:
                budget -= len(text)
                if budget < 0:
                    break
                sources.append(text)
    return sources


def _flatten_before(dense: ast.Call, tree: ast.Module, source: str) -> str | None:
    dense_source = ast.get_source_segment(source, dense)
    prefix = ast.get_source_segment(source, dense.func)
    if not dense_source or not prefix or "\n" in dense_source:
        return None
    flatten = prefix[: -len("Dense")] + "Flatten()"
    for node in ast.walk(tree):
        if isinstance(node, ast.List) and any(element is dense for element in node.elts):
            return (
                f"insert a Flatten layer before {code(dense_source)} in the list of layers: "
                f"{code(f'{flatten}, {dense_source}')}"
            )
        if isinstance(node, ast.Call) and node.func is dense and len(node.args) == 1:
            applied = ast.get_source_segment(source, node)
            given = ast.get_source_segment(source, node.args[0])
            if applied and given and "\n" not in applied:
                return (
                    f"flatten what {code(dense_source)} is applied to: "
                    f"{code(f'{dense_source}({flatten}({given}))')}"
                )
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add"
            and len(node.args) == 1
            and node.args[0] is dense
        ):
            owner = ast.get_source_segment(source, node.func.value)
            if owner:
                return (
                    f"add a Flatten layer before {code(f'{owner}.add({dense_source})')}: "
                    f"{code(f'{owner}.add({flatten})')}"
                )
    return None


def _minimum(value: Any) -> int | None:
    """The smallest label of an integer NumPy array (NumPy's code only, bounded size)."""
    numpy = sys.modules.get("numpy")
    if numpy is None or type(value) is not getattr(numpy, "ndarray", None):
        return None
    if value.size == 0 or value.size > 10_000_000 or value.dtype.kind not in "iu":
        return None
    return int(value.min())


def _multi_hot_rows(value: Any) -> int | None:
    """How many rows of a 2-D NumPy array of 0s and 1s hold more than one 1 (NumPy's
    code only, bounded size); None for anything else."""
    numpy = sys.modules.get("numpy")
    if numpy is None or type(value) is not getattr(numpy, "ndarray", None) or value.ndim != 2:
        return None
    if value.size == 0 or value.size > 10_000_000 or value.dtype.kind not in "iubf":
        return None
    if not bool(((value == 0) | (value == 1)).all()):
        return None
    return int((value.sum(axis=1) > 1).sum())


LABELS = ErrorFamily(
    "labels against the loss",
    messages=(Message(_TARGET_RANK), Message(_SPARSE_RANK), Message(_LABEL_RANGE)),
    read=_read_labels,
    # The course section on label formats, losses and one prediction per example.
    section="labels-and-loss",
)


# ------------------------------------------------------------------ functional inputs
_NOT_CONNECTED = re.compile(r"is not connected to `?inputs`?|Graph disconnected")
_MAX_HISTORY = 2000


def _input_tensors(tensor: Any) -> list[Any]:
    """The ``keras.Input`` tensors a Keras symbolic tensor was computed from, read from what
    Keras stores (``_keras_history`` -> the operation's inbound node -> its tensors)."""
    from jupyterlab_tfcoach.monitor.stored_state import stored

    found: list[Any] = []
    stack, seen = [tensor], set()
    for _ in range(_MAX_HISTORY):
        if not stack:
            break
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        history = stored(current, "_keras_history")
        if not isinstance(history, tuple) or tuple.__len__(history) < 2:
            continue
        operation, index = tuple.__getitem__(history, 0), tuple.__getitem__(history, 1)
        nodes = stored(operation, "_inbound_nodes")
        # Keras keeps them in its TrackedList (a list subclass): read with list's own code.
        if not isinstance(nodes, list) or type(index) is not int:
            continue
        if not 0 <= index < list.__len__(nodes):
            continue
        node = list.__getitem__(nodes, index)
        if stored(node, "is_input") is True:
            found.append(current)
            continue
        tensors = stored(stored(node, "arguments"), "keras_tensors")
        if isinstance(tensors, list):
            stack.extend(list.__getitem__(tensors, slice(0, _MAX_HISTORY)))
    return found


def _read_disconnected(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    if not isinstance(line.call, ast.Call):
        return None
    call = line.call
    arguments = {k.arg: k.value for k in call.keywords if k.arg in ("inputs", "outputs")}
    for position, key in enumerate(("inputs", "outputs")):
        if key not in arguments and len(call.args) > position:
            arguments[key] = call.args[position]
    given, outputs = arguments.get("inputs"), arguments.get("outputs")
    if given is None or outputs is None:
        return None
    found, output = value_of(outputs, line.frame, context)
    if not found:
        return None
    sources = _input_tensors(output)
    names = []
    for count, (name, value) in enumerate(context.namespace.items()):
        if count > _MAX_HISTORY or len(names) >= 4:
            break
        if type(name) is str and not name.startswith("_"):
            if any(value is source for source in sources):
                names.append(name)
    outputs_source, given_source = segment_of(line, outputs), segment_of(line, given)
    rule = (
        f"A functional model's inputs must be the very tensors its outputs were computed "
        f"from; {code(given_source)} is not one of them"
    )
    if isinstance(given, ast.Call):
        rule += " (each keras.Input(...) call makes a new, unconnected input)"
    if not names:
        return Finding(rule + ".", None)
    shown = ", ".join(code(name) for name in names)
    rule += f": {code(outputs_source)} was computed from {shown}"
    replacement = names[0] if len(names) == 1 else f"[{', '.join(names)}]"
    fixed = rewrite(line.frame, call, given, replacement)
    fix = f"pass the input the outputs came from: {code(fixed)}" if fixed else None
    return Finding(rule + ".", fix)


DISCONNECTED = ErrorFamily(
    "a functional model's inputs its outputs do not come from",
    messages=(Message(_NOT_CONNECTED),),
    read=_read_disconnected,
    section="functional-api",
)


# ------------------------------------------------------------------ optimizer pairs
# ``optimizer.apply_gradients(grads, variables)``: Keras 3 takes ONE iterable of
# (gradient, variable) pairs; the variables land in its second parameter slot, which
# ``apply_gradients`` does not have ("takes 2 positional arguments but 3 were given").
_APPLY_PAIRS = re.compile(
    r"apply_gradients\(\) takes 2 positional arguments but (?P<given>\d+) were given"
)


# ``optimizer.apply_gradients(grads)``: the gradients alone, each read as a (gradient,
# variable) pair: Keras 3 meets a tensor where it looks for the variable's ``_unique_id``
# (or unpacks a gradient's rows).
_GRADIENTS_ALONE = re.compile(r"object has no attribute '_unique_id'|values to unpack \(expected 2")


def _read_gradients_alone(line: FailingLine, context: ErrorContext) -> Finding | None:
    """``opt.apply_gradients(grads)`` with ``grads`` a list of tensors: the variables
    they belong to are the sources of the ``grads = tape.gradient(loss, sources)`` that
    made them (the cells, newest first); fix, the call with ``zip(grads, sources)``."""
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "apply_gradients"
        and len(call.args) == 1
        and not call.keywords
        and isinstance(call.args[0], ast.Name)
    ):
        return None
    gradients = call.args[0].id
    found, value = value_of(call.args[0], line.frame, context)
    if not found or type(value) not in (list, tuple) or not value:
        return None
    if any(type(item) is tuple for item in value[:4]):
        return None  # pairs already
    sources = _gradient_sources(gradients, context)
    rule = (
        f"apply_gradients takes (gradient, variable) pairs, so it knows which variable each "
        f"gradient updates, and {code(gradients)} holds the gradients alone "
        f"({len(value)} tensors)"
    )
    if sources is None:
        return Finding(
            rule + f": pair them with the variables, `zip({gradients}, variables)`.", None
        )
    statement, variables = sources
    pairs = f"zip({gradients}, {variables})"
    whole = line.statement if line.statement is not None else call
    fixed = rewrite(line.frame, whole, call, f"{segment_of(line, call.func)}({pairs})")
    rule += f"; {code(statement)} computed them for {code(variables)}, in that order"
    return Finding(rule + ".", one_line_code(fixed))


def _gradient_sources(gradients: str, context: ErrorContext) -> tuple[str, str] | None:
    for cell, node in nodes_in_cells(context):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == gradients
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr == "gradient"
            and len(node.value.args) >= 2
        ):
            statement = cell.segment(node)
            sources = cell.segment(node.value.args[1])
            if statement and sources and "\n" not in statement:
                return statement, sources
    return None


def _read_apply_pairs(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    if error.matched(_GRADIENTS_ALONE):
        return _read_gradients_alone(line, context)
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "apply_gradients"
        and len(call.args) == 2
        and not call.keywords
    ):
        return None
    gradients, variables = (segment_of(line, argument) for argument in call.args)
    if not gradients or not variables:
        return None
    rule = (
        f"apply_gradients takes one list of (gradient, variable) pairs, not {code(gradients)} "
        f"and {code(variables)} as two arguments: zip pairs them up (Keras 3's "
        f"`optimizer.apply({gradients}, {variables})` takes the two lists)"
    )
    pairs = f"zip({gradients}, {variables})"
    statement = line.statement if line.statement is not None else call
    fixed = rewrite(line.frame, statement, call, f"{segment_of(line, call.func)}({pairs})")
    fix = one_line_code(fixed)
    return Finding(rule + ".", fix)


APPLY_PAIRS = ErrorFamily(
    "gradients and variables given to apply_gradients as two lists, or the gradients alone",
    messages=(Message(_APPLY_PAIRS), Message(_GRADIENTS_ALONE)),
    read=_read_apply_pairs,
    section="custom-train-step",
    # Python raises it at the call, before the optimizer's code runs.
    without_library=True,
)


# ------------------------------------------------------------------ a whole shape as one size
# ``add_weight(shape=(input_shape, self.units))`` in a layer's ``build``: ``input_shape`` is
# the whole input shape, so the weight's shape holds a tuple where a size goes.
_SHAPE_IN_SHAPE = re.compile(
    r"Cannot convert '.*' to a shape\. Found invalid dimension '(?P<dim>[^']*)' of type "
    r"'<class '(?P<type>[\w.]+)'>'",
    re.S,
)
_SHAPE_TYPES = ("tuple", "list", "TensorShape")


def _is_tensor_shape(value: Any) -> bool:
    cls = type(value)
    return is_library_class(cls) and type.__dict__["__name__"].__get__(cls) == "TensorShape"


def _read_shape_in_shape(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    if error.group("type").rpartition(".")[2] not in _SHAPE_TYPES:
        return None
    call = line.call
    if not isinstance(call, ast.Call):
        return None
    written = [k.value for k in call.keywords if k.arg == "shape"] or call.args[:1]
    if not written or not isinstance(written[0], (ast.Tuple, ast.List)):
        return None
    shape_node = written[0]
    wholes = []
    for item in shape_node.elts:
        found, value = value_of(item, line.frame, context)
        if found and (type(value) in (tuple, list) or _is_tensor_shape(value)):
            wholes.append((item, value))
    if len(wholes) != 1:
        return None
    item, value = wholes[0]
    source = line.frame.segment(item)
    try:
        sizes = tuple(None if size is None else int(size) for size in value)
    except Exception:
        return None
    if not source or not sizes or not is_postfix_safe(item):
        return None
    outer = line.statement if line.statement is not None else call
    fixed = rewrite(line.frame, outer, item, f"{source}[-1]")
    rule = (
        f"{code(source)} is a whole shape, {show_shape(sizes)} (the batch axis first), and "
        f"{code(line.frame.segment(shape_node) or '')} puts it where one size goes: a "
        f"weight's shape is a tuple of sizes. A layer's weights are sized by the input's "
        f"last axis, its features: {code(f'{source}[-1]')}"
        + (f" ({sizes[-1]} here)" if sizes[-1] is not None else "")
    )
    if not fixed or "\n" in fixed:
        return Finding(rule + ".", None)
    return Finding(rule + ".", code(fixed))


SHAPE_IN_SHAPE = ErrorFamily(
    "a whole shape given where a weight's shape wants one size",
    messages=(Message(_SHAPE_IN_SHAPE),),
    read=_read_shape_in_shape,
    section="keras-weights-in-build",
)
