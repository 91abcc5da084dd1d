"""A learning-rate schedule that fell to ~0 early in fit: training stopped moving.

A Keras schedule counts optimizer steps (batches), not epochs: ``ExponentialDecay(0.1,
decay_steps=1, decay_rate=0.5)`` halves the rate at every batch, so after one epoch of
19 batches it is 0.1 * 0.5**19 ~ 2e-7 and the weights barely move for the rest of fit
(measured on Keras 3.15: 3.6e-13 after 38 steps). Nothing raises; the loss flattens.

The symptom, after a ``fit`` that stepped the optimizer: the optimizer's stored
``_learning_rate`` is a Keras ``LearningRateSchedule`` (a library class: its ``__call__``
is Keras's, eager, no trace) whose rate at the end of fit's first epoch (at a tenth of
fit's steps for a single epoch) is under ``FRACTION`` of its rate at fit's first step,
or whose rate half-way through fit is under ``LATE_FRACTION`` of it (``decay_steps=5``
written for "every 5 epochs": halved every 5 batches, it is gone by the middle of fit).
The schedule is asked at three steps (fit's first, that early one, its last), each an
eager op (~0.3 ms). The fix is the schedule's constructor as written in the cell with
``decay_steps`` set to the number of steps fit ran, so the rate decays over the whole
run, or, for that slower fall, when the stored ``decay_steps`` is fewer than the epochs
fit ran (a count of epochs), that many epochs' batches; a user's own schedule class is never called.

Nothing here imports TensorFlow or prints; every failure leaves the note out.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import is_library_class, stored
from jupyterlab_tfcoach.monitor.training import user_code
from jupyterlab_tfcoach.monitor.training.fit_watch import FitRun

SECTION = "stopped-learning"  # weights that stop changing while training runs
FRACTION = 0.01
# The rate at half of fit's steps, against its start, under which the second half of the
# run is told (decay far faster than the run, though not at once).
LATE_FRACTION = 0.001
MAX_HISTORY_CELLS = 50


def _rate(schedule: Any, step: int) -> float | None:
    try:
        value = float(schedule(step))
    except Exception:
        return None
    return value


def _schedule_of(model: Any) -> Any | None:
    optimizer = stored(model, "optimizer")
    schedule = stored(optimizer, "_learning_rate") if optimizer is not None else None
    if schedule is None:
        return None
    names = [getattr(k, "__name__", "") for k in type(schedule).__mro__]
    if "LearningRateSchedule" not in names or not is_library_class(type(schedule)):
        return None
    return schedule


def _written(sources: list[str], class_name: str) -> tuple[str, ast.Call] | None:
    """The newest ``<...>.<class_name>(...)`` call written in the cells, with its source."""
    for source in sources:
        tree = user_code.parse(source)
        if tree is None:
            continue
        calls = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == class_name)
                or (isinstance(node.func, ast.Name) and node.func.id == class_name)
            )
        ]
        if calls:
            return source, calls[-1]
    return None


def _with_decay_steps(source: str, call: ast.Call, steps: int) -> str | None:
    text = " ".join((ast.get_source_segment(source, call) or "").split())
    tree = user_code.parse(text)
    node = tree.body[0] if tree is not None and tree.body else None
    if not isinstance(node, ast.Expr) or not isinstance(node.value, ast.Call):
        return None
    for keyword in node.value.keywords:
        if keyword.arg == "decay_steps" and keyword.value.end_col_offset is not None:
            start, end = keyword.value.col_offset, keyword.value.end_col_offset
            return user_code.valid_code(text[:start] + str(steps) + text[end:])
    if len(node.value.args) >= 2:
        argument = node.value.args[1]
        if argument.end_col_offset is not None:
            start, end = argument.col_offset, argument.end_col_offset
            return user_code.valid_code(text[:start] + str(steps) + text[end:])
    return None


def _sources(namespace: Mapping[str, Any], cell_source: str) -> list[str]:
    history = namespace.get("In")
    earlier = history[-MAX_HISTORY_CELLS:] if type(history) is list else []
    return [cell_source, *reversed([s for s in earlier if type(s) is str])]


def decay_notes(fits: list[FitRun], namespace: Mapping[str, Any], cell_source: str) -> list[Note]:
    """One note per model whose schedule fell under ``FRACTION`` of its start early in fit."""
    notes: list[Note] = []
    told: set[int] = set()
    for run in fits:
        try:
            if run.model_id in told or run.steps_before is None or run.steps_after is None:
                continue
            steps = run.steps_after - run.steps_before
            model = run.model()
            if model is None or steps < 2:
                continue
            schedule = _schedule_of(model)
            if schedule is None:
                continue
            epochs = run.epochs_run or 1
            early = steps // epochs if epochs >= 2 else max(1, steps // 10)
            start = _rate(schedule, run.steps_before)
            at_early = _rate(schedule, run.steps_before + early)
            if start is None or at_early is None or start <= 0:
                continue
            late = False
            if at_early >= FRACTION * start:
                # A slower fall that still leaves the second half of fit without a rate
                # (``decay_steps=5`` meant as epochs, with 19 batches per epoch).
                halfway = _rate(schedule, run.steps_before + steps // 2)
                if halfway is None or steps // 2 <= early or halfway >= LATE_FRACTION * start:
                    continue
                early, at_early, late = steps // 2, halfway, True
            end = _rate(schedule, run.steps_after)
            told.add(run.model_id)
            notes.append(
                _note(
                    run,
                    model,
                    schedule,
                    steps,
                    early,
                    epochs,
                    (start, at_early, end),
                    namespace,
                    cell_source,
                    late,
                )
            )
        except Exception:
            continue
    return notes


def _note(
    run: FitRun,
    model: Any,
    schedule: Any,
    steps: int,
    early: int,
    epochs: int,
    rates: tuple[float, float, float | None],
    namespace: Mapping[str, Any],
    cell_source: str,
    late: bool = False,
) -> Note:
    start, at_early, end = rates
    class_name = type(schedule).__name__
    name = name_bound_to(id(model), namespace)
    who = f"`{name}`" if name else "the model"
    if late:
        moment = "half-way through fit"
    elif epochs >= 2:
        moment = "after the first epoch"
    else:
        moment = f"after {early} of its {steps} steps"
    written = _written(_sources(namespace, cell_source), class_name)
    shown = (
        " ".join((ast.get_source_segment(written[0], written[1]) or "").split()) if written else ""
    )
    what = f"`{shown}`" if shown else f"its {class_name}"
    text = (
        f"{who}'s learning rate follows {what}, which counts optimizer steps (batches), not "
        f"epochs: it was {start:.3g} at fit's first step and {at_early:.3g} {moment} "
        f"(step {early})"
    )
    if end is not None:
        text += f", {end:.3g} at the end (step {steps})"
    if late:
        text += (
            ": it fell under 0.1% of its start by half-way, so the weights barely moved for "
            "the second half of fit (no error: the loss just stops improving)."
        )
    else:
        text += (
            ": it fell under 1% of its start almost at once, so the weights barely moved for "
            "the rest of fit (no error: the loss just stops improving)."
        )
    # A ``decay_steps`` smaller than the epochs run reads as a count of epochs: that many
    # epochs' batches keeps the pace meant.
    per_epoch = steps // epochs if epochs >= 2 else 0
    written_steps = stored(schedule, "decay_steps")
    meant = (
        written_steps * per_epoch
        if late and type(written_steps) is int and per_epoch and 1 <= written_steps < epochs
        else None
    )
    fix = None
    if written and meant:
        fix = _with_decay_steps(written[0], written[1], meant)
        if fix:
            text += (
                f" If {written_steps} was meant as epochs, it is {meant} steps here "
                f"({written_steps} times {per_epoch} batches per epoch): compile a fresh "
                f"model with `{fix}` and fit again."
            )
            return reports.note(text, SECTION)
    fix = _with_decay_steps(written[0], written[1], steps) if written else None
    if fix:
        text += (
            f" Decay over the whole run ({steps} steps here: batches per epoch times "
            f"epochs), then compile a fresh model with it and fit again: `{fix}`."
        )
    else:
        text += f" Set decay_steps to the number of steps fit runs ({steps} here)."
    return reports.note(text, SECTION)
