"""A reference kept where a copy was meant: ``w_before = reg.w`` before training.

A ``tf.Variable`` is updated in place, so a second name bound to it (``w_before =
reg.w``), or a list of a model's variables (``self.best_weights = self.model.weights``),
follows every update: ``reg.w - w_before`` is 0 after training, and restoring the "best"
weights restores the last ones. Nothing raises.

After a cell in which training changed variables (an optimizer applied gradients:
``stopped_learning.CellTraining.with_gradient``; or ``fit`` ran and stepped its optimizer:
the model's trainable variables, ``training/fit_watch.py``), this module looks, by
identity, for names bound to those very variable objects, or to a plain list/tuple of
them:

- names of the notebook namespace;
- attributes of instances of the learner's own classes found in the namespace (a
  callback kept as ``keeper``), read from their ``__dict__`` (no property runs).

A binding found that way is reported only when the learner's source shows it was meant
as a snapshot, read with ``ast`` (the cell and earlier cells in ``In``; a class's methods
through ``inspect``): the statement that bound it is a plain reference (``x = obj.attr``,
``x = model.weights``, ``list(model.weights)``: a call that creates a variable, like
``tf.Variable(...)`` or ``add_weight(...)``, is no reference), and either its name reads
as a snapshot (``*_before``, ``best_*``, ``initial_*``, ``*_backup``...), or the code
subtracts or compares it with something, or restores it (``set_weights``, ``assign``).
A real copy (``tf.identity``, ``.numpy()``, ``get_weights()``) is another object and is
never found. The fix is in the learner's names: ``w_before = tf.identity(reg.w)`` (or
``.numpy().copy()`` for a Keras variable), ``self.best_weights =
self.model.get_weights()`` restored with ``self.model.set_weights(self.best_weights)``.

A list of snapshots filled by ``snaps.append(self.model.weights)`` (one per epoch, per
cycle) is the same mistake repeated: each entry is the list of the live variables, so
every entry holds the same objects and shows the latest values, and an ensemble or an
average built from them is one model. Such a list (of lists holding trained variables,
a name or a user object's attribute) is told when the learner's source appends a plain
reference to it (``X.append(model.weights)``) and at least two entries hold the very same
variables (one entry could be a group of variables kept on purpose); the fix appends
``model.get_weights()`` (or copies of the values).

Cost: nothing after a cell without training; after one, one pass over the namespace
(ids, list lengths) and the ``__dict__`` of at most ``MAX_INSTANCES`` user objects; the
sources are parsed only for a binding found.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, keras_trainable_variables
from jupyterlab_tfcoach.monitor.training.user_code import method_source, parse
from jupyterlab_tfcoach.monitor.word_gates import word_gate

SECTION = "variable-references"
MAX_NAMES = 20_000
MAX_INSTANCES = 200
MAX_ATTRIBUTES = 500
MAX_LIST = 5000
MAX_VARIABLES = 2000
MAX_NOTES = 3
MAX_HISTORY_CELLS = 30
MAX_TOLD = 1000
# (label, id of the bound object) of the bindings already told: a name still bound to the
# same variable is not told again after every later training cell.
_TOLD: set[tuple[str, int]] = set()
_type_dict = type.__dict__["__dict__"].__get__  # a class's own namespace, no metaclass hook
_type_mro = type.__dict__["__mro__"].__get__
_SNAPSHOT_NAME = word_gate(
    r"(^|_)(before|old|prev|previous|initial|init|start|orig|original|backup|saved|"
    r"snapshot|best|last_good|copy|checkpoint)(_|$|\d)|snapshot|backup",
    re.IGNORECASE,
)
# Calls whose result still holds the same variable objects (a shallow container).
_SHALLOW_CALLS = frozenset({"list", "tuple", "copy"})
_RESTORE_CALLS = frozenset({"set_weights", "assign", "load_weights"})
_COMPARE_CALLS = frozenset(
    {"allclose", "array_equal", "equal", "not_equal", "assert_allclose", "isclose"}
)


def trained_ids(training: Any, tape_sources: set[int], fits: Any) -> set[int]:
    """Ids of the variables training changed in the cell: those an optimizer got a
    gradient for, those ``tape.gradient`` differentiated (a loop that updates them with
    ``assign_sub``), and the trainable variables of every model whose ``fit`` stepped."""
    found: set[int] = set(tape_sources or ())
    if training is not None and getattr(training, "calls", 0):
        found |= set(getattr(training, "with_gradient", ()) or ())
    for run in getattr(fits, "fits", None) or ():
        stepped = run.optimizer_stepped is True or any(w.changed for w in run.weights)
        model = run.model() if stepped else None
        if model is None:
            continue
        variables = keras_trainable_variables(model, MAX_VARIABLES) or []
        found |= {id(v) for v in variables}
    return found


@dataclass
class Binding:
    """A name (``w_before``) or an instance's attribute (``keeper.best_weights``) bound
    to trained variables."""

    label: str  # how the report names it: ``w_before``, ``keeper.best_weights``
    target: str  # the name its statement assigns: ``w_before``, ``best_weights``
    is_list: bool
    keras: bool  # the variables are Keras 3 variables
    instance: Any = None  # the user's object whose attribute it is
    value_id: int = 0  # id of what it is bound to (the variable, the list)
    # A list of snapshots whose entries hold trained variables (``snaps.append(...)``):
    # how many entries hold the very variables of the first one.
    same_entries: int = 0
    entries: int = 0


def _bound_to_trained(value: Any, trained: set[int]) -> tuple[bool, bool] | None:
    """(is_list, keras) when ``value`` is a trained variable or a plain list/tuple
    holding one; None otherwise."""
    if id(value) in trained:
        return False, _is_keras(value)
    if type(value) in (list, tuple) and 0 < len(value) <= MAX_LIST:
        for item in value:
            if id(item) in trained:
                return True, _is_keras(item)
    return None


def _appended_snapshots(value: Any, trained: set[int]) -> tuple[bool, int, int] | None:
    """(keras, entries holding the first entry's variables, entries) when ``value`` is a
    plain list whose entries are lists/tuples holding trained variables; None otherwise."""
    if type(value) is not list or not 0 < len(value) <= MAX_LIST:
        return None
    first = value[0]
    if type(first) not in (list, tuple) or not 0 < len(first) <= MAX_LIST:
        return None
    held = [id(item) for item in first]
    found = next((item for item in first if id(item) in trained), None)
    if found is None:
        return None
    same = 0
    for entry in value:
        if type(entry) in (list, tuple) and [id(item) for item in entry] == held:
            same += 1
    return _is_keras(found), same, len(value)


def _is_keras(variable: Any) -> bool:
    module = _type_dict(type(variable)).get("__module__", "")
    return type(module) is str and module.startswith("keras")


def _user_class(value: Any) -> bool:
    cls = type(value)
    try:
        module = _type_dict(cls).get("__module__")
    except Exception:
        return False
    return module == "__main__"


def find_bindings(trained: set[int], namespace: dict[str, Any]) -> list[Binding]:
    bindings: list[Binding] = []
    instances = 0
    for name, value in list(namespace.items())[:MAX_NAMES]:
        if type(name) is not str or name.startswith("_"):
            continue
        found = _bound_to_trained(value, trained)
        if found is not None:
            bindings.append(Binding(name, name, found[0], found[1], None, id(value)))
            continue
        appended = _appended_snapshots(value, trained)
        if appended is not None:
            keras, same, entries = appended
            bindings.append(Binding(name, name, True, keras, None, id(value), same, entries))
            continue
        if instances >= MAX_INSTANCES or not _user_class(value):
            continue
        instances += 1
        attributes = instance_dict(value)
        if attributes is None:
            continue
        for attribute, stored in list(attributes.items())[:MAX_ATTRIBUTES]:
            # Private attributes are the libraries' bookkeeping (a Keras layer's
            # ``_trainable_variables``), not the learner's snapshots.
            if type(attribute) is not str or attribute.startswith("_"):
                continue
            found = _bound_to_trained(stored, trained)
            label = f"{name}.{attribute}"
            if found is not None:
                bindings.append(Binding(label, attribute, found[0], found[1], value, id(stored)))
                continue
            appended = _appended_snapshots(stored, trained)
            if appended is not None:
                keras, same, entries = appended
                bindings.append(
                    Binding(label, attribute, True, keras, value, id(stored), same, entries)
                )
    return bindings


# ------------------------------------------------------------------ the learner's source
@dataclass
class Statement:
    """``target = reference`` as written, and where."""

    text: str  # the whole statement
    target_text: str  # ``w_before``, ``self.best_weights``
    reference: str  # ``reg.w``, ``self.model.weights``
    owner: str | None  # ``self.model`` for ``self.model.weights``; None for a variable
    attribute: str | None  # ``weights``
    where: str  # "in `KeepBest.on_epoch_end`" or "this cell" / "an earlier cell"
    # ``a, b = x, y``: each target's text with its value's text, for the rewritten tuple.
    parts: list[tuple[str, str]] | None = None


def _reference(node: ast.AST) -> ast.AST | None:
    """The reference expression a plain-reference value holds (``model.weights`` for
    ``list(model.weights)``), or None for a value that makes something new."""
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        return node
    if (
        isinstance(node, ast.Call)
        and len(node.args) == 1
        and not node.keywords
        and (
            (isinstance(node.func, ast.Name) and node.func.id in _SHALLOW_CALLS)
            or (isinstance(node.func, ast.Attribute) and node.func.attr == "copy")
        )
    ):
        inner = node.args[0]
        return inner if isinstance(inner, (ast.Name, ast.Attribute, ast.Subscript)) else None
    if (
        isinstance(node, ast.ListComp)
        and len(node.generators) == 1
        and isinstance(node.elt, ast.Name)
        and isinstance(node.generators[0].target, ast.Name)
        and node.elt.id == node.generators[0].target.id
        and not node.generators[0].ifs
    ):
        inner = node.generators[0].iter
        return inner if isinstance(inner, (ast.Name, ast.Attribute)) else None
    return None


def _assignment(
    tree: ast.AST, source: str, target: str, on_self: str | None
) -> tuple[ast.Assign, ast.AST | None] | None:
    """The last ``target = ...`` (``self.target = ...`` with ``on_self``) and the
    reference it binds (None: a value that makes something new)."""
    found = None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        for left, value in _pairs(node.targets[0], node.value):
            if on_self is None:
                matches = isinstance(left, ast.Name) and left.id == target
            else:
                matches = (
                    isinstance(left, ast.Attribute)
                    and left.attr == target
                    and isinstance(left.value, ast.Name)
                    and left.value.id == on_self
                )
            if matches and (found is None or node.lineno >= found[0].lineno):
                found = (node, _reference(value) if value is not None else None)
    return found


def _pairs(left: ast.AST, value: ast.AST) -> list[tuple[ast.AST, ast.AST | None]]:
    """What each target of an assignment gets: ``a, b = x, y`` pairs ``a`` with ``x``;
    a target unpacked from anything else gets None (not a plain reference)."""
    if isinstance(left, (ast.Tuple, ast.List)):
        values = value.elts if isinstance(value, (ast.Tuple, ast.List)) else None
        if values is None or len(values) != len(left.elts):
            return [(element, None) for element in left.elts]
        return list(zip(left.elts, values, strict=True))
    return [(left, value)]


def _uses(tree: ast.AST, spelled: str, source: str) -> tuple[str | None, bool, bool]:
    """How the code uses the binding spelled ``w_before`` / ``self.best_weights``: the
    text of a subtraction with it (``reg.w - w_before``), whether it compares it, whether
    it restores it."""
    subtraction, compared, restored = None, False, False
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
            if spelled in (_spelled(node.left), _spelled(node.right)):
                subtraction = subtraction or ast.get_source_segment(source, node)
        elif isinstance(node, ast.Compare):
            if spelled in {_spelled(node.left), *(_spelled(c) for c in node.comparators)}:
                compared = True
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else None
            if isinstance(node.func, ast.Name):
                name = node.func.id
            if name in _RESTORE_CALLS or name in _COMPARE_CALLS:
                inside = any(
                    _spelled(inner) == spelled
                    for argument in node.args
                    for inner in ast.walk(argument)
                )
                if inside and name in _RESTORE_CALLS:
                    restored = True
                elif inside:
                    compared = True
    return subtraction, compared, restored


def _spelled(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None


def _restore_call(tree: ast.AST, spelled: str, source: str) -> str | None:
    """The learner's restoring statement (``self.model.set_weights([...])``)."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "set_weights"
            and any(_spelled(i) == spelled for a in node.args for i in ast.walk(a))
        ):
            return ast.get_source_segment(source, node)
    return None


def _statement(
    tree: ast.AST, source: str, target: str, on_self: str | None, where: str
) -> Statement | None:
    """The statement that binds ``target`` with a plain reference, or None (also when
    the last statement that binds it makes something new)."""
    found = _assignment(tree, source, target, on_self)
    if found is None or found[1] is None:
        return None
    node, reference = found
    text = ast.get_source_segment(source, node) or ""
    left = ast.get_source_segment(source, node.targets[0]) or target
    reference_text = ast.get_source_segment(source, reference) or ""
    if not text or "\n" in text or not reference_text:
        return None
    owner = attribute = None
    if isinstance(reference, ast.Attribute):
        owner = ast.get_source_segment(source, reference.value)
        attribute = reference.attr
    parts = None
    whole = node.targets[0]
    if isinstance(whole, (ast.Tuple, ast.List)):
        left = next(
            (
                ast.get_source_segment(source, t) or target
                for t, v in _pairs(whole, node.value)
                if v is reference
            ),
            target,
        )
        parts = [
            (ast.get_source_segment(source, t) or "", ast.get_source_segment(source, v) or "")
            for t, v in _pairs(whole, node.value)
            if v is not None
        ]
        if len(parts) != len(whole.elts) or not all(t and v for t, v in parts):
            parts = None
    return Statement(text, left, reference_text, owner, attribute, where, parts)


# ---------------------------------------------------------------------------- notes
def reference_notes(
    training: Any,
    tape_sources: set[int],
    fits: Any,
    namespace: dict[str, Any],
    cell_source: str,
) -> list[Note]:
    """Notes for snapshots that are references, after a cell in which training ran."""
    try:
        trained = trained_ids(training, tape_sources, fits)
        if not trained:
            return []
        notes = []
        told: set[str] = set()  # statements already told (one tuple assignment binds several)
        bindings = find_bindings(trained, namespace)[:20]
        single = {b.target for b in bindings if not b.is_list}
        for binding in bindings:
            key = (binding.label, binding.value_id)
            if key in _TOLD:
                continue  # told after an earlier cell; said again when it is bound anew
            found = _binding_text(binding, namespace, cell_source, single)
            if found is not None and found[0] not in told:
                told.add(found[0])
                if len(_TOLD) >= MAX_TOLD:
                    _TOLD.clear()
                _TOLD.add(key)
                notes.append(reports.note(found[1], SECTION))
                if len(notes) >= MAX_NOTES:
                    break
        return notes
    except Exception:
        return []


def _sources(namespace: dict[str, Any], cell_source: str) -> list[tuple[str, str]]:
    history = namespace.get("In")
    earlier = history[-MAX_HISTORY_CELLS:] if type(history) is list else []
    found = [(cell_source, "this cell")]
    found.extend((s, "an earlier cell") for s in reversed(earlier) if type(s) is str)
    return found


def _may_be_meant_as_snapshot(binding: Binding, cell_source: str) -> bool:
    """A cheap filter before any parsing: a snapshot-like name, or a cell whose text could
    subtract, compare or restore it (a variable trained under its own name is common)."""
    if _SNAPSHOT_NAME.search(binding.target) or binding.instance is not None:
        return True
    return binding.target in cell_source and any(
        mark in cell_source
        for mark in ("-", "==", "!=", "<", ">", "set_weights", "assign", "close")
    )


def _binding_text(
    binding: Binding, namespace: dict[str, Any], cell_source: str, single: set[str]
) -> tuple[str, str] | None:
    """The statement that bound it and the note's text, or None."""
    if binding.entries:
        return _appended_text(binding, namespace, cell_source)
    if not _may_be_meant_as_snapshot(binding, cell_source):
        return None
    if binding.instance is None:
        for source, where in _sources(namespace, cell_source):
            if binding.target not in source:
                continue
            tree = parse(source)
            if tree is None:
                continue
            if _assignment(tree, source, binding.target, None) is None:
                continue  # not bound in this cell: look further back
            statement = _statement(tree, source, binding.target, None, where)
            if statement is None:
                return None
            # Uses in this cell and the one that bound it.
            uses = _uses(tree, binding.target, source)
            if where != "this cell":
                here = parse(cell_source)
                if here is not None:
                    more = _uses(here, binding.target, cell_source)
                    uses = (uses[0] or more[0], uses[1] or more[1], uses[2] or more[2])
            restore = _restore_call(tree, binding.target, source)
            return _told(binding, statement, uses, restore, namespace, single)
        return None
    for function, owner in _methods_of(type(binding.instance)):
        method = method_source(function)
        if method is None or binding.target not in method.source:
            continue
        arguments = method.tree.body[0].args.args if method.tree.body else []
        if not arguments or not isinstance(method.tree.body[0], ast.FunctionDef):
            continue
        this = arguments[0].arg
        where = f"in `{owner}.{function.__name__}`"
        statement = _statement(method.tree, method.source, binding.target, this, where)
        if statement is None:
            continue
        spelled = f"{this}.{binding.target}"
        uses: tuple[str | None, bool, bool] = (None, False, False)
        restore = None
        for other, _ in _methods_of(type(binding.instance)):
            other_source = method_source(other)
            if other_source is None:
                continue
            more = _uses(other_source.tree, spelled, other_source.source)
            uses = (uses[0] or more[0], uses[1] or more[1], uses[2] or more[2])
            restore = restore or _restore_call(other_source.tree, spelled, other_source.source)
        return _told(binding, statement, uses, restore, namespace, single)
    return None


def _methods_of(cls: type) -> list[tuple[Any, str]]:
    """The functions the user's classes (the instance's class and its user bases) define."""
    found = []
    for klass in _type_mro(cls)[:10]:
        attributes = _type_dict(klass)
        if attributes.get("__module__") != "__main__":
            continue
        for value in list(attributes.values())[:200]:
            if type(value).__name__ == "function":
                found.append((value, klass.__name__))
    return found


def _tf_alias(namespace: dict[str, Any]) -> str | None:
    for name, value in list(namespace.items())[:MAX_NAMES]:
        if type(name) is str and not name.startswith("_"):
            if getattr(type(value), "__name__", "") == "module" and _module_name(value) == (
                "tensorflow"
            ):
                return name
    return None


def _module_name(module: Any) -> str | None:
    try:
        return module.__dict__.get("__name__")
    except Exception:
        return None


def _told(
    binding: Binding,
    statement: Statement,
    uses: tuple[str | None, bool, bool],
    restore: str | None,
    namespace: dict[str, Any],
    single: set[str],
) -> tuple[str, str] | None:
    text = _text(binding, statement, uses, restore, namespace, single)
    return (statement.text, text) if text is not None else None


def _text(
    binding: Binding,
    statement: Statement,
    uses: tuple[str | None, bool, bool],
    restore: str | None,
    namespace: dict[str, Any],
    single: set[str],
) -> str | None:
    subtraction, compared, restored = uses
    named = bool(_SNAPSHOT_NAME.search(binding.target))
    if not (named or subtraction or compared or restored):
        return None
    left, reference = statement.target_text, statement.reference
    place = statement.where
    if binding.is_list:
        what = (
            f"`{reference}` is a list of the live variables, which training keeps updating in place"
        )
    else:
        what = (
            f"`{left}` and `{reference}` are the same `tf.Variable`, which training updated "
            "in place"
        )
    text = (
        f"`{statement.text}` ({place}) keeps a reference, not a copy: {what}, so "
        f"`{binding.label}` always holds the current values"
    )
    if subtraction:
        text += f" (`{subtraction}` is 0 everywhere)"
    elif restored:
        text += " and restoring it restores the latest weights, not the ones it was meant to keep"
    fix = _fix(binding, statement, restore, namespace, single)
    return f"{text}. Keep a copy of the values instead: {fix}."


def _fix(
    binding: Binding,
    statement: Statement,
    restore: str | None,
    namespace: dict[str, Any],
    single: set[str],
) -> str:
    left, reference = statement.target_text, statement.reference
    if binding.is_list:
        if statement.attribute == "weights" and statement.owner:
            fixed = f"`{left} = {statement.owner}.get_weights()`"
            if restore is not None:
                fixed += (
                    f", and restore them with `{statement.owner}.set_weights({left})`"
                    f" (in place of `{restore}`)"
                )
            return fixed
        return f"`{left} = [v.numpy().copy() for v in {reference}]`"
    alias = None if binding.keras else _tf_alias(namespace)

    def copied(value: str) -> str:
        return f"{alias}.identity({value})" if alias is not None else f"{value}.numpy().copy()"

    if statement.parts is not None:
        # ``a, b = x, y``: every plain reference to a trained variable copied at once.
        targets = ", ".join(t for t, _ in statement.parts)
        values = ", ".join(copied(v) if t in single else v for t, v in statement.parts)
        return f"`{targets} = {values}`"
    return f"`{left} = {copied(reference)}`"


# ------------------------------------------------------------- snapshots appended to a list
def _append_of(tree: ast.AST, source: str, spelled: str) -> tuple[str, str, ast.AST] | None:
    """``spelled.append(reference)`` in ``tree``: the statement, the list's text and the
    reference appended (a plain reference: ``model.weights``, ``list(model.weights)``)."""
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr == "append"
            and len(node.value.args) == 1
            and _spelled(node.value.func.value) == spelled
        ):
            continue
        reference = _reference(node.value.args[0])
        text = ast.get_source_segment(source, node)
        if reference is None or text is None or "\n" in text:
            continue
        return text, spelled, reference
    return None


def _appended_text(
    binding: Binding, namespace: dict[str, Any], cell_source: str
) -> tuple[str, str] | None:
    """The note for a list of snapshots filled with references, or None."""
    if binding.same_entries < 2:
        # One entry could be a group of variables kept on purpose (one per optimizer);
        # two holding the same variables are snapshots that cannot differ.
        return None
    found: tuple[str, str, ast.AST, str, str] | None = None  # + source, place
    if binding.instance is None:
        for source, where in _sources(namespace, cell_source):
            if f"{binding.target}.append" not in source:
                continue
            tree = parse(source)
            match = _append_of(tree, source, binding.target) if tree is not None else None
            if match is not None:
                found = (*match, source, where)
                break
    else:
        for function, owner in _methods_of(type(binding.instance)):
            method = method_source(function)
            if method is None or f".{binding.target}.append" not in method.source:
                continue
            body = method.tree.body
            if not body or not isinstance(body[0], ast.FunctionDef) or not body[0].args.args:
                continue
            this = body[0].args.args[0].arg
            match = _append_of(method.tree, method.source, f"{this}.{binding.target}")
            if match is not None:
                found = (*match, method.source, f"in `{owner}.{function.__name__}`")
                break
    if found is None:
        return None
    statement, kept, reference, source, where = found
    reference_text = ast.get_source_segment(source, reference)
    if reference_text is None:
        return None
    if isinstance(reference, ast.Attribute) and reference.attr == "weights":
        owner = ast.get_source_segment(source, reference.value)
        copy = f"{owner}.get_weights()"
    else:
        copy = f"[v.numpy().copy() for v in {reference_text}]"
    same = (
        f"all {binding.entries}"
        if binding.same_entries == binding.entries
        else f"{binding.same_entries} of the {binding.entries}"
    )
    text = (
        f"`{statement}` ({where}) appends a reference, not a copy: `{reference_text}` is a "
        f"list of the live variables, which training keeps updating in place, so each "
        f"snapshot in `{binding.label}` shows the current values, not those of its "
        f"moment: {same} entries of `{binding.label}` hold the very same variables. "
        f"Every difference between two snapshots is 0, and an average or an "
        f"ensemble built from them is the last model alone. Nothing raises. Append a copy "
        f"of the values instead: `{kept}.append({copy})`."
    )
    return statement, text
