"""A model with Dropout or BatchNormalization called in the wrong mode in a custom loop.

Keras 3 runs a layer called without ``training`` in inference mode (measured on Keras
3.15: ``Dropout`` drops nothing, ``BatchNormalization`` uses and never updates its
moving statistics). ``fit`` passes the flag itself; a custom loop must write it:

- ``logits = model(x)`` inside the ``with tf.GradientTape()`` block of a step that
  applies the gradients: the model trains without dropout, and BatchNormalization's
  moving statistics stay at their start (mean 0, variance 1), so the trained model
  normalizes test data with statistics it never learned;
- ``model(x_test, training=True)`` outside any tape: predictions with random dropout
  (two calls on the same input differ), BatchNormalization normalizes with the test
  batch's own statistics and moves its moving statistics toward the test data, and
  Keras's random augmentation layers (``RandomFlip``, ``RandomRotation``,
  ``RandomContrast``..., ``MixUp``; nested in a ``Sequential`` too) alter the test inputs
  at random (told for a model with weights: an augmentation pipeline alone is called in
  training mode on purpose, to look at or make augmented images). Called with no flag
  those layers already run as in training in Keras 3, so a tape's call without the flag
  is not told for them.

Read from the cell's source (``ast``, ``loop_structure``) and the values after the cell:
a call ``<name>(x)`` (one argument, no ``training``) that runs while a tape records (in
the tape's block, or in a function of the cell called there) in a cell that applies
gradients (``apply_gradients``, ``apply``, ``minimize``, ``assign_sub``: a tape taken
for input gradients, a saliency map, is not a training step), or ``<name>(...,
training=True)`` that runs outside every tape, in no function that takes a tape itself.
``<name>`` must hold a Keras layer or model among whose layers (as Keras stores them)
are Dropout-like or BatchNormalization layers (a frozen BatchNormalization, ``trainable``
False, runs in inference mode whatever the flag): a model without them behaves the same
in both modes and stays silent. The note names the model, the call and its line, the
layers, and for BatchNormalization after a training step its moving mean still all
zeros when so; the fix is the user's call with the right flag.

Sampling on purpose stays silent: Monte Carlo dropout (or any sampling through the
model's random layers) calls it with ``training=True`` on the same inputs several times
and stacks, averages or measures the spread of the passes; so does a demonstration that
compares two identical training-mode passes with each other (``np.allclose(drop(h,
training=True), drop(h, training=True))``: training-mode dropout is random). A
``training=True`` call outside a tape is such a pass when it repeats over inputs that
do not change (inside a comprehension or a ``for`` loop whose names its arguments do not
use, in a loop that trains nothing) and its results are collected (the comprehension, or
``append``/``+=`` in the loop) or a spread (``std``, ``var``, ``percentile``...) is read
from them later in the cell; so is a call repeated over ``range(...)`` whose counter it
never reads. A model holding BatchNormalization is still told (such passes move its
moving statistics), and so are a single prediction in training mode and one per batch of
a loop over the data.
For such sampling passes of a model that holds dropout too, the note keeps the dropout in
training mode, as meant, and names BatchNormalization as the problem; the fix runs only
the dropout in training mode (``dropout_passes.py``: for a ``Sequential`` model, the
layers before the first dropout once with ``training=False``, the rest as the sampler).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import (
    instance_dict,
    keras_layers,
    keras_trainable_flag,
    keras_variables,
    library_attribute,
)
from jupyterlab_tfcoach.monitor.symptoms.dropout_passes import (
    dropout_passes,
    normalization_effect,
    split_advice,
)
from jupyterlab_tfcoach.monitor.symptoms.loop_structure import (
    ParsedCell,
    call_name,
    library_class_names,
)
from jupyterlab_tfcoach.monitor.syntax import SPREAD_REDUCTIONS

SECTION = "training-argument"
MAX_NOTES = 2
MAX_LAYERS = 500
# Keras layers whose training and inference behaviours differ (their bases included:
# SpatialDropout1D derives from Dropout).
_MODE_LAYERS = ("Dropout", "GaussianDropout", "GaussianNoise", "AlphaDropout")
_NORMALIZATION = "BatchNormalization"
# Keras's random augmentation layers transform their input only in training mode (their
# classes are ``RandomFlip``, ``RandomRotation``, ``RandomContrast``... and a few mixes).
AUGMENTATION = "augmentation"
_MIXES = frozenset({"MixUp", "CutMix", "AugMix", "RandAugment"})
_UPDATES = frozenset({"apply_gradients", "apply", "minimize", "assign_sub"})
# A loop that trains the model in its body is an epoch loop, not repeated sampling.
_TRAINS = _UPDATES | {"fit", "train_on_batch"}
# What gathers repeated passes in a loop's body (``SPREAD_REDUCTIONS`` read their spread).
_GATHERS = frozenset({"append", "extend"})
# Comparisons of two results: two identical training-mode passes compared with each other
# show that the random layers draw anew (a demonstration, on purpose).
_COMPARISONS = frozenset(
    {"allclose", "array_equal", "array_equiv", "isclose", "equal", "not_equal"}
    | {"assert_allclose", "assert_array_equal", "assert_array_almost_equal"}
)


def mode_layers(value: Any, augmentation: bool = False) -> list[str]:
    """The kinds of mode-dependent layers a Keras layer or model holds, in order:
    ``["Dropout", "BatchNormalization"]``; empty for anything else."""
    if "Layer" not in library_class_names(value):
        return []
    kinds: list[str] = []
    for layer in keras_layers(value, MAX_LAYERS):
        bases = library_class_names(layer)
        kind = _NORMALIZATION if _NORMALIZATION in bases else None
        if kind is not None and keras_trainable_flag(layer) is False:
            continue  # frozen: Keras runs it in inference mode whatever the flag
        kind = kind or next((name for name in _MODE_LAYERS if name in bases), None)
        if kind is None and augmentation and _augments(layer):
            kind = AUGMENTATION
        if kind is not None and kind not in kinds:
            kinds.append(kind)
    if kinds == [AUGMENTATION] and not keras_variables(value, False, MAX_LAYERS):
        # An augmentation pipeline alone (no weights: not a model that predicts), called
        # in training mode on purpose to show or make augmented images.
        return []
    return kinds


def _augments(layer: Any) -> bool:
    """A Keras random augmentation layer (``RandomFlip``, ``MixUp``...)."""
    name = type(layer).__name__
    module = str(getattr(type(layer), "__module__", ""))
    if not module.startswith("keras"):
        return False
    return (name.startswith("Random") and name[6:7].isupper()) or name in _MIXES


def moving_mean_untouched(value: Any) -> bool:
    """Every BatchNormalization layer's moving mean still all zeros (its start)."""
    found = False
    for layer in keras_layers(value, MAX_LAYERS):
        if _NORMALIZATION not in library_class_names(layer):
            continue
        attributes = instance_dict(layer)
        variable = attributes.get("moving_mean") if attributes is not None else None
        read = library_attribute(variable, "numpy") if variable is not None else None
        if read is None:
            return False
        try:
            if read().any():
                return False
        except Exception:
            return False
        found = True
    return found


def _training_keyword(call: ast.Call) -> ast.keyword | None:
    return next((k for k in call.keywords if k.arg == "training"), None)


def _applies_updates(cell: ParsedCell) -> bool:
    return any(
        isinstance(node, ast.Call) and call_name(node) in _UPDATES for node in cell.walk(cell.tree)
    )


def _takes_a_tape(cell: ParsedCell, node: ast.AST) -> bool:
    function = cell.enclosing_function(node)
    return function is not None and any(cell.inside(t, function) for t in cell.tape_blocks)


def _statement_of(cell: ParsedCell, call: ast.Call) -> ast.AST:
    """The one-line statement holding ``call`` that a fix rewrites, else the call."""
    current = cell.parents.get(id(call))
    while current is not None and not isinstance(current, ast.stmt):
        current = cell.parents.get(id(current))
    if isinstance(current, ast.Assign | ast.Expr | ast.AugAssign | ast.Return):
        return current
    return call


def _with_flags(cell: ParsedCell, calls: list[ast.Call], flag: bool) -> list[str]:
    """Each statement holding one of ``calls``, every one of those calls in it given
    ``training=<flag>``: a fix that set the flag on one call of a model and left another
    call of it in the other mode would compare outputs computed in two modes."""
    fixed: list[str] = []
    done: set[int] = set()
    for call in calls:
        statement = _statement_of(cell, call)
        if id(statement) in done:
            continue
        done.add(id(statement))
        together = [c for c in calls if _statement_of(cell, c) is statement]
        if statement is call or len(together) == 1:
            fixed.append(_with_flag(cell, call, flag))
            continue
        written = cell.text(statement)
        for other in together:
            call_text = cell.text(other)
            if written.count(call_text) < 1:
                break
            written = written.replace(call_text, _call_with_flag(cell, other, flag), 1)
        fixed.append(written)
    return fixed


def _call_with_flag(cell: ParsedCell, call: ast.Call, flag: bool) -> str:
    """``call`` as written, with ``training=<flag>``."""
    fixed = ast.Call(
        func=call.func,
        args=call.args,
        keywords=[
            *(k for k in call.keywords if k.arg != "training"),
            ast.keyword(arg="training", value=ast.Constant(flag)),
        ],
    )
    call_text = cell.text(call)
    if _training_keyword(call) is not None or not call_text.endswith(")"):
        return ast.unparse(fixed)
    return f"{call_text[:-1].rstrip().rstrip(',')}, training={flag})"


def _with_flag(cell: ParsedCell, call: ast.Call, flag: bool) -> str:
    """The statement holding ``call`` (one line), with ``training=<flag>`` in the call."""
    fixed = ast.Call(
        func=call.func,
        args=call.args,
        keywords=[
            *(k for k in call.keywords if k.arg != "training"),
            ast.keyword(arg="training", value=ast.Constant(flag)),
        ],
    )
    call_text = cell.text(call)
    new_call = f"{call_text[:-1].rstrip().rstrip(',')}, training={flag})"
    if _training_keyword(call) is not None or not call_text.endswith(")"):
        new_call = ast.unparse(fixed)
    statement: ast.AST = call
    current = cell.parents.get(id(call))
    while current is not None and not isinstance(current, ast.stmt):
        current = cell.parents.get(id(current))
    if isinstance(current, ast.Assign | ast.Expr | ast.AugAssign | ast.Return):
        statement = current
    written = cell.text(statement)
    if statement is not call and call_text in written and written.count(call_text) == 1:
        return written.replace(call_text, new_call)
    return new_call


def _names_in(node: ast.AST, cell: ParsedCell) -> set[str]:
    return {n.id for n in cell.walk(node) if isinstance(n, ast.Name)}


def _assigned_names(cell: ParsedCell, node: ast.AST) -> set[str]:
    """The names the statement holding ``node`` (or the loop's gathering list) binds."""
    current: ast.AST | None = node
    while current is not None and not isinstance(current, ast.stmt):
        current = cell.parents.get(id(current))
    names: set[str] = set()
    if isinstance(current, ast.Assign):
        for target in current.targets:
            names |= _names_in(target, cell)
    elif isinstance(current, ast.AugAssign | ast.AnnAssign):
        names |= _names_in(current.target, cell)
    elif isinstance(current, ast.Expr) and isinstance(current.value, ast.Call):
        func = current.value.func
        if isinstance(func, ast.Attribute) and func.attr in _GATHERS:
            names |= _names_in(func.value, cell)
    return names


def _spread_read(cell: ParsedCell, names: set[str], after: int) -> bool:
    """A spread (``std``, ``var``, ``percentile``...) read from one of ``names`` on a line
    from ``after`` on."""
    for node in cell.walk(cell.tree):
        if not (isinstance(node, ast.Call) and call_name(node) in SPREAD_REDUCTIONS):
            continue
        if getattr(node, "lineno", 0) >= after and names & _names_in(node, cell):
            return True
    return False


def _compared_passes(cell: ParsedCell, call: ast.Call) -> bool:
    """``call`` is compared (``==``, ``np.allclose``...) with another call written the
    same way: two identical training-mode passes set side by side, on purpose."""
    written = cell.text(call)
    current = cell.parents.get(id(call))
    while current is not None and not isinstance(current, ast.stmt):
        comparison = isinstance(current, ast.Compare) or (
            isinstance(current, ast.Call) and call_name(current) in _COMPARISONS
        )
        if comparison and any(
            isinstance(other, ast.Call) and other is not call and cell.text(other) == written
            for other in cell.walk(current)
        ):
            return True
        current = cell.parents.get(id(current))
    return False


def _deliberate_sampling(cell: ParsedCell, call: ast.Call) -> bool:
    """``call`` is one of several passes over the same inputs whose results are gathered
    or measured: Monte Carlo sampling through the random layers, on purpose."""
    if _compared_passes(cell, call):
        return True
    arguments: set[str] = set()
    for argument in [*call.args, *(k.value for k in call.keywords)]:
        arguments |= _names_in(argument, cell)
    current = cell.parents.get(id(call))
    while current is not None and not isinstance(
        current, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    ):
        if isinstance(current, ast.ListComp | ast.GeneratorExp | ast.SetComp):
            loop_names: set[str] = set()
            for generator in current.generators:
                loop_names |= _names_in(generator.target, cell)
            if not arguments & loop_names:
                return True  # the comprehension gathers the passes
        elif isinstance(current, ast.For) and not arguments & _names_in(current.target, cell):
            body = [n for statement in current.body for n in cell.walk(statement)]
            if any(isinstance(n, ast.Call) and call_name(n) in _TRAINS for n in body):
                return False  # an epoch loop: the model trains between the calls
            gathered = any(
                isinstance(n, ast.AugAssign)
                or (isinstance(n, ast.Call) and call_name(n) in _GATHERS)
                for n in body
            )
            if gathered or _over_range(current):
                return True  # the passes are kept, or repeated over range(...) on purpose
            names = _assigned_names(cell, call)
            if names and _spread_read(cell, names, call.lineno):
                return True
        current = cell.parents.get(id(current))
    return False


def _over_range(loop: ast.For) -> bool:
    return (
        isinstance(loop.iter, ast.Call)
        and isinstance(loop.iter.func, ast.Name)
        and loop.iter.func.id == "range"
    )


def notes(cell: ParsedCell, namespace: Mapping[str, Any]) -> list[Note]:
    found: list[Note] = []
    told: set[tuple[str, bool]] = set()  # (model, in a tape): one note each
    training_step = _applies_updates(cell)
    calls = [
        node
        for node in cell.walk(cell.tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    ]
    ordered = sorted(calls, key=lambda call: (call.lineno, call.col_offset))
    for node in ordered:
        taped = id(node) in cell.taped
        if not _told_call(cell, node, taped, training_step):
            continue
        name = node.func.id
        if (name, taped) in told:
            continue
        if not taped and _deliberate_sampling(cell, node):
            # Monte Carlo dropout: the same input passed again and again in training
            # mode, on purpose, to sample predictions (told only with a
            # BatchNormalization, whose moving statistics such calls would move).
            if _NORMALIZATION not in mode_layers(namespace.get(name)):
                continue
            text = _sampling_text(cell, node, name, namespace)
            if text is not None:
                told.add((name, taped))
                found.append(reports.note(text, SECTION))
                if len(found) >= MAX_NOTES:
                    break
                continue
        # Keras 3's random layers default to training mode when no flag reaches them,
        # so only the explicit ``training=True`` outside a tape is told for them.
        kinds = mode_layers(namespace.get(name), augmentation=not taped)
        if not kinds:
            continue
        told.add((name, taped))
        if taped:
            text = _in_tape_text(cell, node, name, kinds, namespace.get(name))
        else:
            # Every call of this model told the same way is fixed in one note: fixing
            # one of two calls compared with each other would mix the two modes.
            same = [
                other
                for other in ordered
                if isinstance(other.func, ast.Name)
                and other.func.id == name
                and id(other) not in cell.taped
                and _told_call(cell, other, False, training_step)
                and not _deliberate_sampling(cell, other)
            ]
            text = _outside_tape_text(cell, same or [node], name, kinds)
        found.append(reports.note(text, SECTION))
        if len(found) >= MAX_NOTES:
            break
    return found


def _sampling_text(
    cell: ParsedCell, call: ast.Call, name: str, namespace: Mapping[str, Any]
) -> str | None:
    """Sampling passes through a model holding dropout and BatchNormalization: the
    dropout is on as meant, the BatchNormalization should not be."""
    if len(call.args) != 1:
        return None
    passes = dropout_passes(name, namespace.get(name), cell.text(call.args[0]), namespace)
    if passes is None:
        return None
    statement = _statement_of(cell, call)
    call_text = cell.text(call)
    written = cell.text(statement)
    fix = f"{split_advice(name)}."
    if passes.setup and statement is not call and call_text in written and "\n" not in written:
        setup = ", ".join(f"`{line}`" for line in passes.setup)
        fix = (
            f"once before the passes, {setup}, then `{written.replace(call_text, passes.sampled)}`."
        )
    return (
        f"Monte Carlo passes that also move BatchNormalization: `{call_text}` "
        f"(line {call.lineno}) runs `{name}` in training mode again and again on the same "
        f"inputs. {normalization_effect(name, passes)}: {fix}"
    )


def _layers(kinds: list[str]) -> str:
    named = ["random augmentation" if kind == AUGMENTATION else kind for kind in kinds]
    if len(named) > 1:
        return " and ".join(named) + " layers"
    return "random augmentation layers" if kinds[0] == AUGMENTATION else f"a {kinds[0]} layer"


def _in_tape_text(cell: ParsedCell, call: ast.Call, name: str, kinds: list[str], model: Any) -> str:
    effects = []
    if any(kind not in (_NORMALIZATION, AUGMENTATION) for kind in kinds):
        effects.append("dropout drops nothing")
    if _NORMALIZATION in kinds:
        effects.append(
            "BatchNormalization normalizes with its moving statistics and never updates them"
        )
    evidence = ""
    if _NORMALIZATION in kinds and moving_mean_untouched(model):
        evidence = f" (after the cell, the moving mean in `{name}` is still all zeros)"
    return (
        f"A model trained in inference mode: `{cell.text(call)}` (line {call.lineno}) runs "
        f"while the tape records, without `training=True`, and `{name}` holds "
        f"{_layers(kinds)}. Called without the flag, Keras runs them as in prediction: "
        f"{' and '.join(effects)}{evidence}, so the model trains without the behaviour "
        f"those layers were added for, and nothing raises. Pass the flag in the training "
        f"step: `{_with_flag(cell, call, True)}`."
    )


def _told_call(cell: ParsedCell, node: ast.Call, taped: bool, training_step: bool) -> bool:
    """A call without the flag while a training step's tape records, or with a literal
    ``training=True`` outside every tape."""
    keyword = _training_keyword(node)
    if taped:
        return keyword is None and len(node.args) == 1 and training_step
    return (
        keyword is not None
        and isinstance(keyword.value, ast.Constant)
        and keyword.value.value is True
        and not _takes_a_tape(cell, node)
    )


def _outside_tape_text(cell: ParsedCell, calls: list[ast.Call], name: str, kinds: list[str]) -> str:
    call = calls[0]
    effects = []
    if any(kind not in (_NORMALIZATION, AUGMENTATION) for kind in kinds):
        effects.append("dropout zeroes random units, so two predictions of one input differ")
    if AUGMENTATION in kinds:
        effects.append(
            "the augmentation layers flip, rotate or recolour the inputs at random, so the "
            "model is scored on altered inputs and two runs give different figures"
        )
    if _NORMALIZATION in kinds:
        effects.append(
            "BatchNormalization uses the batch's own statistics and moves its moving "
            "statistics toward this data"
        )
    fixes = _with_flags(cell, calls, False)
    written = " and ".join(f"`{fix}`" for fix in fixes)
    lines = sorted({c.lineno for c in calls})
    where = (
        f"line {lines[0]}"
        if len(lines) == 1
        else f"lines {', '.join(map(str, lines[:-1]))} and {lines[-1]}"
    )
    texts = [f"`{cell.text(c)}`" for c in calls[:3]]
    shown = texts[0] if len(texts) == 1 else ", ".join(texts[:-1]) + " and " + texts[-1]
    if len(calls) > 3:
        shown += f" ({len(calls)} calls)"
    helper = cell.enclosing_function(call)
    frozen = ""
    if len(calls) > 1:
        frozen = (
            " Set the flag in every call: with one of them left in training mode, their "
            "outputs are computed in two modes and compared anyway."
        )
    if helper is not None and _NORMALIZATION in kinds:
        # A model that a helper of the cell runs in training mode outside any tape is
        # often a fixed network computing features for a loss; freezing it keeps its
        # BatchNormalization in inference mode whatever any caller passes.
        frozen += (
            f" If `{name}` is a fixed network that no step "
            f"trains (features for a loss), also freeze it after building it, "
            f"`{name}.trainable = False`: Keras then runs its BatchNormalization in "
            f"inference mode whatever the flag, and no optimizer changes it."
        )
    where_text = f", in `{helper.name}`" if helper is not None else ""
    return (
        f"A model evaluated in training mode: {shown} ({where}{where_text}) "
        f"run{'s' if len(calls) == 1 else ''} outside every `tf.GradientTape` block, and "
        f"`{name}` holds {_layers(kinds)}. With `training=True` they behave as in a "
        f"training step: {'; '.join(effects)}. The figures computed from it are noisy or "
        f"wrong, and nothing raises.{frozen} Predict and evaluate in inference mode: "
        f"{written}."
    )
