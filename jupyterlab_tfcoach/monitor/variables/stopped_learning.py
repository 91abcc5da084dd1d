"""Weights that silently stopped learning while training ran.

What the optimizer itself sees is the cheapest exact evidence: every Keras 3
optimizer passes the full gradient list through
``BaseOptimizer._filter_empty_gradients(grads, vars)`` (that is where Keras
warns "Gradients do not exist for variables [...]" and drops them). A hook
there records, as ids and short labels only, which variables got a gradient
and which got None. No tensor is read or copied: a variable whose gradient is
None is dropped by the optimizer, so it certainly did not change; one never
passed to any optimizer during the cell was not updated by one either.

In ``fit()`` the hook runs while Keras traces its train step (the first
``fit()`` after ``compile()``), exactly when Keras emits its warning; later
epochs replay the graph and cost nothing. In a custom loop it runs once per
``apply_gradients`` call, a loop over the variable list (~20 us for 100).

After a cell in which an optimizer ran, the report says which trainable
variables did not learn while others did, and the likely cause: not used by
the loss, replaced by a tensor, created with trainable=False, or never passed
to the optimizer.

Holders' trainable variables, layers and attribute names come from what
TensorFlow and Keras store (``stored_state``), never from the objects'
properties: a user's override of ``trainable_variables`` or ``variables`` does
not run.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from jupyterlab_tfcoach.monitor.hooks import MethodHooks
from jupyterlab_tfcoach.monitor.report import VariableChange, variable_change
from jupyterlab_tfcoach.monitor.stored_state import (
    class_attribute,
    contained_values,
    instance_dict,
    keras_layers,
    library_attribute,
    stored,
)
from jupyterlab_tfcoach.monitor.tftypes import loaded_class
from jupyterlab_tfcoach.monitor.variables.kinds import (
    KERAS_MODEL,
    TF_MODULE,
    trainable_variables_of,
)

OPTIMIZER_MODULE = "keras.src.optimizers.base_optimizer"
SECTION = "stopped-learning"
MAX_VARIABLES_SEEN = 10_000
MAX_ENTRIES = 8
MAX_LAYERS = 2000
# Holders with more trainable variables than this are not checked for "never applied":
# listing them costs ~1.5 us per variable for a tf.Module, after every training cell.
MAX_HOLDER_VARIABLES = 2000
MAX_SUB_MODELS = 64  # a holder's attributes looked at for sub-models


@dataclass
class CellTraining:
    """What the optimizers saw during one cell (ids and labels only)."""

    calls: int = 0
    with_gradient: set[int] = field(default_factory=set)
    without_gradient: dict[int, str] = field(default_factory=dict)  # id -> Keras path/name
    optimizer_ids: set[int] = field(default_factory=set)
    # The optimizers themselves, weakly (``training/run_outcomes.py`` reads their rates).
    optimizers: list[weakref.ReferenceType[Any]] = field(default_factory=list)
    truncated: bool = False


def _label(variable: Any) -> str:
    for attribute in ("path", "name"):
        value = library_attribute(variable, attribute)
        if type(value) is str and value:
            return value
    return "?"


class LearningWatcher:
    def __init__(self, kind_of: Any) -> None:
        self.kind_of = kind_of
        self._cell = CellTraining()
        self._lock = threading.Lock()
        self._hooks = MethodHooks()

    def install(self) -> bool:
        owner = loaded_class(OPTIMIZER_MODULE, "BaseOptimizer")
        if owner is None:
            return False
        return self._hooks.install(owner, "_filter_empty_gradients", self._filter_hook)

    def _filter_hook(self, original: Any) -> Any:
        watcher = self

        def filter_hook(optimizer: Any, grads: Any, variables: Any) -> Any:
            __tracebackhide__ = True  # IPython leaves this frame out of user tracebacks
            try:
                watcher._record(optimizer, grads, variables)
            except Exception:
                pass
            return original(optimizer, grads, variables)

        return filter_hook

    def uninstall(self) -> None:
        self._hooks.restore()

    def _record(self, optimizer: Any, grads: Any, variables: Any) -> None:
        grads = list(grads)
        variables = list(variables)
        with self._lock:
            cell = self._cell
            cell.calls += 1
            if id(optimizer) not in cell.optimizer_ids and len(cell.optimizers) < 8:
                try:
                    cell.optimizers.append(weakref.ref(optimizer))
                except TypeError:
                    pass
            cell.optimizer_ids.add(id(optimizer))
            for gradient, variable in zip(grads, variables, strict=False):
                if len(cell.with_gradient) + len(cell.without_gradient) >= MAX_VARIABLES_SEEN:
                    cell.truncated = True
                    return
                if gradient is None:
                    if id(variable) not in cell.without_gradient:
                        cell.without_gradient[id(variable)] = _label(variable)
                else:
                    cell.with_gradient.add(id(variable))

    def begin_cell(self) -> None:
        with self._lock:
            self._cell = CellTraining()

    def take(self) -> CellTraining:
        with self._lock:
            cell, self._cell = self._cell, CellTraining()
        return cell

    # ------------------------------------------------------------ report
    def entries(
        self,
        cell: CellTraining,
        namespace: Mapping[str, Any],
        holders: list[tuple[str, Any, str]],
        explained_variables: set[int],
        with_tape_gradient: set[int] = frozenset(),  # type: ignore[assignment]
        cell_failed: bool = False,
        trainable_count: Any = None,
        fitted_models: frozenset[int] = frozenset(),
    ) -> list[VariableChange]:
        """``stopped_learning`` entries for the cell that just ran.

        ``holders``: (name, object, kind) of the tf.Module/Keras objects in the
        namespace; ``explained_variables``: ids of variables whose replacement by
        a tensor this report already explains (not told twice): the ids of the
        variables reported here are added to it. ``with_tape_gradient``: ids of
        the sources tape.gradient gave a gradient for during the cell. ``fitted_models``:
        ids of the models fit trained with Keras's own train step in the cell (no tape of
        the learner's to fix there).
        ``cell_failed``: the cell raised, so training stopped part-way and a variable
        the optimizer has not seen yet says nothing (only None gradients are told).
        """
        if cell.calls == 0 or not cell.with_gradient:
            return []  # no training, or nothing trained at all (Keras raises then)
        found = _CellEntries(cell, namespace, holders, self.kind_of, explained_variables)
        found.add_without_gradient()
        if not cell_failed:
            found.add_never_applied(holders, trainable_count, fitted_models)
            # Gradients taken with tape.gradient but never given to an optimizer.
            found.add_not_given(with_tape_gradient - cell.with_gradient)
        explained_variables |= found.reported
        return found.entries()


class _CellEntries:
    """One cell's ``stopped_learning`` entries: each variable once, at most ``MAX_ENTRIES``
    (the rest counted in the last one's text)."""

    def __init__(
        self,
        cell: CellTraining,
        namespace: Mapping[str, Any],
        holders: list[tuple[str, Any, str]],
        kind_of: Any,
        explained_variables: set[int],
    ) -> None:
        self._cell = cell
        self._namespace = namespace
        self._holders = holders
        self._kind_of = kind_of
        self._explained = explained_variables
        self.reported: set[int] = set()
        self._entries: list[VariableChange] = []
        self._skipped = 0
        self._names: tuple[dict[int, tuple[str, Any]], dict[str, str]] | None = None

    def _naming(self) -> tuple[dict[int, tuple[str, Any]], dict[str, str]]:
        # Naming variables walks the namespace and every layer: only done once something
        # is to be said (a cell that trained everything pays for none of it).
        if self._names is None:
            self._names = _variable_names(self._namespace, self._holders, self._kind_of)
        return self._names

    def _optimizer_name(self) -> str:
        return _name_of(self._namespace, self._cell.optimizer_ids) or "the optimizer"

    def _add(self, variable_id: int, make_entry: Callable[[], VariableChange]) -> None:
        self.reported.add(variable_id)
        if len(self._entries) < MAX_ENTRIES:
            self._entries.append(make_entry())
        else:
            self._skipped += 1

    def add_without_gradient(self) -> None:
        """Variables the optimizer got a None gradient for."""
        cell = self._cell
        for variable_id, label in cell.without_gradient.items():
            if variable_id in cell.with_gradient or variable_id in self._explained:
                continue
            names, tensor_attributes = self._naming()
            found = names.get(variable_id)
            replaced = None
            if found is None:
                replaced = tensor_attributes.get(label.rsplit("/", 1)[-1].split(":", 1)[0])
            self._add(
                variable_id,
                lambda label=label, found=found, replaced=replaced: _no_gradient_entry(
                    label, found, replaced, self._optimizer_name()
                ),
            )

    def add_never_applied(
        self,
        holders: list[tuple[str, Any, str]],
        trainable_count: Any,
        fitted_models: frozenset[int] = frozenset(),
    ) -> None:
        """Trainable variables of a holder the optimizer trained that it never saw.

        Not told for a holder that only shares layers with another model the optimizer
        trained completely (every variable that got a gradient is that model's, it has none
        the optimizer missed, and it has variables of its own beyond the holder's): an
        earlier model built on the same base, whose own head is simply not trained in this
        cell. A layer of the holder trained alone is no such model: it is part of it."""
        trained_holders = []
        for holder_name, holder, kind in holders:
            count = trainable_count(holder) if trainable_count is not None else None
            if count is None or count > MAX_HOLDER_VARIABLES:
                continue  # not counted (too big) or unknown: walking it could take seconds
            variables = trainable_variables_of(holder, kind, self._kind_of)
            trained, untouched = _untouched_variables(variables, self._cell)
            if not trained:
                continue
            cell = self._cell
            if untouched and _another_sub_model_chosen(holder, untouched, cell, self._kind_of):
                continue  # one whole sub-model trained, another only read: chosen so
            trained_holders.append(
                (holder_name, untouched, {id(v) for v in variables or ()}, holder)
            )
        wholly_trained = [
            ids
            for _, untouched, ids, _ in trained_holders
            if not untouched and not self._cell.truncated and self._cell.with_gradient <= ids
        ]
        for holder_name, untouched, ids, holder in trained_holders:
            if any(other - ids for other in wholly_trained):
                continue  # the optimizer trained another model that shares some layers
            make = None
            if id(holder) in fitted_models:
                if stored(holder, "train_function") is None:
                    continue  # compile() ran since the fit: the next fit builds a new step
                make = _fit_never_applied_entry
            for variable_id, variable in untouched:
                if variable_id in self._explained or variable_id in self.reported:
                    continue
                found = self._naming()[0].get(variable_id)
                path = found[0] if found else f"{holder_name}: {_label(variable)}"
                self._add(
                    variable_id,
                    lambda path=path, holder_name=holder_name, make=make: (
                        make(path, holder_name)
                        if make is not None
                        else _never_applied_entry(path, holder_name, self._optimizer_name())
                    ),
                )

    def add_not_given(self, never_given: set[int]) -> None:
        """Variables tape.gradient gave a gradient for that never reached an optimizer."""
        for variable_id in never_given - self.reported:
            if variable_id in self._explained:
                continue
            found = self._naming()[0].get(variable_id)
            if found is None:
                continue
            self._add(
                variable_id,
                lambda path=found[0]: _gradient_not_applied_entry(path, self._optimizer_name()),
            )

    def entries(self) -> list[VariableChange]:
        if self._skipped and self._entries:
            self._entries[-1]["text"] += f" (and {self._skipped} more variables like it)."
        return self._entries


def _entry(path: str, after: str, text: str) -> VariableChange:
    """One ``stopped_learning`` entry: ``after`` is "no gradient" or "not applied"."""
    return variable_change(path, "stopped_learning", "trainable", after, text, SECTION)


def _no_gradient_entry(
    label: str, found: tuple[str, Any] | None, replaced: str | None, optimizer: str
) -> VariableChange:
    path = found[0] if found else replaced or label
    variable = found[1] if found else None
    trainable = library_attribute(variable, "trainable") if variable is not None else None
    warning = (
        f"Keras warned \"Gradients do not exist for variables ['{label}']\": `{path}` got no "
        f"gradient, so {optimizer} skipped it while the other variables trained."
    )
    if replaced is not None:
        text = (
            f"{warning} `{replaced}` now holds a tensor: the variable was replaced (e.g. "
            f"`{replaced} = {replaced} - lr * g`), so the layer no longer uses the variable "
            f"the optimizer updates. Create the layer again and change the variable in "
            f"place: `{replaced}.assign_sub(...)`."
        )
    elif trainable is False:
        text = (
            f"{warning} It was created with trainable=False, so the GradientTape did not "
            f"watch it. If it should learn, create it with `trainable=True`; if not, leave it "
            f"out of the list you pass to tape.gradient."
        )
    else:
        text = (
            f"{warning} The loss does not depend on it: it is not used in the forward pass "
            f"(a layer or weight that call() skips), or it was used outside the GradientTape "
            f"or through NumPy, which cuts the graph. Use it inside `with tf.GradientTape()` "
            f"when computing the loss, or remove it if it is not needed."
        )
    return _entry(path, "no gradient", text)


def _in_code(optimizer: str) -> str:
    """The optimizer as code: its name in the namespace, else ``optimizer`` (the prose
    fallback "the optimizer" is not code)."""
    return "optimizer" if optimizer == "the optimizer" else optimizer


def _never_applied_entry(path: str, holder: str, optimizer: str) -> VariableChange:
    text = (
        f"`{path}` is one of `{holder}`'s trainable variables, but no gradient for it reached "
        f"{optimizer} in this cell, so it did not change while the others trained. Take the "
        f"gradients for all of them and apply them together: `variables = "
        f"{holder}.trainable_variables`, `grads = tape.gradient(loss, variables)`, "
        f"`{_in_code(optimizer)}.apply_gradients(zip(grads, variables))`."
    )
    return _entry(path, "not applied", text)


def _fit_never_applied_entry(path: str, holder: str) -> VariableChange:
    """The same symptom under Keras's own train step: fit updates the weights that were
    trainable when it built its step, at the first fit after compile."""
    text = (
        f"`{path}` is one of `{holder}`'s trainable variables, but fit's train step never "
        f"updated it in this cell, so it did not change while the others trained. Keras "
        f"builds that step at the first fit after compile, with the weights trainable then, "
        f"and reuses it: a `trainable` flag turned on since is not seen. Call "
        f"`{holder}.compile(...)` again, with a new optimizer, after setting trainable and "
        "before fit."
    )
    return _entry(path, "not applied", text)


def _gradient_not_applied_entry(path: str, optimizer: str) -> VariableChange:
    text = (
        f"tape.gradient computed a gradient for `{path}`, but it never reached {optimizer}, so "
        f"`{path}` did not change while the others trained. Apply every gradient you take: "
        f"`{_in_code(optimizer)}.apply_gradients(zip(grads, variables))` with the same "
        "`variables` "
        f"list you gave to tape.gradient."
    )
    return _entry(path, "not applied", text)


def _another_sub_model_chosen(
    holder: Any, untouched: list[tuple[int, Any]], cell: CellTraining, kind_of: Any
) -> bool:
    """Whether every variable the optimizer never saw belongs to a sub-model of ``holder``
    (a model or module it stores as an attribute) none of whose variables trained, while
    another sub-model did: a teacher that guides a student, a target network, the other
    half of a GAN. The learner gave the optimizer one model's variables on purpose; a
    layer left out of the model being trained is not such a choice and is still told."""
    children: list[set[int]] = []
    for value in list((instance_dict(holder) or {}).values())[:MAX_SUB_MODELS]:
        kind = kind_of(value)
        if value is holder or kind not in (KERAS_MODEL, TF_MODULE):
            continue
        variables = trainable_variables_of(value, kind, kind_of)
        if variables:
            children.append({id(v) for v in variables})
    trained = cell.with_gradient
    read_only = [ids for ids in children if not ids & trained]
    if not read_only or len(read_only) == len(children):
        return False
    return {variable_id for variable_id, _ in untouched} <= set().union(*read_only)


def _untouched_variables(
    variables: list[Any] | None, cell: CellTraining
) -> tuple[bool, list[tuple[int, Any]]]:
    """Whether the optimizer trained some of a holder's ``variables``, and the ones it did
    not see at all."""
    if variables is None:
        return False, []
    seen = cell.with_gradient
    trained = any(id(v) in seen for v in variables)
    if not trained or cell.truncated:
        return trained, []
    missing = cell.without_gradient
    return True, [(id(v), v) for v in variables if id(v) not in seen and id(v) not in missing]


def _name_of(namespace: Mapping[str, Any], ids: set[int]) -> str | None:
    for name, value in namespace.items():
        if type(name) is str and not name.startswith("_") and id(value) in ids:
            return name
    return None


def _variable_names(
    namespace: Mapping[str, Any], holders: list[tuple[str, Any, str]], kind_of: Any
) -> tuple[dict[int, tuple[str, Any]], dict[str, str]]:
    """id(variable) -> (the user's way to reach it, the variable): ``w2``, ``lin.w``,
    ``model.get_layer('dense').kernel``; and attribute name -> path for attributes
    that hold a tensor. Only computed when there is something to say."""
    found: dict[int, tuple[str, Any]] = {}
    tensors: dict[str, str] = {}
    for name, value in namespace.items():
        if (
            type(name) is str
            and not name.startswith("_")
            and kind_of(value)
            in (
                "tf.Variable",
                "keras.Variable",
            )
        ):
            found.setdefault(id(value), (name, value))
    for holder_name, holder, kind in holders:
        layers = [holder] if kind == "tf.Module" else keras_layers(holder, MAX_LAYERS)
        for layer in layers:
            attributes = instance_dict(layer)
            if attributes is None:
                continue
            if layer is holder:
                prefix = holder_name
            else:
                layer_name = attributes.get("name")
                prefix = (
                    f"{holder_name}.get_layer({layer_name!r})"
                    if type(layer_name) is str
                    else holder_name
                )
            for attribute, value in list(attributes.items()):
                if type(attribute) is not str or attribute.startswith("__"):
                    continue
                public = attribute
                if attribute.startswith("_"):
                    # Keras keeps Dense's kernel in ``_kernel`` behind a ``kernel`` property.
                    public = attribute[1:]
                    if not issubclass(type(class_attribute(type(layer), public)), property):
                        continue
                value_kind = kind_of(value)
                if value_kind in ("tf.Variable", "keras.Variable"):
                    found.setdefault(id(value), (f"{prefix}.{public}", value))
                    continue
                if value_kind == "tf.Tensor":
                    tensors.setdefault(public, f"{prefix}.{public}")
                    continue
                # ``self.ws = [tf.Variable(...), ...]``: named ``model.ws[3]`` (the user's own
                # lists, not Keras' bookkeeping).
                items = (
                    contained_values(value, sequences_only=True) if public == attribute else None
                )
                if items is not None and len(items) <= MAX_LAYERS:
                    for index, item in enumerate(items):
                        if kind_of(item) in ("tf.Variable", "keras.Variable"):
                            found.setdefault(id(item), (f"{prefix}.{public}[{index}]", item))
    return found, tensors
