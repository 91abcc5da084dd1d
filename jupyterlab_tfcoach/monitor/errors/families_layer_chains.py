"""A layer given what the layer before it produces, read from the model's definition
(issue #25).

Keras reports a rank or size mismatch at the layer that received the input (``Input 0 of
layer 'gru' is incompatible with the layer: expected ndim=3, found ndim=2``), but the
cause is usually the layer before it, or how the layers were listed. This family reads
the layer that produced the input (the previous element of a ``Sequential([...])`` list,
or the statement in the cells that assigned a functional call's argument) and names the
usual causes, each with the line rewritten:

- a recurrent layer (``LSTM``, ``GRU``, ``SimpleRNN``, also inside ``Bidirectional``)
  before a layer that needs sequences, without ``return_sequences=True``: it returns only
  its last step;
- token ids (an integer ``Input`` of one axis per example) given to a sequence layer
  without an ``Embedding`` (the fix uses the notebook's own vocabulary-size name);
- ``Concatenate`` of tensors of different ranks: the higher ones flattened first;
- a layer built for N features getting M because one layer object is listed several
  times (``[layers.Dense(16)] * 3``): one object, built once; fix, a list comprehension;
  or one layer object called again on another size (fix: its constructor in its place);
- a model of several inputs given its data in another order (the shapes match the
  inputs once the list is reordered): the list reordered.

When none of these is the cause the reading gives None and ``families_keras``' layer
input family explains the error as before.
"""

from __future__ import annotations

import ast
import itertools
import re
from typing import Any

from jupyterlab_tfcoach.monitor.errors.cell_sources import assignments_in_cells, cell_frame
from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    code,
    on_one_source_line,
    rewrite,
)
from jupyterlab_tfcoach.monitor.errors.failing_line import (
    FailingLine,
    model_input_shapes,
    show_shape,
)
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
    operand_of,
    shape_list,
)

CHAIN_SECTION = "functional-api"
_MAX_SHOWN = 200
_RECURRENT = frozenset({"LSTM", "GRU", "SimpleRNN", "RNN"})
_WRAPPERS = frozenset({"Bidirectional", "TimeDistributed"})
_SEQUENCE_LAYERS = _RECURRENT | {"Conv1D", "Bidirectional", "GlobalAveragePooling1D"}
_VOCABULARY_NAME = re.compile(r"vocab|num_words|num_tokens|max_tokens|max_features", re.I)

_NDIM = re.compile(
    r"Input (?P<index>\d+)(?: with name '[^']*')? of layer ['\"](?P<layer>[^'\"]+)['\"] is "
    r"incompatible with the layer: expected (?:min_)?ndim=(?P<expected>\d+), found "
    r"ndim=(?P<found>\d+)\. Full shape received: \((?P<given>[^)]*)\)"
)
_AXIS = re.compile(
    r"Input (?P<index>\d+)(?: with name '[^']*')? of layer ['\"](?P<layer>[^'\"]+)['\"] is "
    r"incompatible with the layer: expected axis (?P<axis>-?\d+) of input shape to have "
    r"value (?P<value>\d+), but received input with shape \((?P<given>[^)]*)\)"
)
_SHAPE = re.compile(
    r"Input (?P<index>\d+)(?: with name '[^']*')? of layer ['\"](?P<layer>[^'\"]+)['\"] is "
    r"incompatible with the layer: expected shape=\((?P<expected>[^)]*)\), "
    r"found shape=\((?P<given>[^)]*)\)"
)
_CONCATENATE = re.compile(
    r"A `Concatenate` layer requires inputs with matching shapes except for the "
    r"concatenation axis\. Received: input_shape=\[(?P<shapes>.*?)\]"
)


def _snake(name: str) -> str:
    """A class name as Keras names its instances (``SimpleRNN`` -> ``simple_rnn``)."""
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def _class_of(node: ast.AST | None) -> str | None:
    """``LSTM`` for ``layers.LSTM(8)`` / ``keras.layers.LSTM(8)`` / ``LSTM(8)``."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _named_layer(node: ast.AST, layer: str) -> bool:
    """Whether the layer call ``node`` makes the layer Keras named ``layer``."""
    if not isinstance(node, ast.Call):
        return False
    given = next((k.value for k in node.keywords if k.arg == "name"), None)
    if isinstance(given, ast.Constant):
        return given.value == layer
    kind = _class_of(node)
    return kind is not None and re.sub(r"_\d+$", "", layer) == _snake(kind)


# ------------------------------------------------------------------ the producer
class _Producer:
    """The call that made the failing layer's input, where it is written: ``frame``,
    the statement to rewrite, the producing call."""

    def __init__(self, frame: CellFrame, statement: ast.AST, call: ast.Call, label: str) -> None:
        self.frame = frame
        self.statement = statement
        self.call = call
        self.label = label

    def written(self, node: ast.AST | None = None) -> str:
        return self.frame.segment(node or self.call) or ""

    def fixed(self, node: ast.AST, replacement: str) -> str | None:
        """The statement with ``node`` replaced; for one over several lines, the call."""
        whole = rewrite(self.frame, self.statement, node, replacement)
        if whole and on_one_source_line(self.statement) and len(whole) <= _MAX_SHOWN:
            return code(whole)
        call = rewrite(self.frame, self.call, node, replacement)
        if call and "\n" not in call and len(call) <= _MAX_SHOWN:
            return f"in place of {code(self.written())}, {code(call)}"
        return None


def _in_sequential(line: FailingLine, layer: str) -> tuple[_Producer, ast.Call] | None:
    """In a ``Sequential([...])`` on the failing line: the element before the layer
    named ``layer``, and that layer's call."""
    statement = line.statement
    if statement is None:
        return None
    # Keras numbers its layers across the whole session (``lstm_1`` may be the list's first
    # LSTM), so when several elements make a layer of that kind, the one after a
    # recurrent layer that returns only its last step is the likely one.
    found: list[tuple[_Producer, ast.Call]] = []
    for node in ast.walk(statement):
        if isinstance(node, ast.List):
            for before, after in itertools.pairwise(node.elts):
                if _named_layer(after, layer) and isinstance(before, ast.Call):
                    producer = _Producer(line.frame, statement, before, "this cell")
                    found.append((producer, after))  # type: ignore[arg-type]
    last_step_only = [pair for pair in found if _returns_last_step(pair[0].call)]
    return (last_step_only or found or [None])[0]


def _returns_last_step(call: ast.Call) -> bool:
    """A recurrent layer call (also inside ``Bidirectional``) without ``return_sequences``."""
    recurrent = _inner_recurrent(call)
    return recurrent is not None and not any(
        k.arg == "return_sequences" for k in recurrent.keywords
    )


def _assigned(name: str, context: ErrorContext) -> _Producer | None:
    """``h = layers.LSTM(8)(x)`` (or ``tok = keras.Input(...)``) for ``name``, newest in
    the cells: the layer's call."""
    for cell, statement in assignments_in_cells(name, context):
        value = statement.value
        if isinstance(value, ast.Call):
            layer = value.func if isinstance(value.func, ast.Call) else value
            return _Producer(cell_frame(cell), statement, layer, cell.label)  # type: ignore[arg-type]
    return None


def _functional(line: FailingLine, context: ErrorContext) -> tuple[_Producer, ast.Call] | None:
    """``layers.GRU(4)(h)`` on the failing line: the producer of ``h`` and the GRU call."""
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Call)
        and call.args
        and isinstance(call.args[0], ast.Name)
    ):
        return None
    producer = _assigned(call.args[0].id, context)
    return (producer, call.func) if producer is not None else None


def _inner_recurrent(call: ast.Call) -> ast.Call | None:
    """The recurrent layer call itself, also inside ``Bidirectional(...)``."""
    kind = _class_of(call)
    if kind in _RECURRENT:
        return call
    if kind in _WRAPPERS and call.args and _class_of(call.args[0]) in _RECURRENT:
        return call.args[0]  # type: ignore[return-value]
    return None


def _keyword_added(frame: CellFrame, call: ast.Call, keyword: str) -> str | None:
    source = frame.segment(call)
    if not source or not source.endswith(")"):
        return None
    inside = bool(call.args or call.keywords)
    return f"{source[:-1]}{', ' if inside else ''}{keyword})"


def _read_rank(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    expected, found = int(error.group("expected")), int(error.group("found"))
    if expected <= found:
        return None
    layer = error.group("layer")
    place = _in_sequential(line, layer) or _functional(line, context)
    if place is None:
        return None
    producer, receiver = place
    receiving = producer.frame.segment(receiver) or line.frame.segment(receiver) or layer
    recurrent = _inner_recurrent(producer.call)
    if recurrent is not None:
        flag = next((k for k in recurrent.keywords if k.arg == "return_sequences"), None)
        if flag is not None and not (
            isinstance(flag.value, ast.Constant) and flag.value.value is False
        ):
            return None
        replacement = _keyword_added(producer.frame, recurrent, "return_sequences=True")
        rule = (
            f"{code(producer.written())} returns only its last step's output, shape "
            f"({error.group('given')}), unless it is given {code('return_sequences=True')}; "
            f"{code(receiving)} after it needs the whole sequence, {expected} axes "
            "(batch, steps, features)"
        )
        if flag is not None or replacement is None:
            return Finding(rule + ".", None, CHAIN_SECTION)
        return Finding(rule + ".", producer.fixed(recurrent, replacement), CHAIN_SECTION)
    if _class_of(producer.call) == "Input" and _class_of(receiver) in _SEQUENCE_LAYERS:
        return _token_ids(error, producer, receiver, receiving, line, context)
    return None


def _token_ids(
    error: Recognised,
    producer: _Producer,
    receiver: ast.Call,
    receiving: str,
    line: FailingLine,
    context: ErrorContext,
) -> Finding | None:
    """An integer ``Input(shape=(steps,))`` straight into a sequence layer."""
    dtype = next((k.value for k in producer.call.keywords if k.arg == "dtype"), None)
    if not (isinstance(dtype, ast.Constant) and "int" in str(dtype.value)):
        return None
    rule = (
        f"{code(producer.written())} holds token ids, one integer per step "
        f"(({error.group('given')}): 2 axes), but {code(receiving)} needs a vector per step, "
        "(batch, steps, features): an Embedding layer turns each id into a vector"
    )
    vocabulary = next(
        (
            name
            for name, value in context.namespace.items()
            if type(name) is str
            and type(value) is int
            and value > 1
            and _VOCABULARY_NAME.search(name)
            and not name.startswith("_")
        ),
        None,
    )
    func = receiver.func
    prefix = (producer.frame.segment(func.value) or "") if isinstance(func, ast.Attribute) else ""
    embedding = f"{prefix + '.' if prefix else ''}Embedding({vocabulary or 'vocab_size'}, 16)"
    rule += f" ({code(embedding)}: the vocabulary size, then the vector size)"
    if vocabulary is None:
        return Finding(rule + ".", None, CHAIN_SECTION)
    if line.statement is not None and isinstance(line.call, ast.Call) and line.call.args:
        argument = line.call.args[0]
        source = line.frame.segment(argument)
        fixed = rewrite(line.frame, line.statement, argument, f"{embedding}({source})")
        if source and fixed and "\n" not in fixed:
            return Finding(rule + ".", code(fixed), CHAIN_SECTION)
    return None


# ------------------------------------------------------------------ Concatenate
def _read_concatenate(error: Recognised, line: FailingLine) -> Finding | None:
    shapes = [shape_list(part) for part in re.findall(r"\(([^)]*)\)", error.group("shapes"))]
    call = line.call
    if (
        any(shape is None for shape in shapes)
        or len({len(shape) for shape in shapes if shape is not None}) < 2
        or not (isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.List))
        or len(call.args[0].elts) != len(shapes)
    ):
        return None
    lowest = min(len(shape) for shape in shapes if shape is not None)
    func = call.func.func if isinstance(call.func, ast.Call) else call.func
    prefix = (line.frame.segment(func.value) or "") + "." if isinstance(func, ast.Attribute) else ""
    items = call.args[0].elts
    higher = [
        (item, shape)
        for item, shape in zip(items, shapes, strict=True)
        if shape and len(shape) > lowest
    ]
    names = ", ".join(
        f"{code(line.frame.segment(item) or '?')} {show_shape(shape)}" for item, shape in higher
    )
    rule = (
        f"Concatenate joins tensors along their last axis, so they need the same number of "
        f"axes; {names} {'has' if len(higher) == 1 else 'have'} more than the others "
        f"({lowest}). Flatten {'it' if len(higher) == 1 else 'them'} first "
        f"({code(prefix + 'Flatten()')}), or pool over the steps "
        f"({code(prefix + 'GlobalAveragePooling1D()')})"
    )
    fixed_items = [
        f"{prefix}Flatten()({line.frame.segment(item)})"
        if any(item is h for h, _ in higher)
        else line.frame.segment(item) or ""
        for item in items
    ]
    if line.statement is None or not all(fixed_items):
        return Finding(rule + ".", None, CHAIN_SECTION)
    fixed = rewrite(line.frame, line.statement, call.args[0], f"[{', '.join(fixed_items)}]")
    fix = code(fixed) if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix, CHAIN_SECTION)


# ------------------------------------------------------------------ one layer listed twice
def _repeated_layer(line: FailingLine, context: ErrorContext) -> Finding | None:
    for operand in line.operands:
        value = operand.value
        if operand.kind != "list" or type(value) is not list:
            continue
        repeated = len({id(item) for item in value}) < len(value)
        if not repeated:
            continue
        made = _repeated_list(operand.source, context)
        rule = (
            f"{code(operand.source)} holds the same layer object {len(value)} times: one layer, "
            "one set of weights, built on its first call for that input's size, so its second "
            "place in the model gets another size (and would share the weights anyway)"
        )
        if made is None:
            return Finding(rule + ". Make a new layer for each place.", None, CHAIN_SECTION)
        old, fixed, label = made
        return Finding(
            rule + f". {code(old)} ({label}) repeats one object; make one per place.",
            f"in place of {code(old)}, {code(fixed)}",
            CHAIN_SECTION,
        )
    return None


def _repeated_list(name: str, context: ErrorContext) -> tuple[str, str, str] | None:
    """``blocks = [layers.Dense(16)] * 3`` -> ``blocks = [layers.Dense(16) for _ in
    range(3)]``, newest in the cells."""
    newest = next(assignments_in_cells(name, context), None)
    if newest is None:
        return None
    cell, statement = newest
    value = statement.value
    if not (
        isinstance(value, ast.BinOp)
        and isinstance(value.op, ast.Mult)
        and isinstance(value.left, ast.List)
        and len(value.left.elts) == 1
    ):
        return None
    item = cell.segment(value.left.elts[0])
    times = cell.segment(value.right)
    old = cell.segment(statement)
    if not (item and times and old) or "\n" in old:
        return None
    return old, f"{name} = [{item} for _ in range({times})]", cell.label


def _layer_called_again(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    """``shared(wide)`` where ``shared = layers.Dense(16)`` was first called on inputs of
    another size: one layer object, one set of weights."""
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.args
        and line.statement is not None
    ):
        return None
    layer = operand_of(call.func, line, context)
    if layer is None or layer.kind != "layer":
        return None
    made = _assigned(call.func.id, context)
    if made is None or made.call is not getattr(made.statement, "value", None):
        return None
    constructor = made.written()
    argument = line.frame.segment(call.args[0]) or "the input"
    rule = (
        f"{code(call.func.id)} is one layer object, built on its first call for inputs with "
        f"{error.group('value')} features; {code(argument)} has shape ({error.group('given')}). "
        f"Calling a layer again reuses its weights: for another input size make a new layer "
        f"({code(call.func.id + ' = ' + constructor)} was written once, {made.label})"
    )
    fixed = rewrite(line.frame, line.statement, call.func, constructor)
    fix = code(fixed) if fixed and "\n" not in fixed and len(fixed) <= _MAX_SHOWN else None
    return Finding(rule + ".", fix, CHAIN_SECTION)


# ------------------------------------------------------------------ inputs in another order
def _swapped_inputs(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.args
        and isinstance(call.args[0], ast.List)
    ):
        return None
    model = operand_of(call.func.value, line, context)
    if model is None or model.kind != "model":
        return None
    inputs = model_input_shapes(model.value)
    items = call.args[0].elts
    if len(inputs) != len(items) or len(items) < 2:
        return None
    given = [operand_of(item, line, context) for item in items]
    shapes = [operand.shape if operand is not None else None for operand in given]
    if any(shape is None for shape in shapes) or _fits(inputs, shapes):
        return None
    for order in itertools.permutations(range(len(items))):
        if _fits(inputs, [shapes[i] for i in order]):
            reordered = [line.frame.segment(items[i]) or "" for i in order]
            fixed = rewrite(line.frame, call, call.args[0], f"[{', '.join(reordered)}]")
            declared = ", ".join(show_shape(shape) for shape in inputs)
            written = ", ".join(
                f"{code(line.frame.segment(item) or '?')} {show_shape(shape)}"  # type: ignore[arg-type]
                for item, shape in zip(items, shapes, strict=True)
            )
            rule = (
                f"{code(model.source)} takes its inputs in the order it was built with, "
                f"{declared}, but got {written}: the same data in another order"
            )
            fix = code(fixed) if fixed and "\n" not in fixed else None
            return Finding(rule + ".", fix, CHAIN_SECTION)
    return None


def _fits(inputs: list[tuple[int | None, ...]], shapes: list[Any]) -> bool:
    return all(
        shape is not None
        and len(shape) == len(wanted)
        and all(w is None or w == s for w, s in zip(wanted[1:], shape[1:], strict=False))
        for wanted, shape in zip(inputs, shapes, strict=True)
    )


def _read_chain(error: Recognised, line: FailingLine, context: ErrorContext) -> Finding | None:
    if error.matched(_NDIM):
        return _read_rank(error, line, context)
    if error.matched(_CONCATENATE):
        return _read_concatenate(error, line)
    if error.matched(_AXIS):
        return _repeated_layer(line, context) or _layer_called_again(error, line, context)
    return _swapped_inputs(error, line, context)


LAYER_CHAIN = ErrorFamily(
    "a layer given what the layer before it produces",
    messages=(Message(_NDIM), Message(_CONCATENATE), Message(_AXIS), Message(_SHAPE)),
    read=_read_chain,
    section=CHAIN_SECTION,
)
