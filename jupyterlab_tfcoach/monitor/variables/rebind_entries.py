"""Report entries for variables replaced by tensors during a cell, wherever they were made.

Three sources, one wording:
- the ``__setattr__`` hook (``attribute_hook.py``): a tf.Module/Keras attribute
  replaced, with the exact line, even inside ``call()``;
- the cell's source (``rebind_statements.py``) checked against the values the cell left:
  ``w = w - lr * g`` on a variable the same cell created, or an attribute of a
  plain Python object (``model.w = model.w - lr * dw``);
- the namespace diff across cells (``namespace_diff.py``), whose generic advice is
  replaced by the real statement when the cell's source has it.
Every entry gives the fix as the user's own statement done in place.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from typing import Any

from jupyterlab_tfcoach.monitor.locations import CellLocator
from jupyterlab_tfcoach.monitor.report import VariableChange, variable_change
from jupyterlab_tfcoach.monitor.stored_state import instance_dict
from jupyterlab_tfcoach.monitor.variables.attribute_hook import AttributeRebind, rank_of
from jupyterlab_tfcoach.monitor.variables.kinds import TENSOR
from jupyterlab_tfcoach.monitor.variables.rebind_statements import CellRebinds, Rebind, statement_at

SECTION = "rebinding-variables"
# Attributes that hold a model's or module's variables, by name.
_VARIABLE_LISTS = frozenset({"trainable_variables", "trainable_weights", "params", "parameters"})
MAX_CLASSES_REMEMBERED = 200
MAX_ATTRIBUTES_REMEMBERED = 500
MAX_CANDIDATE_OBJECTS = 200


def _entry(name: str, change: str, before: str, text: str) -> VariableChange:
    return variable_change(name, change, before, TENSOR, text, SECTION)


def _what(before: str) -> str:
    return "Keras variable" if before == "keras.Variable" else "tf.Variable"


def _never(name: str) -> bool:
    return False


def python_numbers_in(namespace: Mapping[str, Any]) -> Callable[[str], bool]:
    """Which names hold a Python number (``lr = 0.01``): exact types, so no user object's
    code runs to answer."""

    def is_number(name: str) -> bool:
        return type(namespace.get(name)) in (int, float)

    return is_number


def fix_text(rebind: Rebind, rank: int | None, is_number: Callable[[str], bool]) -> str:
    """The fix for a variable with ``rank`` dimensions: ``assign_sub(step)`` suits any step
    for a single-number variable; for one with dimensions (or unknown), a single-number
    step needs ``assign(w - step)``."""
    return rebind.fix if rank == 0 else rebind.fix_given(is_number)


def name_rebound_text(
    name: str,
    before: str,
    rebind: Rebind | None,
    same_cell: bool,
    fix: str | None = None,
) -> str:
    """The text for a plain name that held a variable and now holds a tensor."""
    if rebind is None:
        return (
            f"`{name}` held a {_what(before)} and now holds a tf.Tensor: arithmetic such as "
            f"`{name} = {name} - lr * grad` makes a new tensor instead of updating the variable. "
            f"The variable stops training and tape.gradient with respect to `{name}` is None. "
            f"Update it in place: `{name}.assign_sub(lr * grad)` (or assign / assign_add), "
            f"after creating `{name}` again as a variable."
        )
    if rebind.loop_iterable is not None:
        # ``for v, g in zip(model.trainable_variables, grads): v = v - lr * g`` rebinds the
        # loop's name only: the variables in the iterable never change, so nothing trains.
        return (
            f"Line {rebind.line}: `{rebind.statement}` only rebinds the loop name `{name}` "
            f"(line {rebind.loop_line}: `for ... in {rebind.loop_iterable}`) to a new "
            f"tf.Tensor: the {_what(before)}s it went through are never changed, so nothing "
            f"trained. Update each one in place instead: `{fix or rebind.fix}`."
        )
    again = "" if same_cell else f", after creating `{name}` again as a variable"
    return (
        f"Line {rebind.line}: `{rebind.statement}` replaced the {_what(before)} `{name}` with a "
        f"new tf.Tensor, so `{name}` stops training: from the next step on, tape.gradient "
        f"with respect to it is None. Update the variable in place instead: "
        f"`{fix or rebind.fix}`{again}."
    )


def _consequence(holder_kind: str, in_call: bool) -> str:
    if in_call:
        return (
            "The layer keeps computing with a tensor made during this call: the variable no "
            "longer holds the running value, and a tensor made while fit() traced the step "
            "belongs to that graph (using it later fails with 'out of scope')."
        )
    if holder_kind == "tf.Module":
        return (
            "It has left the module's trainable_variables, so the optimizer no longer updates "
            "it and its gradient is None."
        )
    if holder_kind == "object":
        return "The optimizer no longer updates it and tape.gradient for it is None."
    return (
        "Keras still lists the old variable in trainable_weights, but the layer now computes "
        "with the tensor: the variable gets no gradient and stops training (fit() warns "
        "'Gradients do not exist for variables' and trains the other weights; only when no "
        "weight has a gradient does it fail with 'No gradients provided for any variable')."
    )


def attribute_rebound_text(
    target: str,
    before: str,
    holder_kind: str,
    where: str | None,
    statement: str | None,
    fix: str | None,
    owner: str | None,
    in_call: bool = False,
) -> str:
    at = f"{where}: " if where else ""
    of = f" (in {owner})" if owner else ""
    augmented = (
        " Keras variables have no in-place `-=`/`+=`: it made a new tensor."
        if (
            before == "keras.Variable"
            and statement is not None
            and "=" in statement
            and statement.split("=", 1)[0].rstrip().endswith(("-", "+", "*", "/"))
        )
        else ""
    )
    done = f"`{statement}`" if statement else f"an assignment to `{target}`"
    fix_text = f"`{fix}`" if fix else f"`{target}.assign(...)` / `{target}.assign_sub(...)`"
    return (
        f"{at}{done}{of} replaced the {_what(before)} `{target}` with a tf.Tensor."
        f"{augmented} {_consequence(holder_kind, in_call)} Update the variable in place "
        f"instead: {fix_text}."
    )


class ReboundReporter:
    """Turns this cell's evidence into ``variables`` entries, each cause once."""

    def __init__(self, locator: CellLocator, kind_of: Any) -> None:
        self._locator = locator
        self.kind_of = kind_of
        # Learned from every cell parsed so far: which attributes are assigned from
        # tf.Variable/add_weight, and the rebinding statements written in methods.
        self._created_attributes: set[str] = set()
        self._class_rebinds: dict[str, list[Rebind]] = {}
        # path -> id of the tensor reported there, so one rebinding is told once.
        self._reported_plain: dict[str, int] = {}

    def learn(self, cell: CellRebinds) -> None:
        if len(self._created_attributes) < MAX_ATTRIBUTES_REMEMBERED:
            self._created_attributes |= cell.created_attributes
        for rebind in cell.rebinds:
            if rebind.in_class and rebind.target.startswith("self."):
                known = self._class_rebinds.setdefault(rebind.in_class, [])
                if len(self._class_rebinds) > MAX_CLASSES_REMEMBERED:
                    del self._class_rebinds[rebind.in_class]
                    continue
                known[:] = [r for r in known if r.target != rebind.target] + [rebind]

    # --------------------------------------------------------- the hook
    def from_attribute_events(
        self, events: list[AttributeRebind]
    ) -> tuple[list[VariableChange], set[int], set[int]]:
        """Entries for the setattr hook's events, the ids of the objects concerned, and
        the ids of the variables replaced and of the tensors that replaced them."""
        entries: list[VariableChange] = []
        holders: set[int] = set()
        tensors: set[int] = set()
        for event in events:
            holders.add(event.holder_id)
            tensors.add(event.tensor_id)
            tensors.add(event.variable_id)
            rebind = statement_at(event.filename, event.line, event.attribute)
            statement = rebind.statement if rebind is not None else None
            fix = None
            if rebind is not None:
                fix = fix_text(rebind, event.rank, event.number_locals.__contains__)
            if statement is not None and "ag__" in statement:
                statement, fix = None, None  # AutoGraph's rewritten copy: not the user's text
            target = rebind.target if rebind is not None else None
            if target is None or target.startswith("ag__"):
                target = f"self.{event.attribute}"
            where = self._where(event.filename, event.line)
            in_method = event.in_function not in ("<module>",)
            owner = None
            if in_method:
                label = f"{event.holder_class}.{event.in_function}()"
                named = f" of layer '{event.holder_name}'" if event.holder_name else ""
                owner = f"`{label}`{named}"
            holder_kind = event.holder_kind or "tf.Module"
            text = attribute_rebound_text(
                target,
                event.before,
                holder_kind,
                where,
                statement,
                fix,
                owner,
                in_call=event.in_function == "call",
            )
            entries.append(_entry(target, "attribute_rebound", event.before, text))
        return entries, holders, tensors

    def _where(self, filename: str, line: int) -> str:
        """``Line 7`` in the running cell (compiled last), ``Cell In[3], line 7`` elsewhere."""
        files = self._locator.cell_files()
        number = files.get(filename)
        if number is not None and number == max(files.values()):
            return f"Line {line}"
        return self._locator.describe(filename, line)

    # ------------------------------------------------------ the source
    def from_cell_source(
        self,
        cell: CellRebinds,
        namespace: Mapping[str, Any],
        previous_kinds: Mapping[str, str | None],
        already: set[str],
        hooked_holders: set[int],
        holders_hooked: bool,
    ) -> tuple[list[VariableChange], set[int]]:
        """Entries for rebinding statements of this cell that left a tensor behind.

        ``previous_kinds``: each name's kind before this cell (the namespace diff's
        memory); ``already``: names reported by the diff (their text is upgraded by
        ``improve``, not duplicated); ``hooked_holders``: objects the setattr hook
        reported; ``holders_hooked``: whether that hook is installed at all.
        Returns the entries and the ids of the tensors they name.
        """
        entries: list[VariableChange] = []
        tensor_ids: set[int] = set()
        reported: set[str] = set(already)
        kind_of = self.kind_of
        for rebind in cell.rebinds:
            if rebind.target in reported:
                continue
            if rebind.in_function is not None:
                continue  # code inside a def runs later, through its objects
            if "." not in rebind.target:
                value = namespace.get(rebind.target)
                before = previous_kinds.get(rebind.target)
                if kind_of(value) != TENSOR:
                    continue
                if before not in ("tf.Variable", "keras.Variable"):
                    if rebind.target in cell.created:
                        before = "tf.Variable"
                    elif rebind.loop_iterable is not None and self._loops_over_variables(
                        rebind.loop_iterable, namespace
                    ):
                        before = "tf.Variable"
                    else:
                        continue
                reported.add(rebind.target)
                tensor_ids.add(id(value))
                same_cell = rebind.target in cell.created
                fix = fix_text(rebind, rank_of(value), python_numbers_in(namespace))
                text = name_rebound_text(rebind.target, before, rebind, same_cell, fix)
                entries.append(_entry(rebind.target, "rebound_to_tensor", before, text))
                continue
            found = _resolve(namespace, rebind.target)
            if found is None:
                continue
            holder, value = found
            if kind_of(value) != TENSOR:
                continue
            holder_kind = kind_of(holder)
            if holder_kind is not None and holders_hooked:
                continue  # tf.Module/Keras objects: the setattr hook saw it, with its line
            if id(holder) in hooked_holders:
                continue
            if rebind.attribute not in self._created_attributes and rebind.target not in (
                cell.created
            ):
                continue
            reported.add(rebind.target)
            tensor_ids.add(id(value))
            text = attribute_rebound_text(
                rebind.target,
                "tf.Variable",
                holder_kind or "object",
                f"Line {rebind.line}",
                rebind.statement,
                fix_text(rebind, rank_of(value), python_numbers_in(namespace)),
                None,
            )
            entries.append(_entry(rebind.target, "attribute_rebound", "tf.Variable", text))
        entries.extend(self._methods_of_plain_objects(namespace, reported, tensor_ids))
        return entries, tensor_ids

    def _loops_over_variables(self, iterable: str, namespace: Mapping[str, Any]) -> bool:
        """Whether a ``for`` loop's iterable surely yields variables: it reads a model's
        variable list by name (``m.trainable_variables``), or a list held in the namespace
        whose first item is a variable (``zip(params, grads)``). No user property runs."""
        try:
            tree = ast.parse(iterable, mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in _VARIABLE_LISTS:
                return True
            if isinstance(node, ast.Name):
                held = namespace.get(node.id)
                if type(held) in (list, tuple) and held:
                    if self.kind_of(held[0]) in ("tf.Variable", "keras.Variable"):
                        return True
        return False

    def _methods_of_plain_objects(
        self, namespace: Mapping[str, Any], reported: set[str], tensor_ids: set[int]
    ) -> list[VariableChange]:
        """``self.w = self.w - lr * g`` in a method of a plain Python class."""
        if not self._class_rebinds:
            return []
        entries: list[VariableChange] = []
        looked = 0
        for name, value in list(namespace.items()):
            if type(name) is not str or name.startswith("_"):
                continue
            value_type = type(value)
            rebinds = self._class_rebinds.get(value_type.__name__)
            if rebinds is None or value_type.__module__ != "__main__":
                continue
            if self.kind_of(value) is not None:
                continue  # tf.Module/Keras objects: the setattr hook reports those
            looked += 1
            if looked > MAX_CANDIDATE_OBJECTS:
                break
            attributes = instance_dict(value)
            if attributes is None:
                continue
            for rebind in rebinds:
                attribute = rebind.attribute
                if attribute is None or attribute not in self._created_attributes:
                    continue
                current = attributes.get(attribute)
                if self.kind_of(current) != TENSOR or id(current) in tensor_ids:
                    continue
                path = f"{name}.{attribute}"
                if path in reported or self._reported_plain.get(path) == id(current):
                    continue
                reported.add(path)
                if len(self._reported_plain) >= MAX_ATTRIBUTES_REMEMBERED:
                    self._reported_plain.clear()
                self._reported_plain[path] = id(current)
                tensor_ids.add(id(current))
                text = attribute_rebound_text(
                    path,
                    "tf.Variable",
                    "object",
                    None,
                    rebind.statement,
                    fix_text(rebind, rank_of(current), _never),  # the method's locals: unknown
                    f"`{value_type.__name__}.{(rebind.in_function or '?').split('.')[-1]}()`",
                )
                entries.append(_entry(path, "attribute_rebound", "tf.Variable", text))
        return entries

    def improve(
        self, entry: VariableChange, cell: CellRebinds, namespace: Mapping[str, Any]
    ) -> None:
        """Give a namespace-diff entry the statement and fix from this cell's source."""
        name = entry.get("name")
        for rebind in cell.rebinds:
            if rebind.target == name and rebind.in_function is None:
                rank = rank_of(namespace.get(name))
                fix = fix_text(rebind, rank, python_numbers_in(namespace))
                entry["text"] = name_rebound_text(
                    name, str(entry.get("before")), rebind, name in cell.created, fix
                )
                return


def _resolve(namespace: Mapping[str, Any], dotted: str) -> tuple[Any, Any] | None:
    """``(holder, value)`` for ``a.b.c`` read through instance ``__dict__``s only."""
    parts = dotted.split(".")
    current = namespace.get(parts[0])
    holder = None
    for part in parts[1:]:
        attributes = instance_dict(current)
        if attributes is None or part not in attributes:
            return None
        holder, current = current, attributes[part]
    if holder is None:
        return None
    return holder, current
