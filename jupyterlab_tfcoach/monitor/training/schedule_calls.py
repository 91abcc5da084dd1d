"""A learning-rate schedule called with an epoch counter to log "the learning rate".

An optimizer built on a ``LearningRateSchedule`` reads it at its own step count
(``opt.iterations``: one per update), so ``lr_log.append(float(sched(epoch)))`` evaluates
the schedule at steps 0, 1, 2, ... while the optimizer is hundreds of steps further: the
log shows the first steps of the schedule (often its warm-up), not the rates the updates
used. Nothing raises.

After a completed cell holding a ``for`` loop at its top level, read with ``ast``: a call
``S(E)`` in the loop's body where ``E`` is the loop's own name (``for E in range(...)``)
and ``S`` a name holding a Keras ``LearningRateSchedule`` object (never called here: a
schedule class of the learner's is the learner's code) that an optimizer of the namespace
follows (its stored rate, or its ``inner_optimizer``'s; of several, the one the loop names),
in a loop that trains (it calls a function of the learner's, or ``apply_gradients`` /
``fit`` / ``train_on_batch``: a loop that only tabulates the schedule is meant). Told when
that optimizer's step count after the cell is at least twice the loop's passes (``E``'s
last value + 1): the rate logged at pass ``E`` is not the rate of its updates. The fix is
the line with ``S(E)`` replaced by the optimizer's ``learning_rate``, the rate at its
current step.

The same confusion when the schedule is built (``epoch_length_notes``): ``S =
CosineDecay(2e-3, decay_steps=N_EPOCHS)`` counts ``N_EPOCHS`` optimizer steps, not
epochs, so the rate has finished its decay (to 0 for a cosine) after that many batches,
within the first epoch or two, and the rest of training barely moves. Told after a
completed cell holding ``Decay(`` (a substring test otherwise): a top-level ``S = <Keras
decay schedule>(...)`` whose step count (``decay_steps``/``first_decay_steps`` or the second
positional argument) is written as one plain name that reads as epochs (``epoch`` in it)
holding a whole number, ``S`` holding a Keras ``LearningRateSchedule`` whose stored
``decay_steps`` is that number, followed by an optimizer of the namespace (it is stepped
per batch), in a cell without ``LearningRateScheduler`` (a per-epoch callback that calls
the schedule with the epoch index is right to count epochs). The fix multiplies the step
count by the batches of one epoch.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import library_attribute, stored
from jupyterlab_tfcoach.monitor.syntax import parsed_source, subtree_nodes

SECTION = "callback-mode"
MAX_CELL_CHARS = 50_000
_MAX_NAMES = 2000
_PASSES_FACTOR = 2
_TRAINING_METHODS = frozenset({"apply_gradients", "apply", "fit", "train_on_batch", "minimize"})


def _schedule(value: Any) -> bool:
    try:
        return any(
            k.__name__ == "LearningRateSchedule" and str(k.__module__).startswith("keras")
            for k in type(value).__mro__
        )
    except Exception:
        return False


def keras_optimizer(value: Any) -> bool:
    """Whether ``value`` is a Keras optimizer (read from its classes' names, no import)."""
    try:
        return any(
            k.__name__ in ("Optimizer", "BaseOptimizer") and str(k.__module__).startswith("keras")
            for k in type(value).__mro__
        )
    except Exception:
        return False


def _steps(optimizer: Any) -> int | None:
    iterations = stored(optimizer, "_iterations")
    backing = library_attribute(iterations, "value")
    numpy = library_attribute(backing if backing is not None else iterations, "numpy")
    try:
        return int(numpy()) if numpy is not None else None
    except Exception:
        return None


def _followers(schedule: Any, namespace: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The namespace's optimizers (their names) that follow ``schedule``, each with the
    optimizer that holds it (the wrapped one for a LossScaleOptimizer)."""
    try:
        items = list(namespace.items())[:_MAX_NAMES]
    except Exception:
        return []
    found: list[tuple[str, Any]] = []
    for name, value in items:
        if type(name) is not str or name.startswith("_") or not keras_optimizer(value):
            continue
        for holder in (value, stored(value, "inner_optimizer")):
            if holder is not None and stored(holder, "_learning_rate") is schedule:
                found.append((name, holder))
                break
    return found


def _trains(loop: ast.For, schedule: str, namespace: Mapping[str, Any]) -> set[str]:
    """The names the loop's body calls a function of the learner's by, or an
    optimizer's or a model's training method on; empty when it trains nothing (a loop
    that only tabulates the schedule)."""
    called: set[str] = set()
    for node in subtree_nodes(loop):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id != schedule:
            value = namespace.get(func.id)
            if type(value).__name__ in ("function", "Function", "PolymorphicFunction"):
                called.add(func.id)
        elif (
            isinstance(func, ast.Attribute)
            and func.attr in _TRAINING_METHODS
            and isinstance(func.value, ast.Name)
        ):
            called.add(func.value.id)
    return called


_DECAY_SCHEDULES = frozenset(
    {
        "CosineDecay",
        "CosineDecayRestarts",
        "ExponentialDecay",
        "InverseTimeDecay",
        "PolynomialDecay",
    }
)
_STEP_KEYWORDS = frozenset({"decay_steps", "first_decay_steps"})


def _step_argument(call: ast.Call) -> ast.expr | None:
    """What the schedule's step count is written as: its keyword, else its second
    positional argument (after the initial rate, in every decay schedule listed)."""
    for keyword in call.keywords:
        if keyword.arg in _STEP_KEYWORDS:
            return keyword.value
    return call.args[1] if len(call.args) >= 2 else None


def epoch_length_notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """A decay schedule given a count of epochs as its step count (module docstring)."""
    if "Decay(" not in source or "LearningRateScheduler" in source:
        return []
    if len(source) > MAX_CELL_CHARS:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
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
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if called not in _DECAY_SCHEDULES:
            continue
        written = _step_argument(call)
        if not isinstance(written, ast.Name) or "epoch" not in written.id.lower():
            continue
        epochs = namespace.get(written.id)
        if type(epochs) is not int or epochs < 1:
            continue
        name = statement.targets[0].id
        schedule = namespace.get(name)
        if not _schedule(schedule) or stored(schedule, "decay_steps") != epochs:
            continue
        followers = _followers(schedule, namespace)
        if not followers:
            continue
        return [_epoch_note(name, called, written.id, epochs, followers[0][0], written)]
    return []


def _epoch_note(
    name: str, called: str, epochs_name: str, epochs: int, optimizer: str, written: ast.Name
) -> Note:
    text = (
        f"`{name} = {called}(...)` (line {written.lineno}) counts its decay in optimizer "
        f"steps, one per batch, but its step count is `{epochs_name}` ({epochs}), a number of "
        f"epochs: `{optimizer}` follows `{name}` and takes one step per batch, so the rate "
        f"has finished decaying after {epochs} batches, early in training, and the epochs "
        f"after that barely move the weights. Nothing raises. Count the decay in steps: "
        f"set `steps_per_epoch` to the batches one epoch runs (`len(ds)` of a batched "
        f"dataset, `math.ceil(n_rows / batch_size)` for arrays) and fix: "
        f"`{epochs_name} * steps_per_epoch` in place of `{epochs_name}` in line "
        f"{written.lineno}."
    )
    return reports.note(text, "stopped-learning")


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    return epoch_length_notes(source, namespace) or _logged_notes(source, namespace)


def _logged_notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if "for " not in source or len(source) > MAX_CELL_CHARS:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    lines = source.splitlines()
    for loop in tree.body:
        if not (isinstance(loop, ast.For) and isinstance(loop.target, ast.Name)):
            continue
        counter = loop.target.id
        last = namespace.get(counter)
        if type(last) is not int or last < 0:
            continue
        for node in subtree_nodes(loop):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and len(node.args) == 1
                and not node.keywords
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id == counter
                and node.lineno == node.end_lineno
            ):
                continue
            schedule = namespace.get(node.func.id)
            if not _schedule(schedule):
                continue
            trains = _trains(loop, node.func.id, namespace)
            followers = _followers(schedule, namespace)
            named = [f for f in followers if f[0] in trains]
            chosen = named or followers
            if not trains or len(chosen) != 1:
                continue
            optimizer_name, holder = chosen[0]
            steps = _steps(holder)
            passes = last + 1
            if steps is None or steps < _PASSES_FACTOR * passes:
                continue
            return [_note(node, counter, optimizer_name, steps, passes, lines)]
    return []


def _note(
    call: ast.Call, counter: str, optimizer: str, steps: int, passes: int, lines: list[str]
) -> Note:
    written = lines[call.lineno - 1]
    start, end = call.col_offset, call.end_col_offset or 0
    called = written[start:end]
    fixed = (written[:start] + f"{optimizer}.learning_rate" + written[end:]).strip()
    schedule = call.func.id  # type: ignore[attr-defined]
    text = (
        f"`{called}` (line {call.lineno}) evaluates the schedule `{schedule}` at step "
        f"`{counter}` (0 to {passes - 1} here), but `{optimizer}` reads it at its own step "
        f"count, `{optimizer}.iterations`, one per update ({steps} now): the values logged "
        f"are the schedule's first steps, not the rates the updates used. Nothing raises. "
        f"Log the optimizer's current rate instead: write line {call.lineno} as `{fixed}`."
    )
    return reports.note(text, SECTION)
