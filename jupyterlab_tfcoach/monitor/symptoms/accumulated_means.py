"""Gradient accumulation that adds up the gradients of mean losses and never divides.

Accumulating over ``k`` micro-batches is meant to give the gradient of one batch ``k`` times
as large. When each micro-batch's loss is already a mean over its examples
(``tf.reduce_mean``, a Keras loss with its default reduction, a function of the learner's
that averages), the gradient of the large batch's mean loss is the MEAN of the micro
gradients; their sum is ``k`` times it. Applied, the step is ``k`` times what the learning
rate says: the run behaves as with a learning rate ``k`` times larger (with SGD, exactly).
Nothing raises.

Told from the cell's source after a completed cell (substring tests for ``gradient(`` and
``apply`` otherwise), in each scope: inside a loop that also holds the ``with
...GradientTape() as T:`` block computing the loss ``L``, the gradients of
``T.gradient(L, ...)`` added as they are into an accumulator ``ACC``
(``for a, g in zip(ACC, grads): a.assign_add(g)``, ``ACC[i] += g``,
``ACC = [a + g for a, g in zip(ACC, grads)]``), ``ACC`` (or a name made from it) then given
to ``apply_gradients``/``apply``; ``L`` a mean (a ``reduce_mean``/``mean`` call, a Keras
loss object whose reduction averages, a function of the learner's whose source calls one
of those; read from ``linecache``, never run); and no division anywhere along the way
(the loss, the accumulating statement, the statements that read ``ACC`` after it, the
apply call): a division there is the averaging done. The fix divides each gradient by the
number of micro-batches, named as the loop's iterable names it (``range(k)``,
``np.split(x, k)``, ``ds.take(k)``).
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import library_attribute, mro_of_class
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    function_scopes,
    is_tape_gradient,
    parsed_source,
    scope_nodes,
    source_segment,
    tape_names,
)

SECTION = "training-loop"
MAX_CELL_CHARS = 50_000
MAX_HELPER_CHARS = 20_000
_CACHED_SOURCES = 32
_MEAN_CALLS = frozenset({"reduce_mean", "mean"})
_APPLY = frozenset({"apply_gradients", "apply"})
_SPLITS = frozenset({"split", "array_split", "take", "range"})
_AVERAGING_REDUCTIONS = frozenset({"sum_over_batch_size", "mean", "auto"})


def _tape_loss(loop: ast.AST) -> tuple[str, str, ast.Assign] | None:
    """(tape name, loss name, the loss's assignment) of a tape block in the loop."""
    for node in ast.walk(loop):
        if not isinstance(node, ast.With):
            continue
        for tape in tape_names(node):
            for inner in ast.walk(loop):
                if (
                    is_tape_gradient(inner, tape)
                    and inner.args
                    and isinstance(inner.args[0], ast.Name)
                ):
                    loss = inner.args[0].id
                    assignment = next(
                        (
                            s
                            for s in ast.walk(node)
                            if isinstance(s, ast.Assign)
                            and any(isinstance(t, ast.Name) and t.id == loss for t in s.targets)
                        ),
                        None,
                    )
                    if assignment is not None:
                        return tape, loss, assignment
    return None


def _gradient_names(loop: ast.AST, tape: str) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(loop):
        if isinstance(node, ast.Assign) and is_tape_gradient(node.value, tape):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names.add(target.id)
    return names


def _is_gradients(node: ast.expr, tape: str, names: set[str]) -> bool:
    if isinstance(node, ast.Name):
        return node.id in names
    return is_tape_gradient(node, tape)


def _accumulation(loop: ast.AST, tape: str) -> tuple[str, ast.stmt, str, str] | None:
    """(accumulator name, the accumulating statement, the slot's name, the gradient's
    name) of a gradient added as it is into an accumulator."""
    names = _gradient_names(loop, tape)
    for node in ast.walk(loop):
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Call):
            pair = _zip_pair(node, tape, names)
            if pair is None:
                continue
            accumulator, slot, gradient = pair
            for statement in node.body:
                if _adds(statement, slot, gradient):
                    return accumulator, statement, slot, gradient
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.ListComp)
        ):
            accumulator = node.targets[0].id
            element = node.value.elt
            generator = node.value.generators[0]
            if (
                isinstance(element, ast.BinOp)
                and isinstance(element.op, ast.Add)
                and isinstance(generator.target, ast.Tuple)
                and len(generator.target.elts) == 2
                and isinstance(generator.iter, ast.Call)
                and call_name(generator.iter) == "zip"
                and len(generator.iter.args) == 2
                and isinstance(generator.iter.args[0], ast.Name)
                and generator.iter.args[0].id == accumulator
                and _is_gradients(generator.iter.args[1], tape, names)
            ):
                slot, gradient = (
                    e.id if isinstance(e, ast.Name) else "" for e in generator.target.elts
                )
                if {_name(element.left), _name(element.right)} == {slot, gradient}:
                    return accumulator, node, slot, gradient
    return None


def _name(node: ast.expr) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _zip_pair(loop: ast.For, tape: str, names: set[str]) -> tuple[str, str, str] | None:
    """(accumulator, slot, gradient) of ``for slot, gradient in zip(accumulator, grads)``."""
    call = loop.iter
    if not (
        isinstance(call, ast.Call)
        and call_name(call) == "zip"
        and len(call.args) == 2
        and isinstance(loop.target, ast.Tuple)
        and len(loop.target.elts) == 2
    ):
        return None
    slot, gradient = (_name(e) for e in loop.target.elts)
    accumulator = _name(call.args[0])
    if slot is None or gradient is None or accumulator is None:
        return None
    if not _is_gradients(call.args[1], tape, names):
        return None
    return accumulator, slot, gradient


def _adds(statement: ast.stmt, slot: str, gradient: str) -> bool:
    """``slot.assign_add(gradient)`` or ``slot += gradient``, the gradient as it is."""
    if (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Call)
        and call_name(statement.value) == "assign_add"
        and isinstance(statement.value.func, ast.Attribute)
        and _name(statement.value.func.value) == slot
        and len(statement.value.args) == 1
    ):
        return _name(statement.value.args[0]) == gradient
    return (
        isinstance(statement, ast.AugAssign)
        and isinstance(statement.op, ast.Add)
        and _name(statement.target) == slot
        and _name(statement.value) == gradient
    )


def _divides(node: ast.AST) -> bool:
    return any(
        (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div | ast.FloorDiv))
        or (isinstance(n, ast.Call) and call_name(n) in ("divide", "truediv", "div_no_nan"))
        or (isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Div))
        for n in ast.walk(node)
    )


def _helper_averages(function: Any) -> bool | None:
    """Whether a plain function of the learner's calls a mean (None: not such a function).
    Read once per definition: its code's place names it (a cell's file, a line)."""
    if type(function) is not types.FunctionType:
        return None
    code = function.__code__
    return _averages_at(code.co_filename, code.co_firstlineno, code.co_name, function)


_AVERAGES: dict[tuple[str, int, str], bool] = {}


def _averages_at(filename: str, line: int, name: str, function: Any) -> bool:
    key = (filename, line, name)
    known = _AVERAGES.get(key)
    if known is not None:
        return known
    averages = False
    try:
        text = textwrap.dedent(inspect.getsource(function))
        tree = ast.parse(text) if len(text) <= MAX_HELPER_CHARS else None
        averages = tree is not None and any(
            isinstance(n, ast.Call) and call_name(n) in _MEAN_CALLS for n in ast.walk(tree)
        )
    except Exception:
        averages = False
    if len(_AVERAGES) >= _CACHED_SOURCES * 4:
        _AVERAGES.pop(next(iter(_AVERAGES)))
    _AVERAGES[key] = averages
    return averages


def _mean_loss(value: ast.expr, namespace: Mapping[str, Any]) -> str | None:
    """How the loss is a mean: ``tf.reduce_mean`` or the learner's function that calls it."""
    for node in ast.walk(value):
        if not isinstance(node, ast.Call):
            continue
        name = call_name(node)
        if name in _MEAN_CALLS:
            return f"`{name}` averages it"
        if not isinstance(node.func, ast.Name):
            continue
        held = namespace.get(node.func.id)
        averages = _helper_averages(held)
        if averages is not None:
            if averages:
                return f"`{node.func.id}` averages it"
            continue
        classes = mro_of_class(type(held)) if held is not None else ()
        if any(c.__name__ == "Loss" and str(c.__module__).startswith("keras") for c in classes):
            reduction = library_attribute(held, "reduction")
            if type(reduction) is str and reduction in _AVERAGING_REDUCTIONS:
                return f"`{node.func.id}` is a Keras loss that averages over its batch"
    return None


def _count(loop: ast.For | ast.While, namespace: Mapping[str, Any]) -> tuple[str, int | None]:
    """How the loop's iterable names its number of micro-batches, and that number."""
    if not isinstance(loop, ast.For):
        return "", None
    for node in ast.walk(loop.iter):
        if not (isinstance(node, ast.Call) and call_name(node) in _SPLITS and node.args):
            continue
        given = node.args[0] if call_name(node) in ("range", "take") else node.args[-1]
        if len(node.args) < 2 and call_name(node) in ("split", "array_split"):
            continue
        if isinstance(given, ast.Constant) and type(given.value) is int:
            return str(given.value), given.value
        if isinstance(given, ast.Name) and type(namespace.get(given.id)) is int:
            return given.id, namespace[given.id]
    return "", None


@dataclass(frozen=True)
class _Accumulation:
    """What the source alone shows of one accumulation (syntax only, no user object)."""

    loop: ast.For | ast.While
    loss: str
    loss_value: ast.expr
    statement: ast.stmt
    written: str
    accumulator: str
    slot: str
    gradient: str
    applied_line: int


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if (
        len(source) > MAX_CELL_CHARS
        or "gradient(" not in source
        or "apply" not in source
        or "GradientTape" not in source
    ):
        return []
    for found in _accumulations(source):
        # Whether the loss is a mean, and the count, depend on what the names hold now.
        mean = _mean_loss(found.loss_value, namespace)
        if mean is None:
            continue
        text = _text(found, mean, *_count(found.loop, namespace))
        if text is not None:
            return [reports.note(text, SECTION)]
    return []


@functools.lru_cache(maxsize=_CACHED_SOURCES)
def _accumulations(source: str) -> tuple[_Accumulation, ...]:
    """Each accumulation the source shows; a cell run again costs one lookup."""
    tree = parsed_source(source)
    if tree is None:
        return ()
    found: list[_Accumulation] = []
    for scope in function_scopes(tree):
        nodes = scope_nodes(scope)
        for loop in nodes:
            if isinstance(loop, ast.For | ast.While):
                accumulation = _loop_accumulation(loop, nodes, source)
                if accumulation is not None:
                    found.append(accumulation)
    return tuple(found)


def _loop_accumulation(
    loop: ast.For | ast.While, nodes: list[ast.AST], source: str
) -> _Accumulation | None:
    found = _tape_loss(loop)
    if found is None:
        return None
    tape, loss, loss_assignment = found
    accumulation = _accumulation(loop, tape)
    if accumulation is None:
        return None
    accumulator, statement, slot, gradient = accumulation
    if _divides(loss_assignment.value) or _divides(statement):
        return None
    # The accumulator, and names made from it, up to the apply call.
    carriers = {accumulator}
    applied: ast.Call | None = None
    for node in nodes:
        line = getattr(node, "lineno", 0)
        if line <= (statement.end_lineno or statement.lineno):
            continue
        if applied is not None and line > (applied.end_lineno or applied.lineno):
            break  # what the cell does after the step (a ratio printed) does not matter
        reads = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        if not reads & carriers:
            continue
        if isinstance(node, ast.stmt) and node is not statement and _divides(node):
            return None
        if isinstance(node, ast.Assign):
            carriers.update(
                t.id for target in node.targets for t in ast.walk(target) if isinstance(t, ast.Name)
            )
        if isinstance(node, ast.Call) and call_name(node) in _APPLY and applied is None:
            applied = node
    if applied is None or _divides(applied):
        return None
    written = source_segment(source, statement)
    if written is None or "\n" in written:
        return None
    return _Accumulation(
        loop,
        loss,
        loss_assignment.value,
        statement,
        written,
        accumulator,
        slot,
        gradient,
        applied.lineno,
    )


def averaged(source: str, namespace: Mapping[str, Any], written: str) -> str:
    """``written``, a one-line statement of ``source`` that adds up gradients, as it must
    be written when the loss it adds up is a mean over each micro-batch: each gradient
    divided by the loop's count; else ``written`` as it is. Another check's fix that
    builds such a sum passes through here, so that, applied, it is not told again."""
    for found in _accumulations(source):
        if found.written != written or _mean_loss(found.loss_value, namespace) is None:
            continue
        count_text, _count_value = _count(found.loop, namespace)
        # With no count to divide by, the plain sum is printed (no placeholder to run).
        return _averaged_statement(found, count_text) if count_text else written
    return written


def _averaged_statement(found: _Accumulation, count_text: str) -> str:
    statement, slot, gradient, written = found.statement, found.slot, found.gradient, found.written
    divisor = count_text or "<number of micro-batches>"
    if isinstance(statement, ast.Assign):
        fixed = written.replace(f"{slot} + {gradient}", f"{slot} + {gradient} / {divisor}")
        return fixed.replace(f"{gradient} + {slot}", f"{gradient} / {divisor} + {slot}")
    if isinstance(statement, ast.AugAssign):
        return f"{slot} += {gradient} / {divisor}"
    return f"{slot}.assign_add({gradient} / {divisor})"


def _text(found: _Accumulation, mean: str, count_text: str, count: int | None) -> str | None:
    statement, written = found.statement, found.written
    times = f"{count} times" if count else "as many times as there are micro-batches"
    fixed = _averaged_statement(found, count_text)
    if fixed == written:
        return None
    loss = found.loss
    return (
        f"`{found.accumulator}` adds up the gradients of `{loss}` over the micro-batches of "
        f"the loop at line {found.loop.lineno} (`{written}`, line {statement.lineno} of this "
        f"cell), but `{loss}` is already a mean over its micro-batch ({mean}): the gradient "
        "of the mean loss over all of them is the MEAN of the micro-batch gradients, and the "
        f"sum is {times} as large. Applied (line {found.applied_line}), the step is {times} "
        "what the learning rate says; nothing raises. Average them as they are added: "
        f"`{fixed}`."
    )
