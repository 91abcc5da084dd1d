"""A ``LearningRateScheduler`` schedule whose parameters are written ``(lr, epoch)``.

Keras calls the schedule as ``schedule(epoch, lr)``, by position, epoch first. Written
``def schedule(lr, epoch): return lr * 0.9``, the parameter named ``lr`` receives the epoch
number, so the "decayed" learning rate is ``0, 0.9, 1.8, 2.7, ...``: the first epoch does
not train, then the rate grows with the epoch and wrecks the weights. Nothing raises; the
rates are in the History, under ``learning_rate``.

Told in the cell that fits with it: after a completed cell holding
``LearningRateScheduler`` and ``.fit(`` (substring tests otherwise), each
``LearningRateScheduler(f)`` written in the cell, ``f`` a lambda written there or a name
holding a Python function, whose first two parameters read as a rate then an epoch (the
first's name holds ``lr`` or ``rate``, the second's ``epoch`` or is ``e``/``ep``/``step``),
and the model whose ``fit`` the cell calls logged learning rates (its stored History's
``learning_rate``) that start at 0 or rise at every epoch: the epoch numbers the rate was
computed from. The fix is the definition with the parameters in Keras's order.
"""

from __future__ import annotations

import ast
import itertools
import types
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, stored
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "callback-mode"
MAX_CELL_CHARS = 50_000
MAX_RATES = 10_000
_EPOCH_NAMES = frozenset({"e", "ep", "step", "i", "n", "t"})


def _rate_like(name: str) -> bool:
    lowered = name.lower()
    return "lr" in lowered or "rate" in lowered


def _epoch_like(name: str) -> bool:
    lowered = name.lower()
    return "epoch" in lowered or lowered in _EPOCH_NAMES


def _parameters(schedule: ast.expr, namespace: Mapping[str, Any]) -> tuple[str, list[str]] | None:
    """(what the schedule is called in the note, its positional parameter names)."""
    if isinstance(schedule, ast.Lambda):
        return "lambda", [arg.arg for arg in schedule.args.args]
    if isinstance(schedule, ast.Name):
        function = namespace.get(schedule.id)
        if type(function) is not types.FunctionType:
            return None
        code = function.__code__
        return schedule.id, list(code.co_varnames[: code.co_argcount])
    return None


def _logged_rates(model: Any) -> list[float] | None:
    history = stored(model, "history")
    logged = (instance_dict(history) or {}).get("history") if history is not None else None
    rates = logged.get("learning_rate") if type(logged) is dict else None
    if type(rates) is not list or len(rates) < 2 or len(rates) > MAX_RATES:
        return None
    try:
        return [float(rate) for rate in rates]
    except Exception:
        return None


def _epoch_driven(rates: list[float]) -> bool:
    return rates[0] == 0.0 or all(b > a for a, b in itertools.pairwise(rates))


def _fixed_definition(
    schedule: ast.expr, shown: str, names: list[str], source: str, tree: ast.Module
) -> str:
    swapped = [names[1], names[0], *names[2:]]
    if isinstance(schedule, ast.Lambda):
        body = ast.get_source_segment(source, schedule.body) or ast.unparse(schedule.body)
        return f"lambda {', '.join(swapped)}: {body}"
    return f"def {shown}({', '.join(swapped)}):"


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    if (
        not source
        or len(source) > MAX_CELL_CHARS
        or "LearningRateScheduler" not in source
        or ".fit(" not in source
    ):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    fitted = [
        namespace.get(call.func.value.id)
        for call in calls
        if call_name(call) == "fit"
        and isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Name)
    ]
    for call in calls:
        if call_name(call) != "LearningRateScheduler":
            continue
        schedule = call.args[0] if call.args else None
        schedule = schedule or next((k.value for k in call.keywords if k.arg == "schedule"), None)
        found = _parameters(schedule, namespace) if schedule is not None else None
        if found is None or len(found[1]) < 2:
            continue
        shown, names = found
        if not (_rate_like(names[0]) and _epoch_like(names[1])):
            continue
        rates = next((r for r in map(_logged_rates, fitted) if r and _epoch_driven(r)), None)
        if rates is None:
            continue
        assert schedule is not None
        figures = ", ".join(f"{rate:.4g}" for rate in rates[:5])
        fix = _fixed_definition(schedule, shown, names, source, tree)
        which = "the lambda" if shown == "lambda" else f"`{shown}`"
        text = (
            f"{which}, given to `LearningRateScheduler` (line {call.lineno} of this cell), "
            f"takes `({names[0]}, {names[1]})`, but Keras calls a schedule as "
            f"`schedule(epoch, lr)`, by position: `{names[0]}` receives the epoch number "
            f"and `{names[1]}` the current rate. The rates fit used were {figures}"
            f"{', ...' if len(rates) > 5 else ''} (`history.history['learning_rate']`): "
            "computed from the epoch numbers, not decayed from the rate; nothing raises. "
            f"Put the epoch first: `{fix}`."
        )
        return [reports.note(text, SECTION)]
    return []
