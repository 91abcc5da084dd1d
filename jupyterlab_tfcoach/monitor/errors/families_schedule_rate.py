"""A learning rate set on an optimizer whose rate is a schedule (issue #25):
``Adam(ExponentialDecay(...))`` compiled, then ``fit(..., callbacks=[LearningRateScheduler
(...)])`` or ``ReduceLROnPlateau``. (A rate assigned in the learner's own line is read by the
keras-arguments family instead.)

Keras computes such an optimizer's rate from the schedule at every step, so it refuses a
new value (``TypeError: This optimizer was created with a LearningRateSchedule ... not
settable``); the message never names the callback that tried. The reading finds, in the
failing ``fit``'s ``callbacks=``, the Keras callbacks that set the rate (by their class's
MRO, or as constructed on the line) and says the two ways out: the schedule alone (it
already changes the rate; a warm-up is the schedule's own ``warmup_steps`` where it has
one), or a float rate for the callback to change. The fix is the fit call without the
callback, which runs.
"""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, code, rewrite
from jupyterlab_tfcoach.monitor.errors.failing_line import FailingLine, value_of
from jupyterlab_tfcoach.monitor.errors.family_record import (
    ErrorFamily,
    Finding,
    Message,
    Recognised,
)
from jupyterlab_tfcoach.monitor.stored_state import module_of_class, mro_of_class

_type_name = type.__dict__["__name__"].__get__
# Module 3's section on callbacks and what they change during fit.
SECTION = "callback-mode"
_NOT_SETTABLE = re.compile(
    r"created with a `LearningRateSchedule` object as its `learning_rate` constructor "
    r"argument, hence its learning rate is not settable"
)
# Keras's callbacks that assign the optimizer's learning rate.
_RATE_SETTERS = ("LearningRateScheduler", "ReduceLROnPlateau")
_FIT_METHODS = ("fit",)


def _sets_rate(element: ast.expr, line: FailingLine, context: ErrorContext) -> bool:
    if isinstance(element, ast.Call):
        func = element.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name in _RATE_SETTERS
    found, value = value_of(element, line.frame, context)
    if not found or value is None:
        return False
    try:
        return any(
            _type_name(base) in _RATE_SETTERS
            and str(module_of_class(base) or "").startswith("keras")
            for base in mro_of_class(type(value))
        )
    except Exception:
        return False


def _read_schedule_rate(
    error: Recognised, line: FailingLine, context: ErrorContext
) -> Finding | None:
    del error  # the message is the whole of what is recognised
    keras = context.module_alias("keras", "keras")
    ways = (
        "either keep the schedule alone (it already changes the rate at every step; a "
        f"warm-up is a schedule's own, `{keras}.optimizers.schedules.CosineDecay(..., "
        "warmup_target=..., warmup_steps=...)`), or build the optimizer with a float "
        "`learning_rate` and let the callback change it"
    )
    call = line.call
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in _FIT_METHODS
    ):
        # A rate assigned in the learner's own line is the keras-arguments family's: it
        # names the assignment and rebuilds the schedule from the new rate.
        return None
    keyword = next((k for k in call.keywords if k.arg == "callbacks"), None)
    if keyword is None or not isinstance(keyword.value, (ast.List, ast.Tuple)):
        return None
    setters = [e for e in keyword.value.elts if _sets_rate(e, line, context)]
    if len(setters) != 1:
        return None
    setter = setters[0]
    written = line.frame.segment(setter) or ""
    model = line.frame.segment(call.func.value) or "the model"
    rule = (
        f"{code(written) if len(written) <= 60 else 'the callback'} sets the learning rate "
        f"of {code(model)}'s optimizer at every epoch, but that optimizer was built on a "
        "LearningRateSchedule, which Keras evaluates at every step, so its rate cannot be "
        "assigned: " + ways
    )
    others = [e for e in keyword.value.elts if e is not setter]
    if others:
        kept = [line.frame.segment(e) for e in others]
        if not all(kept):
            return Finding(rule + ".", None)
        replacement = f"callbacks=[{', '.join(k for k in kept if k)}]"
        fixed = rewrite(line.frame, line.statement or call, keyword, replacement)
    else:
        fixed = _without_keyword(line, call, keyword)
    fix = f"with the schedule alone, {code(fixed)}" if fixed and "\n" not in fixed else None
    return Finding(rule + ".", fix)


def _without_keyword(line: FailingLine, call: ast.Call, keyword: ast.keyword) -> str | None:
    """The failing statement with ``keyword`` left out of ``call``."""
    func = line.frame.segment(call.func)
    parts = [line.frame.segment(a) for a in call.args]
    parts += [line.frame.segment(k) for k in call.keywords if k is not keyword]
    if not func or not all(parts):
        return None
    return rewrite(
        line.frame,
        line.statement or call,
        call,
        f"{func}({', '.join(p for p in parts if p)})",
    )


SCHEDULE_RATE = ErrorFamily(
    "a learning rate set on an optimizer built on a schedule",
    messages=(Message(_NOT_SETTABLE),),
    read=_read_schedule_rate,
    section=SECTION,
    exception_type="TypeError",
)
