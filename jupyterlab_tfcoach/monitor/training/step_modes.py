"""Keras methods the user wrote that run the model in the wrong mode, or train while
they should only measure: silent bugs told by their symptom after fit/evaluate.

Keras 3 runs a layer called without ``training`` in inference mode (measured on Keras
3.15), and ``fit`` passes no flag to a custom ``train_step``: the step must write it.
Three mistakes that raise nothing, each named at the line the user wrote (read with
``ast`` from the method's source, ``user_code.method_source``: never run):

- a custom ``train_step`` that calls the model as ``self(x)`` (or ``self.call(x)``, or
  with ``training=False``) and never with the flag, while the model holds a Dropout-like
  or BatchNormalization layer (``training_mode.mode_layers``: a frozen
  BatchNormalization does not count). Symptom: dropout never drops during fit, and
  BatchNormalization's moving statistics never move (after fit its moving mean is
  still all zeros, said when so). Fix: ``self(x, training=True)`` in that statement.
  A model without such layers behaves the same in both modes: silent.
- a custom ``test_step`` that updates weights (``apply_gradients``/``minimize``,
  ``apply`` on an optimizer, ``assign_sub``): evaluate, and fit's validation, train the
  model on the data they should only score. Symptom, measured by ``fit_watch`` around
  each evaluate of a model with its own ``test_step``: trainable weights changed and the
  optimizer stepped during evaluate. A measurement that saw nothing change keeps the
  note out. Fix: delete the update line.
- a ``call`` of the user's (a layer or the model) that passes ``training=False`` as a
  literal to a sublayer that behaves differently in training (``self.drop(x,
  training=False)``): that layer never trains, in fit too (dropout never drops,
  BatchNormalization's moving mean stays at zeros). Fix: pass the flag through,
  ``training=training``, with a ``training=None`` parameter Keras fills in. (Its mirror,
  ``training=True`` in ``call``, is ``fit_symptoms._forced_training``; ``training=True``
  in ``test_step`` is ``model_source``; randomness applied whatever ``training`` is, in
  ``call``, is ``model_source`` too.)

Cost: runs only after a cell in which fit or evaluate ran; each method's source is
parsed once (``user_code``'s cache) and its reading kept by code object; the model's
layers are walked once per run (``MAX_LAYERS``). The measurement around evaluate is
``fit_watch``'s (one copy of the trainable weights, only for a model with its own
``test_step``). Nothing here imports TensorFlow, runs a user property, or raises.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.training_mode import mode_layers, moving_mean_untouched
from jupyterlab_tfcoach.monitor.training import user_code
from jupyterlab_tfcoach.monitor.training.fit_watch import CellFits, EvaluationRun, FitRun
from jupyterlab_tfcoach.monitor.training.model_source import (
    class_display_name,
    header_with_training,
    own_function,
    self_attribute,
    user_classes,
)

SECTION = "training-argument"
MAX_CACHED = 256
_NORMALIZATION = "BatchNormalization"
# Calls that change weights: an optimizer's update, or plain gradient descent by hand.
_UPDATES = frozenset({"apply_gradients", "minimize", "assign_sub"})


@dataclass(frozen=True)
class WrittenCall:
    """A call the user wrote in a method: where, the statement as written (one line),
    and the statement fixed (valid Python) when there is one to print."""

    line: int  # in the cell (file) the method was defined in
    statement: str
    callee: str
    fixed: str | None = None


_readings: dict[tuple[str, int, str, str], list[WrittenCall]] = {}


def _cached(function: Any, kind: str, read: Any) -> list[WrittenCall]:
    code = getattr(function, "__code__", None)
    if code is None:
        return []
    key = (code.co_filename, code.co_firstlineno, code.co_name, kind)
    found = _readings.get(key)
    if found is None:
        method = user_code.method_source(function)
        try:
            found = read(method) if method is not None else []
        except Exception:
            found = []
        if len(_readings) > MAX_CACHED:
            _readings.clear()
        _readings[key] = found
    return found


def _text(source: str, node: ast.AST) -> str:
    segment = ast.get_source_segment(source, node) or ""
    return " ".join(segment.split())[:200]


def _is_literal(node: ast.AST, *values: Any) -> bool:
    return isinstance(node, ast.Constant) and any(node.value is v for v in values)


def _model_call(node: ast.AST) -> bool:
    """``self(...)`` or ``self.call(...)``."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Name):
        return func.id == "self"
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "call"
        and isinstance(func.value, ast.Name)
        and func.value.id == "self"
    )


def _with_flag(source: str, call: ast.Call) -> str | None:
    """``self(x)``/``self.call(x)``/``self(x, training=False)`` -> ``self(x, training=True)``
    (the arguments as written)."""
    parts = [_text(source, argument) for argument in call.args]
    parts += [_text(source, keyword) for keyword in call.keywords if keyword.arg != "training"]
    if not all(parts):
        return None
    return user_code.valid_code(f"self({', '.join([*parts, 'training=True'])})")


def _unflagged_calls(method: user_code.MethodSource) -> list[WrittenCall]:
    source = method.source
    calls = [node for node in ast.walk(method.tree) if isinstance(node, ast.Call)]
    found: list[WrittenCall] = []
    for call in calls:
        if not _model_call(call):
            continue
        keyword = next((k for k in call.keywords if k.arg == "training"), None)
        if keyword is not None and not _is_literal(keyword.value, False, None):
            return []  # the model runs with a flag (True, or a name): nothing to say
        statement = user_code.enclosing_statement(method.tree, call)
        written = _text(source, statement if statement is not None else call)
        call_text = _text(source, call)
        new_call = _with_flag(source, call)
        fixed = None
        if new_call is not None and written.count(call_text) == 1:
            fixed = user_code.valid_code(written.replace(call_text, new_call))
        found.append(
            WrittenCall(
                method.first_line + call.lineno - 1,
                written,
                _text(source, call.func),
                fixed,
            )
        )
    found.sort(key=lambda call: call.line)
    return found


def _is_update(call: ast.Call) -> bool:
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr in _UPDATES:
        return True
    # ``apply`` of an optimizer (``self.optimizer.apply(...)``, ``opt.apply(...)``).
    return func.attr == "apply" and "opt" in ast.unparse(func.value).lower()


def _updates(method: user_code.MethodSource) -> list[WrittenCall]:
    found = []
    for node in ast.walk(method.tree):
        if isinstance(node, ast.Call) and _is_update(node):
            statement = user_code.enclosing_statement(method.tree, node)
            written = _text(method.source, statement if statement is not None else node)
            callee = _text(method.source, node.func)
            found.append(WrittenCall(method.first_line + node.lineno - 1, written, callee))
    found.sort(key=lambda call: call.line)
    return found


def unflagged_model_calls(function: Any) -> list[WrittenCall]:
    """The calls of the model in ``function`` (a train_step) that pass no training flag
    (or ``False``/``None``); empty when some call passes one."""
    return _cached(function, "unflagged", _unflagged_calls)


def weight_updates(function: Any) -> list[WrittenCall]:
    """The calls in ``function`` (a test_step) that change weights."""
    return _cached(function, "updates", _updates)


def _layers(kinds: list[str]) -> str:
    return " and ".join(kinds) + " layers" if len(kinds) > 1 else f"a {kinds[0]} layer"


def _effects(kinds: list[str], evidence: str) -> str:
    effects = []
    if any(kind != _NORMALIZATION for kind in kinds):
        effects.append("dropout never drops a unit")
    if _NORMALIZATION in kinds:
        effects.append(
            "BatchNormalization normalizes with its moving statistics and never updates "
            f"them{evidence}"
        )
    return " and ".join(effects)


class StepModeNotes:
    """One cell's notes about train/test steps and calls run in the wrong mode."""

    def __init__(self, namespace: Mapping[str, Any]) -> None:
        self.namespace = namespace
        self.notes: list[Note] = []
        self._told: set[tuple[str, int]] = set()

    def _once(self, cause: str, key: int) -> bool:
        if (cause, key) in self._told:
            return False
        self._told.add((cause, key))
        return True

    def collect(self, cell: CellFits) -> list[Note]:
        for run in cell.fits:
            model = run.model()
            if model is None:
                continue
            try:
                self._fit(run, model)
            except Exception:
                continue
        for evaluation in cell.evaluations:
            model = evaluation.model()
            if model is None:
                continue
            try:
                self._evaluation(evaluation, model)
            except Exception:
                continue
        return self.notes

    # ------------------------------------------------------------ train_step
    def _fit(self, run: FitRun, model: Any) -> None:
        if run.epochs_run == 0:
            return
        if run.custom_train_step:
            self._train_step(model)
        for cls, instance in user_classes(model):
            self._inference_forced(cls, instance)

    def _train_step(self, model: Any) -> None:
        cls = type(model)
        function = own_function(cls, "train_step")
        calls = unflagged_model_calls(function) if function is not None else []
        if not calls or not self._once("train_step", id(cls)):
            return
        kinds = mode_layers(model)
        if not kinds:
            return  # a model without such layers behaves the same in both modes
        call = own_function(cls, "call")
        if call is not None and user_code.forced_training_calls(call):
            return  # its call forces training mode itself (``fit_symptoms`` tells that)
        first = calls[0]
        name = class_display_name(cls)
        evidence = ""
        if _NORMALIZATION in kinds and moving_mean_untouched(model):
            evidence = " (after this fit, its moving mean is still all zeros)"
        flag = (
            "with `training=False`"
            if "training=False" in first.statement
            else "without `training=True`"
        )
        fix = (
            f"Write `{first.fixed}`."
            if first.fixed
            else "Call the model as `self(x, training=True)` there."
        )
        text = (
            f"`{name}.train_step` calls the model {flag} ("
            f"{user_code.place_of(own_function(cls, 'train_step'), first.line, self.namespace)}: "
            f"`{first.statement}`), and the model holds {_layers(kinds)}. fit passes no "
            f"flag to a custom train_step, and a layer called without one runs as in "
            f"prediction in every training step: {_effects(kinds, evidence)}. The model "
            f"trains without what those layers were added for, and nothing raises. {fix}"
        )
        self.notes.append(reports.note(text, SECTION))

    # ----------------------------------------------- training=False in call
    def _inference_forced(self, cls: type, instance: Any) -> None:
        function = own_function(cls, "call")
        if function is None:
            return
        for forced in user_code.forced_training_calls(function, flag=False):
            target = self_attribute(instance, forced.callee)
            kinds = mode_layers(target) if target is not None else []
            if not kinds or not self._once("call_false", id(cls)):
                continue
            self.notes.append(self._inference_forced_note(cls, function, forced, kinds, target))
            return

    def _inference_forced_note(
        self,
        cls: type,
        function: Any,
        forced: user_code.ForcedTraining,
        kinds: list[str],
        target: Any,
    ) -> Note:
        name = class_display_name(cls)
        evidence = ""
        if _NORMALIZATION in kinds and moving_mean_untouched(target):
            evidence = " (after this fit, its moving mean is still all zeros)"
        fixed = user_code.valid_code(
            forced.statement.replace("training=False", "training=training")
        )
        method = user_code.method_source(function)
        header = ""
        has_flag = False
        if method is not None:
            definition = next((n for n in method.tree.body if isinstance(n, ast.FunctionDef)), None)
            if definition is not None:
                has_flag = "training" in user_code.keyword_parameters(method)
                line = method.source.splitlines()[definition.lineno - 1].strip()
                header = "" if has_flag else (header_with_training(line) or "")
        if fixed and has_flag:
            fix = f"Pass the flag through: `{fixed}`."
        elif fixed and header:
            fix = f"Pass the flag through: `{header} ...` and `{fixed}`."
        else:
            fix = (
                "Pass the flag through: give `call` a `training=None` parameter and pass "
                "`training=training`."
            )
        text = (
            f"`{name}.call` passes `training=False` to `{forced.callee}` ("
            f"{user_code.place_of(function, forced.line, self.namespace)}: "
            f"`{forced.statement}`), which holds {_layers(kinds)}: it runs "
            f"as in prediction in fit too, so {_effects(kinds, evidence)}. Keras fills in "
            f"`call`'s `training` (True in fit, False in predict and evaluate). {fix}"
        )
        return reports.note(text, SECTION)

    # ------------------------------------------------------------- test_step
    def _evaluation(self, evaluation: EvaluationRun, model: Any) -> None:
        cls = type(model)
        function = own_function(cls, "test_step")
        updates = weight_updates(function) if function is not None else []
        if not updates:
            return
        steps = evaluation.optimizer_steps or 0
        if evaluation.compared and not evaluation.changed and steps <= 0:
            return  # measured: nothing changed (the update never ran)
        if not self._once("test_step", id(cls)):
            return
        first = updates[0]
        name = class_display_name(cls)
        which = "fit's validation" if evaluation.validation else "this evaluate"
        measured = []
        if evaluation.changed:
            measured.append(
                f"{which} changed {evaluation.changed} of the model's "
                f"{evaluation.compared} trainable weights"
            )
        if steps > 0:
            measured.append(f"the optimizer took {steps} steps")
        symptom = f" ({' and '.join(measured)})" if measured else ""
        text = (
            f"`{name}.test_step` updates the weights ("
            f"{user_code.place_of(own_function(cls, 'test_step'), first.line, self.namespace)}: "
            f"`{first.statement}`), so evaluate, and fit's validation, train the model on "
            f"the data they should only score{symptom}: two evaluations of the same data "
            f"differ, and the validation data leaks into training. A test step computes "
            f"the predictions, the loss and the metrics only: delete that line (the "
            f"tape and the gradient it computed are then not needed either)."
        )
        self.notes.append(reports.note(text, SECTION))


def step_mode_notes(cell: CellFits, namespace: Mapping[str, Any]) -> list[Note]:
    """The notes of one cell's fit and evaluate calls about steps run in the wrong mode."""
    if not cell.fits and not cell.evaluations:
        return []
    try:
        return StepModeNotes(namespace).collect(cell)
    except Exception:
        return []
