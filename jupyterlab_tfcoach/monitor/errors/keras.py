"""Keras errors about where weights live: read-only weights, an optimizer that meets new
variables, state added to a built layer. Each names the user's statement when the failing
cell line is an assignment or a call we can read."""

from __future__ import annotations

import ast
import re

from jupyterlab_tfcoach.monitor.errors.context import ErrorContext, ParsedError, code

_NO_SETTER = re.compile(r"property '(?P<attribute>\w+)' of '(?P<cls>\w+)' object has no setter")


def _assignment_to(context: ErrorContext, attribute: str) -> tuple[str, str] | None:
    """(target, value) source of the failing ``x.attribute = value`` statement."""
    for frame in context.frames():
        statement = frame.statement()
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Attribute)
            and statement.targets[0].attr == attribute
        ):
            target = frame.segment(statement.targets[0])
            value = frame.segment(statement.value)
            if target and value and "\n" not in value:
                return target, value
    return None


def explain_read_only_weight(parsed: ParsedError, context: ErrorContext) -> tuple[str, str] | None:
    """``dense.kernel = dense.kernel * 0.5``: Keras weights are properties without a setter."""
    match = _NO_SETTER.search(parsed.message)
    if match is None or parsed.type != "AttributeError":
        return None
    attribute, cls = match.group("attribute"), match.group("cls")
    if attribute not in ("kernel", "bias", "embeddings", "gamma", "beta", "moving_mean"):
        return None
    found = _assignment_to(context, attribute)
    fix = (
        code(f"{found[0]}.assign({found[1]})")
        if found
        else code(f"layer.{attribute}.assign(new_value)")
    )
    return (
        f"`{attribute}` of a Keras `{cls}` layer is its weight variable, which you cannot replace "
        f"(and replacing it with a tensor would stop it training). Change the variable's values "
        f"in place instead: {fix}.",
        "rebinding-variables",
    )


def explain_unknown_variable(parsed: ParsedError, context: ErrorContext) -> tuple[str, str] | None:
    """An optimizer built for some variables is given other ones."""
    if "This optimizer can only be called for the variables it was originally built" not in (
        parsed.full_message
    ):
        return None
    from jupyterlab_tfcoach.monitor.errors.families_keras_lifecycle import (
        explain_shared_optimizer,
    )

    shared = explain_shared_optimizer(parsed, context)
    if shared is not None:
        return shared
    from jupyterlab_tfcoach.monitor.errors.optimizer_variables import (
        explain_optimizer_other_variables,
    )

    other = explain_optimizer_other_variables(parsed, context)
    if other is not None:
        return other
    return (
        "The optimizer was built for the variables it saw first, and now gets different "
        "variable objects. Usually the model creates its variables again on every call "
        "(`self.w = tf.Variable(...)` inside `__call__`/`call()`): create them once, in "
        "`__init__` or `build()` (or guarded by `if self.w is None:`). If you built a new "
        "model on purpose, create a new optimizer for it too.",
        "parameters-are-variables",
    )


def explain_state_after_build(parsed: ParsedError, context: ErrorContext) -> tuple[str, str] | None:
    """A layer or weight assigned to a Keras model/layer that is already built."""
    if "cannot add new elements of state" not in parsed.message:
        return None
    from jupyterlab_tfcoach.monitor.errors.families_keras_api import assigns_weight_list

    if assigns_weight_list(context):
        return None  # ``layer.trainable_weights = ...``: a family of the generic entry
    where = ""
    for frame in context.frames():
        statement = frame.statement()
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = frame.segment(statement.targets[0])
            if target:
                where = f"{code(target + ' = ...')} adds "
                break
    start = where or "This adds "
    return (
        f"{start}a new layer or weight to a Keras layer or model that is already built (it "
        "ran once), and Keras fixes its state at that point. Create every sub-layer in "
        "`__init__()` and every weight in `build()`, then build a new model object "
        "(re-run the cell that creates it) instead of attaching layers afterwards.",
        "keras-weights-in-build",
    )
