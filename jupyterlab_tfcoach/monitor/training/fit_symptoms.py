"""Silent bugs around Keras 3 ``fit``, told from their symptoms, each cause once.

``fit_watch.py`` measured what each ``fit`` call did; this module says what went wrong
and why, naming what the user wrote (``user_code.py``):

- nothing learned: the model had no trainable weights (a loop that froze every layer,
  the head included), or a custom ``train_step`` computed gradients and never applied
  them, or no weight changed for a reason the code does not show;
- some weights never moved while others did, and they started all zeros: the zeros
  initializer argument the user wrote (a ``stopped_learning`` entry; a weight the
  optimizer's hook already reported is not told again, ``explained``);
- a custom ``train_step`` whose loss never reaches fit's logs (no ``'loss'``, or
  ``loss: 0.0`` every epoch because the loss tracker was never updated), or a metric
  never updated;
- a softmax over a single unit (it always outputs 1.0);
- ``evaluate``/``predict`` on a model whose ``call`` passes ``training=True`` as a literal;
- an output layer, compiled loss, metrics and labels that disagree (``loss_agreement.py``);
- what the methods of the user's own classes do in the compiled functions that ran them
  (``model_source.py``: Python state, randomness ignoring ``training``, ``training=True``
  in ``test_step``, metrics in module globals);
- train and test steps run in the wrong mode (``step_modes.py``: a ``train_step`` calling
  the model without ``training=True``, a ``test_step`` that updates weights, ``call``
  passing ``training=False`` to a Dropout/BatchNormalization sublayer).

What an entry prints as code is valid Python as printed, in the user's names: a layer by
the name they passed, else their class's attribute, else its position in ``model.layers``
(never a name Keras generated, which depends on the session); what training mode does is
said only for the layers the model has.

Only runs after a cell in which ``fit``, ``evaluate`` or ``predict`` ran; a cell where
everything trained and logged pays for a namespace lookup of the model's name at most.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note, VariableChange, variable_change
from jupyterlab_tfcoach.monitor.stored_state import (
    class_attribute,
    contained_values,
    instance_dict,
    is_library_class,
    keras_layers,
    keras_sublayers,
    stored,
)
from jupyterlab_tfcoach.monitor.training import (
    blocked_gradients,
    compile_agreement,
    global_normalization,
    learning_rate_decay,
    loss_parameters,
    loss_sign,
    model_source,
    partial_steps,
    probe_updates,
    refit_loops,
    regrown_pruning,
    sequence_masks,
    step_modes,
    untracked_variables,
    user_code,
    validation_copies,
)
from jupyterlab_tfcoach.monitor.training.evaluation_augmentation import augmentation_notes
from jupyterlab_tfcoach.monitor.training.fit_config import config_entries
from jupyterlab_tfcoach.monitor.training.fit_watch import CellFits, FitRun, WeightOutcome
from jupyterlab_tfcoach.monitor.training.input_ranges import range_notes
from jupyterlab_tfcoach.monitor.training.loss_agreement import loss_notes
from jupyterlab_tfcoach.monitor.training.served_inputs import served_notes
from jupyterlab_tfcoach.monitor.variables import zero_start

FROZEN_SECTION = "trainable-weights"
TRAIN_STEP_SECTION = "custom-train-step"
ZEROS_SECTION = zero_start.SECTION
SOFTMAX_SECTION = "output-activation"
TRAINING_FLAG_SECTION = "training-argument"
MAX_LAYERS = 500
MAX_WEIGHTS_NAMED = 4


def _class_name(obj: Any) -> str:
    name = getattr(type(obj), "__name__", "")
    return name if type(name) is str else "the model"


def _layer_name(layer: Any) -> str | None:
    name = stored(layer, "name")
    return name if type(name) is str else None


def _snake_case(name: str) -> str:
    """Keras's ``naming.to_snake_case``: the prefix of a layer's automatic name."""
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def written_layer_name(layer: Any, source: str) -> str | None:
    """The layer's name if the user chose it (``name="head"``), None when Keras made it
    up (``my_dense_10``: the class in snake case and a counter that depends on how many
    such layers the session created, so the learner cannot know or type it)."""
    name = _layer_name(layer)
    if not name:
        return None
    prefix = _snake_case(getattr(type(layer), "__name__", "") or "")
    automatic = name == prefix or re.fullmatch(re.escape(prefix) + r"_\d+", name)
    if not automatic or f'"{name}"' in source or f"'{name}'" in source:
        return name
    return None


def _layer_path(weight: WeightOutcome) -> str | None:
    """The path of the layer holding ``weight`` ("encoder/dense/bias" -> "encoder/dense")."""
    layer, _, _ = weight.path.rpartition("/")
    return layer or None


def _is_input_layer(layer: Any) -> bool:
    return getattr(type(layer), "__name__", "") == "InputLayer"


def _public_layers(model: Any) -> list[Any]:
    """What ``model.layers`` returns, read as Keras stores it: a Sequential leaves out
    its InputLayer; a functional model lists its operations that are layers."""
    operations = stored(model, "_operations")
    if type(operations) is list:
        return [o for o in operations if stored(o, "_trainable") is not None][:MAX_LAYERS]
    layers = list(keras_sublayers(model))[:MAX_LAYERS]
    names = {getattr(k, "__name__", "") for k in type(model).__mro__}
    if "Sequential" in names and layers and _is_input_layer(layers[0]):
        return layers[1:]
    return layers


class _Naming:
    """The user's ways to reach a model, its layers and its weights."""

    def __init__(self, namespace: Mapping[str, Any], run: FitRun, model: Any, source: str) -> None:
        # Names are looked up only when an entry needs them (most fits need none).
        self.model = model
        self._namespace = namespace
        self._run = run
        self._found: tuple[str | None] | None = None
        self._attributes: dict[int, str] | None = None
        self._references: dict[int, str] | None = None
        self._source = source

    @property
    def found(self) -> str | None:
        if self._found is None:
            self._found = (name_bound_to(self._run.model_id, self._namespace),)
        return self._found[0]

    @property
    def model_name(self) -> str:
        return self.found or f"the {_class_name(self.model)} model"

    @property
    def code(self) -> str:
        return f"`{self.found}`" if self.found else self.model_name

    @property
    def history_name(self) -> str | None:
        return name_bound_to(self._run.history_id, self._namespace)

    def layer(self, layer: Any) -> str | None:
        """How the learner can type this layer: ``model.get_layer('head')`` for a name
        they chose, else the attribute of their model class (``model.hidden``), else its
        position (``model.layers[0]``); None if it cannot be reached (never a name Keras
        generated). Without a name for the model, the path starts at ``.``."""
        return self._layer_references().get(id(layer))

    def _layer_references(self) -> dict[int, str]:
        if self._references is None:
            found: dict[int, str] = {}
            pending: list[tuple[Any, str, int]] = [(self.model, self.found or "", 0)]
            while pending and len(found) < MAX_LAYERS:
                parent, path, depth = pending.pop(0)
                for child, reference in self._children(parent, path):
                    if id(child) not in found:
                        found[id(child)] = reference
                        if depth < 3:
                            pending.append((child, reference, depth + 1))
            self._references = found
        return self._references

    def _children(self, parent: Any, path: str) -> list[tuple[Any, str]]:
        is_model = class_attribute(type(parent), "get_layer") is not None
        public = _public_layers(parent) if is_model else []
        attributes = instance_dict(parent) or {}
        by_attribute = {
            id(value): key
            for key, value in list(attributes.items())
            if type(key) is str and key.isidentifier() and not key.startswith("_")
        }
        children = []
        for child in keras_sublayers(parent)[:MAX_LAYERS]:
            name = written_layer_name(child, self._source) if is_model else None
            if name is not None:
                children.append((child, f"{path}.get_layer({name!r})"))
            elif id(child) in by_attribute:
                children.append((child, f"{path}.{by_attribute[id(child)]}"))
            elif any(layer is child for layer in public):
                index = next(i for i, layer in enumerate(public) if layer is child)
                children.append((child, f"{path}.layers[{index}]"))
        return children

    def _weight_attributes(self) -> dict[int, str]:
        """id(variable) -> ``<layer as typed>.attribute``, from what each layer stores
        (``self.w = self.add_weight(...)``; Keras's Dense keeps ``_kernel`` behind
        ``kernel``), else ``<layer>.weights[i]``; built once and only when a weight is
        to be named."""
        if self._attributes is None:
            found: dict[int, str] = {}
            references = self._layer_references()
            for layer in keras_layers(self.model, MAX_LAYERS)[1:]:
                reference = references.get(id(layer))
                attributes = instance_dict(layer)
                if reference is None or attributes is None:
                    continue
                for attribute, value in list(attributes.items()):
                    if type(attribute) is not str or attribute.startswith("__"):
                        continue
                    public = attribute.lstrip("_")
                    if attribute != public and not isinstance(
                        class_attribute(type(layer), public), property
                    ):
                        continue
                    found.setdefault(id(value), f"{reference}.{public}")
                own = [
                    *(contained_values(attributes.get("_trainable_variables")) or ()),
                    *(contained_values(attributes.get("_non_trainable_variables")) or ()),
                ]
                for index, variable in enumerate(own):
                    found.setdefault(id(variable), f"{reference}.weights[{index}]")
            self._attributes = found
        return self._attributes

    def weight(self, outcome: WeightOutcome) -> str | None:
        """The weight as the learner can type it, or None."""
        return self._weight_attributes().get(outcome.variable_id)

    def typed(self, reference: str | None) -> str | None:
        """A reference as printed: ``zero_net.layers[0]``, or ``layers[0]`` of the model
        named in words when the model has no name in the namespace."""
        if reference is None:
            return None
        if self.found:
            return f"`{reference}`"
        return f"`{reference.lstrip('.')}` of {self.model_name}"


class FitSymptoms:
    """One cell's entries from its ``fit``/``evaluate``/``predict`` calls."""

    def __init__(self, namespace: Mapping[str, Any], cell_source: str, explained: set[int]) -> None:
        self.namespace = namespace
        self.cell_source = cell_source
        self.explained = explained
        self.variables: list[VariableChange] = []
        self.notes: list[Note] = []
        self._told: set[tuple[str, int]] = set()  # (cause, model or class id)
        self.told_models: set[tuple[str, int]] = set()  # ("softmax", model id) told

    def collect(self, cell: CellFits) -> tuple[list[VariableChange], list[Note]]:
        for run in cell.fits:
            model = run.model()
            if model is None:
                continue
            try:
                self._fit(run, model)
            except Exception:
                continue
        for index, class_ref in enumerate(cell.inferred_classes):
            cls = class_ref()
            models = cell.inferred_models
            model = models[index]() if index < len(models) else None
            if cls is not None:
                try:
                    self._forced_training(cls, model)
                except Exception:
                    continue
        return self.variables, self.notes

    def _once(self, cause: str, key: int) -> bool:
        if (cause, key) in self._told:
            return False
        self._told.add((cause, key))
        return True

    # ------------------------------------------------------------------ fit
    def _fit(self, run: FitRun, model: Any) -> None:
        naming = _Naming(self.namespace, run, model, self.cell_source)
        if run.epochs_run == 0:
            return  # fit ran no epoch (epochs=0, or initial_epoch past it)
        step = None
        if run.custom_train_step:
            function = model_source.own_function(type(model), "train_step")
            step = user_code.train_step_of(function) if function is not None else None
        if not self._nothing_learned(run, model, naming, step):
            self._zero_started(run, model, naming)
        if run.custom_train_step:
            self._logs(run, model, naming, step)
            try:
                function = model_source.own_function(type(model), "train_step")
                partial = (
                    partial_steps.partial_step_note(
                        run,
                        model,
                        function,
                        f"`{naming.found}.fit`" if naming.found else "This fit",
                        self.namespace,
                    )
                    if function is not None and self._once("partial_step", run.model_id)
                    else None
                )
                if partial is not None:
                    self.notes.append(partial)
            except Exception:
                pass
        self._softmax_one_unit(model, naming)

    def _nothing_learned(
        self, run: FitRun, model: Any, naming: _Naming, step: user_code.TrainStep | None
    ) -> bool:
        if run.trainable_count == 0 and run.variable_count > 0:
            if self._once("frozen", run.model_id):
                self.variables.append(self._frozen_entry(model, naming))
            return True
        weights = run.weights
        never_applied = (
            step is not None and bool(step.gradient_line) and not step.applies and not step.assigns
        )
        if run.compared:
            if not weights or run.unknown_weights or any(w.changed for w in weights):
                return False
        elif not (never_applied and run.optimizer_stepped is False and run.trainable_count):
            return False  # built inside fit: only the optimizer's step count tells
        if not self._once("unchanged", run.model_id):
            return True
        count = run.trainable_count if not run.compared else len(weights)
        if step is not None and never_applied:
            grads = step.gradients_name or "grads"
            variables = step.variables_text or "self.trainable_variables"
            text = (
                f"fit ran, and none of {naming.code}'s {count} trainable weights changed: "
                f"`{_class_name(model)}.train_step` computes the gradients "
                f"(`{step.gradient_line}`) but never gives them to the optimizer, so the "
                f"loss and metrics fit prints stay the same every epoch. Apply them right "
                f"after computing them (Keras 3): `self.optimizer.apply({grads}, {variables})`."
            )
            section = TRAIN_STEP_SECTION
        elif run.custom_train_step:
            text = (
                f"fit ran, and none of {naming.code}'s {count} trainable weights changed, so "
                f"the model learned nothing. Check that `{_class_name(model)}.train_step` "
                f"gives its gradients to the optimizer "
                f"(`self.optimizer.apply(grads, self.trainable_variables)`), that the loss "
                f"depends on the weights, and the learning rate (0 changes nothing)."
            )
        else:
            text = (
                f"fit ran, and none of {naming.code}'s {count} trainable weights changed, so "
                f"the model learned nothing. Check the learning rate (0 changes nothing) "
                f"and that the loss depends on the model's output."
            )
            section = TRAIN_STEP_SECTION if run.custom_train_step else FROZEN_SECTION
        self.variables.append(
            variable_change(
                naming.model_name, "stopped_learning", "trainable", "unchanged", text, section
            )
        )
        return True

    def _frozen_entry(self, model: Any, naming: _Naming) -> VariableChange:
        direct = _public_layers(model)
        last = naming.typed(naming.layer(direct[-1])) if direct else None
        head = f" (including {last}, the last layer)" if last else ""
        freezing = user_code.freezing_statements(self.cell_source)
        loops = [f for f in freezing if f.loop_over]
        if stored(model, "_trainable") is False:
            cause = (
                f"`{naming.found}.trainable = False` froze the whole model"
                if naming.found
                else "`trainable = False` on the model froze all of it"
            )
            fix = (
                f"Set trainable = False on the layers to keep fixed only, and leave "
                f"{naming.code} trainable."
            )
        elif loops:
            loop = loops[0]
            cause = (
                f"`{loop.statement}` (line {loop.line} of this cell) sets `trainable = False` "
                "on every "
                f"layer of `{loop.loop_over}`{head}"
            )
            if loop.loop_over.endswith(".layers") and loop.simple_body:
                fix = (
                    f"Freeze only the base, so the last layer learns: "
                    f"`{loop.statement.replace(loop.loop_over, loop.loop_over + '[:-1]', 1)}`"
                    f" (before compile)."
                )
            elif loop.loop_over.endswith(".layers"):
                fix = (
                    f"Freeze only the base, so the last layer learns: loop over "
                    f"`{loop.loop_over}[:-1]` (before compile)."
                )
            else:
                fix = "Leave the layer meant to learn out of the loop (before compile)."
        else:
            cause = f"every layer{head} is frozen (trainable = False)"
            fix = "Set trainable = False only on the layers to keep fixed (before compile)."
        text = (
            f"fit ran, but {naming.code} has no trainable weights: {cause}. The optimizer "
            f"has nothing to update, so the loss and metrics stay where they started. {fix}"
        )
        return variable_change(
            naming.model_name, "stopped_learning", "trainable", "frozen", text, FROZEN_SECTION
        )

    def _zero_started(self, run: FitRun, model: Any, naming: _Naming) -> None:
        stuck = zero_start.stuck_at_zero(
            run.weights, lambda w: w.variable_id in self.explained, _layer_path
        )
        if not stuck or not self._once("zeros", run.model_id):
            return
        references = [naming.weight(w) for w in stuck]
        names = [n for n in (naming.typed(r) for r in references) if n]
        listed = ", ".join(names[:MAX_WEIGHTS_NAMED])
        if len(names) > MAX_WEIGHTS_NAMED:
            listed += f" and {len(names) - MAX_WEIGHTS_NAMED} more"
        if len(names) < len(stuck):
            unnamed = len(stuck) - len(names)
            weights = "weight" if unnamed == 1 else "weights"
            listed = f"{listed} and {unnamed} more {weights}" if listed else f"{unnamed} {weights}"
        entry_name = next((r.lstrip(".") for r in references if r), naming.model_name)
        arguments = user_code.zero_initializer_arguments(self.cell_source)
        if not arguments:
            arguments = self._zero_arguments_in_layers(model, stuck)
        if arguments:
            argument = arguments[0]
            fixed = user_code.valid_code(
                argument.text.replace("zeros", "glorot_uniform").replace("Zeros", "GlorotUniform")
            )
            cause = (
                f"`{argument.text}` (in `{argument.call}(...)`) starts them at 0. "
                f"{zero_start.zero_symmetry('kernel', sentence=True)}"
            )
            fix = (
                f"Zeros are fine for biases; start kernels at random values: `{fixed}`, or "
                f"leave the argument out if the default is random."
                if fixed
                else "Zeros are fine for biases; start kernels at random values."
            )
        else:
            cause = f"a zeros initializer starts them at 0; {zero_start.zero_symmetry('kernel')}"
            fix = 'Start kernels at random values (e.g. `kernel_initializer="glorot_uniform"`).'
        text = (
            f"{listed} started all zeros and did not change during fit while other weights "
            f"of {naming.code} trained: {cause}. {fix}"
        )
        for w in stuck:
            self.explained.add(w.variable_id)
        self.variables.append(
            variable_change(
                entry_name, "stopped_learning", "zeros", "unchanged", text, ZEROS_SECTION
            )
        )

    def _zero_arguments_in_layers(
        self, model: Any, stuck: list[WeightOutcome]
    ) -> list[user_code.Argument]:
        """The zeros initializer written in a custom layer's ``build``/``__init__``."""
        wanted = {w.path.split("/")[-2] for w in stuck if "/" in w.path}
        for layer in keras_layers(model, MAX_LAYERS):
            if _layer_name(layer) not in wanted:
                continue
            for method in ("build", "__init__"):
                function = model_source.own_function(type(layer), method)
                found = user_code.method_source(function) if function is not None else None
                if found is not None:
                    arguments = user_code.zero_initializer_arguments(found.source)
                    if arguments:
                        return arguments
        return []

    # ----------------------------------------------------------------- logs
    def _logs(
        self, run: FitRun, model: Any, naming: _Naming, step: user_code.TrainStep | None
    ) -> None:
        history = run.history
        if not history or step is None:
            return
        where = f"`{naming.history_name}.history`" if naming.history_name else "fit's History"
        cls = _class_name(model)
        # The loss reaches the logs returned as is, or as the result of a metric it updates
        # (``"total": self.total_tracker.result()``): logged under that key, nothing to fix.
        returns_loss = step.loss_name is not None and (
            step.loss_name in step.returned_names
            or bool(step.loss_trackers & set(step.returned_metrics))
        )
        if (
            "loss" not in history
            and (step.loss_name or step.uses_compute_loss)
            and not returns_loss
            and self._once("no_loss", run.model_id)
        ):
            self.notes.append(self._missing_loss_note(step, cls, where, list(history)))
        losses = history.get("loss") or []
        if losses and all(v == 0.0 for v in losses) and run.loss_tracker_count == 0.0:
            if self._once("zero_loss", run.model_id):
                logged = self.loss_logged_as(model, step, history)
                self.notes.append(
                    self._zero_loss_note(step, cls, where)
                    if logged is None
                    else self._loss_logged_elsewhere_note(step, cls, where, logged)
                )
        for name in run.never_updated_metrics:
            values = history.get(name) or []
            if name != "loss" and values and all(v == 0.0 for v in values):
                if self._once(f"metric:{name}", run.model_id):
                    self.notes.append(self._metric_note(model, name, step, cls, where))

    def _metric_note(
        self, model: Any, name: str, step: user_code.TrainStep, cls: str, where: str
    ) -> Note:
        attribute = next(
            (
                key
                for key, value in list((instance_dict(model) or {}).items())
                if type(key) is str
                and key.isidentifier()
                and not key.startswith("_")
                and stored(value, "name") == name
                and stored(value, "_variables") is not None
            ),
            None,
        )
        targets = step.targets()
        if attribute and targets:
            call = f"`self.{attribute}.update_state({targets[0]}, {targets[1]})`"
            where_to = "in train_step before returning its `result()`"
        else:
            call = "its `update_state` with the targets and the predictions"
            where_to = "in train_step before returning its result"
        return reports.note(
            f"`{name}` is 0.0 every epoch in {where}: `{cls}.train_step` returns it but "
            f"never updates it, so fit logs the metric's starting value. Call {call} "
            f"{where_to}.",
            TRAIN_STEP_SECTION,
        )

    def _keras_name(self) -> str:
        """How the learner's namespace reaches Keras (``keras``, or ``tf.keras`` when only
        TensorFlow is imported), so the printed fix runs there."""
        for name, spelled in (("keras", "keras"), ("tf", "tf.keras")):
            module = self.namespace.get(name)
            if isinstance(module, ModuleType):  # also TF's lazy loader for keras
                return spelled
        return "keras"

    def _missing_loss_note(
        self, step: user_code.TrainStep, cls: str, where: str, keys: list[str]
    ) -> Note:
        loss = step.loss_name or "loss"
        returned = ", ".join(f'"{k}"' for k in step.returned_keys) or ", ".join(
            f'"{k}"' for k in keys
        )
        others = [m for m in step.returned_metrics if m != "self.loss_tracker"]
        results = ", ".join(
            f'"{k}": {m}.result()' for k, m in zip(step.returned_keys, others, strict=False)
        )
        returned_dict = (
            '{"loss": self.loss_tracker.result()' + (f", {results}" if results else "") + "}"
        )
        tracked = ", ".join(["self.loss_tracker", *others])
        keras = self._keras_name()
        text = (
            f"fit's logs have no 'loss': {where} holds only {keys}. fit logs exactly the "
            f"dict train_step returns, and `{cls}.train_step` returns {{{returned}}} "
            f"without the `{loss}` it computes, so the loss never shows in the progress "
            f"bar or the History (`history['loss']` raises KeyError). Track it with a "
            f"`{keras}.metrics.Mean`: in `__init__`, "
            f'`self.loss_tracker = {keras}.metrics.Mean(name="loss")`; in train_step, '
            f"`self.loss_tracker.update_state({loss})` and `return {returned_dict}`; "
            f"and list the trackers in a `metrics` property (`return [{tracked}]`) so fit "
            f"resets them every epoch."
        )
        return reports.note(text, TRAIN_STEP_SECTION)

    @staticmethod
    def loss_logged_as(model: Any, step: user_code.TrainStep, history: Any) -> str | None:
        """The History key of a metric train_step updates with its loss (its own loss
        tracker, ``self.total_tracker``), when fit logged it; else None."""
        own = instance_dict(model) or {}
        for tracker in sorted(step.loss_trackers):
            attribute = tracker.split(".", 1)[1] if tracker.startswith("self.") else None
            name = stored(own.get(attribute), "name") if attribute else None
            if type(name) is str and name != "loss" and name in history:
                return name
        return None

    def _loss_logged_elsewhere_note(
        self, step: user_code.TrainStep, cls: str, where: str, logged: str
    ) -> Note:
        loss = step.loss_name or "the loss"
        text = (
            f"{where}['loss'] is 0.0 every epoch, though the model trains: that 'loss' is "
            f"Keras's own loss tracker, which only the default train_step updates. "
            f"`{cls}.train_step` tracks `{loss}` with its own metric, logged as "
            f"'{logged}': read {where}['{logged}'] for the training loss (nothing needs to "
            f"change in the training)."
        )
        return reports.note(text, TRAIN_STEP_SECTION)

    def _zero_loss_note(self, step: user_code.TrainStep, cls: str, where: str) -> Note:
        used = [
            f"`self.{name}(...)`"
            for name, flag in (
                ("compute_loss", step.uses_compute_loss),
                ("compute_metrics", step.uses_compute_metrics),
            )
            if flag
        ]
        # Say only what the methods this train_step calls do.
        what = [
            said
            for said, flag in (
                ("compute_loss only returns the loss", step.uses_compute_loss),
                ("compute_metrics only updates the compiled metrics", step.uses_compute_metrics),
            )
            if flag
        ]
        verb = "does" if len(used) == 1 else "do"
        how = (
            f"{' and '.join(used)} {verb} not update it in Keras 3 ({', '.join(what)})"
            if used
            else "nothing in it updates that tracker"
        )
        loss = step.loss_name or "loss"
        y, y_pred = step.targets() or ("y", "y_pred")
        # The loop variable must not shadow a name the loop body uses.
        each = next(n for n in ("m", "metric", "tracked") if n not in (loss, y, y_pred))
        loop = (
            f"for {each} in self.metrics: {each}.update_state({loss}) "
            f'if {each}.name == "loss" else {each}.update_state({y}, {y_pred})'
        )
        text = (
            f"fit shows loss 0.0 every epoch ({where}['loss']) though the model trains: "
            f"'loss' is Keras's loss tracker, which only the default train_step updates, "
            f"and in `{cls}.train_step` {how}. Update every metric yourself and return "
            f"them, at the end of train_step: `{loop}`, then "
            f"`return {{{each}.name: {each}.result() for {each} in self.metrics}}`."
        )
        return reports.note(text, TRAIN_STEP_SECTION)

    # ------------------------------------------------------------- softmax
    def _softmax_one_unit(self, model: Any, naming: _Naming) -> None:
        for layer in keras_layers(model, MAX_LAYERS):
            attributes = instance_dict(layer)
            if attributes is None or attributes.get("units") != 1:
                continue
            activation = attributes.get("activation")
            if getattr(activation, "__name__", None) != "softmax":
                continue
            module = getattr(activation, "__module__", "")
            if type(module) is not str or not module.startswith("keras"):
                continue
            if compile_agreement.softmax_told_at_compile(model):
                continue  # told where the model was compiled: each cause once
            if not self._once("softmax", id(layer)):
                continue
            self.told_models.add(("softmax", id(model)))
            written, place = self._softmax_written()
            reference = naming.typed(naming.layer(layer))
            which = f"layer {reference}" if reference else "a layer"
            if place:
                which += f" (defined in {place})"
            if written:
                fix = f"For a yes/no target use `{written[0]}` with binary_crossentropy"
            else:
                fix = 'For a yes/no target use `activation="sigmoid"` with binary_crossentropy'
            text = (
                f"{naming.code}'s {which} applies softmax to a single unit: "
                f"softmax divides each output by the sum of all outputs, so with one unit it "
                f"is always 1.0, whatever the weights, and the model predicts the same class "
                f"for every input. {fix}; for classes, give the layer one unit per class "
                f"with sparse_categorical_crossentropy."
            )
            self.notes.append(reports.note(text, SOFTMAX_SECTION))

    def _softmax_written(self) -> tuple[list[str], str | None]:
        """The softmax-over-one-unit calls of the newest cell that has some, each with
        sigmoid (valid code), and that cell's place when it is an earlier one."""
        sources, counts = user_code.cell_sources(self.namespace, self.cell_source)
        for source, count in zip(sources, counts, strict=True):
            calls = user_code.softmax_one_unit_calls(source)
            written = [
                fixed
                for call, _line in calls
                if (fixed := user_code.valid_code(call.replace("softmax", "sigmoid")))
            ]
            if written:
                place = user_code.cell_place(count, calls[-1][1]) if count is not None else None
                return written, place
        return [], None

    # --------------------------------------------------------------- call
    def _forced_training(self, cls: type, model: Any) -> None:
        function = model_source.own_function(cls, "call")
        if function is None or not self._once("training", id(cls)):
            return
        forced = user_code.forced_training_calls(function)
        if not forced:
            return
        first = forced[0]
        method = user_code.method_source(function)
        has_flag = method is not None and "training" in user_code.keyword_parameters(method)
        fixed = user_code.valid_code(first.statement.replace("training=True", "training=training"))
        add = (
            "" if has_flag else " and give `call` a `training=False` parameter (Keras fills it in)"
        )
        name = getattr(cls, "__name__", "the model")
        effects = training_mode_effects(_attribute_path(model, first.callee) or model, model)
        does = (
            "; ".join(effects)
            if effects
            else f"`{first.callee}` behaves as it does in training, not as at inference"
        )
        fix = f"Pass the flag through: `{fixed}`{add}." if fixed else "Pass the flag through."
        text = (
            f"`{name}.call` passes `training=True` to `{first.callee}` "
            f"({user_code.place_of(function, first.line, self.namespace)}: "
            f"`{first.statement}`), so it runs in training mode in predict and evaluate too: "
            f"{does}. {fix}"
        )
        self.notes.append(reports.note(text, TRAINING_FLAG_SECTION))


# What training mode changes, by the Keras class a layer is or extends (a user's layer
# whose ``call`` takes ``training`` is told by its own class name).
def _attribute_path(model: Any, callee: str) -> Any | None:
    """The layer ``self.a.b`` names on the model (None for anything else)."""
    found = model_source.self_attribute(model, callee)
    return found if stored(found, "_trainable") is not None else None


def _training_kind(cls: type) -> str | None:
    names = [getattr(k, "__name__", "") for k in cls.__mro__ if is_library_class(k)]
    for name in names:
        if "Noise" in name or name == "GaussianDropout":
            return "noise"
        if "Dropout" in name:
            return "dropout"
        if "BatchNormalization" in name:
            return "batch statistics"
    return None


_TRAINING_EFFECTS = {
    "dropout": "drop{s} units at random, so two predictions of the same input differ",
    "noise": "add{s} random noise, so two predictions of the same input differ",
    "batch statistics": (
        "normalize{s} with each batch's own mean and variance instead of the averages "
        "learned in fit, so a prediction depends on the other inputs in its batch"
    ),
    "custom": "take{s} the branch written for training",
}


def training_mode_effects(root: Any, model: Any) -> list[str]:
    """What training mode does in predict/evaluate, for the layers ``root`` holds only."""
    kinds: dict[str, list[str]] = {}
    for layer in keras_layers(root, MAX_LAYERS) if root is not None else ():
        cls = type(layer)
        label = getattr(cls, "__name__", "")
        kind = _training_kind(cls)
        if kind is None and layer is not model and not is_library_class(cls):
            call = model_source.own_function(cls, "call")
            found = user_code.method_source(call) if call is not None else None
            if found is not None and "training" in user_code.keyword_parameters(found):
                kind = "custom"
        if kind is not None and label not in kinds.setdefault(kind, []):
            kinds[kind].append(label)
    effects = []
    for kind, effect in _TRAINING_EFFECTS.items():
        labels = kinds.get(kind)
        if labels:
            ending = "s" if len(labels) == 1 else ""
            effects.append(f"{_listed(labels)} {effect.format(s=ending)}")
    return effects


def _listed(classes: list[str]) -> str:
    return " and ".join(f"`{c}`" for c in classes[:3])


def fit_entries(
    cell: CellFits,
    namespace: Mapping[str, Any],
    cell_source: str,
    explained: set[int],
    execution_count: int | None = None,
) -> tuple[list[VariableChange], list[Note]]:
    """The entries of one cell's compile and fit calls; ``explained`` holds the ids of
    variables this report already tells about (their ids are added for those told here)."""
    config_variables, config_notes = config_entries(cell.config, namespace, cell_source)
    told: set[tuple[str, int]] = set()  # (rule, model id) told after this cell's fits
    config_notes.extend(
        loss_notes(cell.setups, namespace, cell_source, compile_agreement.told_at_compile, told)
    )
    config_notes.extend(
        loss_parameters.swapped_loss_notes(cell.swapped_losses, namespace, cell_source)
    )
    config_notes.extend(range_notes(cell.ranges, namespace, cell_source))
    config_notes.extend(served_notes(cell.ranges, namespace, cell_source))
    config_notes.extend(augmentation_notes(cell.augmentation, namespace, cell_source))
    config_notes.extend(
        validation_copies.validation_copy_notes(cell.validation_copies, namespace, cell_source)
    )
    config_notes.extend(
        global_normalization.global_normalization_notes(cell.global_normalizations, namespace)
    )
    if not cell.fits and not cell.inferred_classes and not cell.inference_runs:
        config_notes.extend(
            compile_agreement.compile_notes(
                cell.compiles, namespace, cell_source, execution_count, told
            )
        )
        return config_variables, config_notes
    config_notes.extend(step_modes.step_mode_notes(cell, namespace))
    config_notes.extend(
        untracked_variables.untracked_variable_notes(cell.fits, namespace, execution_count)
    )
    config_notes.extend(learning_rate_decay.decay_notes(cell.fits, namespace, cell_source))
    config_notes.extend(refit_loops.refit_notes(cell.fits, namespace, cell_source))
    config_notes.extend(probe_updates.probe_notes(cell.fits, namespace, cell_source))
    config_notes.extend(loss_sign.fit_notes([(r.model, r.history) for r in cell.fits], namespace))
    config_notes.extend(sequence_masks.masked_zero_notes(cell.masked_zeros, namespace, cell_source))
    # Before the generic symptoms: a weight named here is not told again as unchanged.
    config_notes.extend(
        blocked_gradients.blocked_gradient_notes(cell.fits, namespace, cell_source, explained)
    )
    config_notes.extend(regrown_pruning.regrown_notes(cell.fits, namespace, cell_source))
    symptoms = FitSymptoms(namespace, cell_source, explained)
    variables, notes = symptoms.collect(cell)
    told |= symptoms.told_models
    config_notes.extend(
        compile_agreement.compile_notes(
            cell.compiles, namespace, cell_source, execution_count, told
        )
    )
    runs = [
        model_source.ModelRun(
            run.model,
            "fit",
            validated=any(key.startswith("val_") for key in run.history or ()),
            epochs=run.epochs_run,
        )
        for run in cell.fits
    ]
    runs += [model_source.ModelRun(ref, method) for ref, method in cell.inference_runs]
    notes.extend(model_source.model_source_notes(runs, namespace, cell_source))
    return [*variables, *config_variables], [*notes, *config_notes]
