"""Raw inputs given to a SavedModel exported from a model trained on preprocessed ones.

``model.export(path)`` (or ``tf.saved_model.save(model, path)``) writes the model alone:
a standardisation or a division done to the training data outside the model is not in
the exported graph. Calling the reloaded artefact (``reloaded.serve(x)``,
``reloaded.signatures["serving_default"](name=x)``) with raw inputs raises nothing and
returns meaningless outputs. ``input_ranges.py`` compares a Keras model's own
``predict``/``evaluate`` inputs with the range ``fit`` gave it; the reloaded object is not
that model, so this check links the two through the cells' source and compares the same
way, after the cell (nothing is hooked):

- in the running cell, a call ``R.<endpoint>(arg)`` (one positional argument) or
  ``R.signatures["key"](name=arg)`` (one keyword), where ``R`` holds an object
  ``tf.saved_model.load`` returned, and ``arg`` a name holding a NumPy array or an eager
  tensor, or such a name wrapped once (``tf.constant(x)``, ``np.asarray(x)``);
- the cells (the running one, then the ``In`` history, newest first) hold
  ``R = <...>.load(P)`` and ``M.export(P)`` or ``<...>.saved_model.save(M, P)`` with the
  same ``P`` as written, and ``M`` is a Keras model ``fit`` trained (its range known to
  ``input_ranges.RangeWatcher``): only then are the training statistics known;
- the argument's largest magnitude ``MISMATCH_RATIO`` times larger or smaller than the
  training inputs' (whole numbers on both sides, or a model that reads ids, are not
  compared), as for ``predict``.

The note names the call, both ranges, the exported model and the export call; fix: the
call with an array of the same shape already on the training scale (``x_test_n`` next to
``x_test``), else the same preprocessing asked for in words, or the preprocessing put
inside what is exported. Only numbers are read; nothing is run but NumPy's min and max.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.syntax import parsed_source
from jupyterlab_tfcoach.monitor.training.input_ranges import (
    MISMATCH_RATIO,
    RANGE_SECTION,
    CellRanges,
    InputRange,
    Mismatch,
    Trained,
    _array_range,
    _is_ndarray,
    _scaled_copy,
    _takes_codes,
    _tensor_range,
    _whole_numbers,
)

MAX_HISTORY_CELLS = 50
MAX_NOTES = 4
_WRAPPERS = frozenset({"constant", "convert_to_tensor", "asarray", "array"})
_LOADED_MODULE = "tensorflow.python.saved_model."


def _loaded(value: Any) -> bool:
    """Whether ``value`` is an object ``tf.saved_model.load`` returned."""
    module = getattr(type(value), "__module__", "")
    return type(module) is str and module.startswith(_LOADED_MODULE)


def _argument_name(node: ast.expr) -> str | None:
    """``x`` of ``x``, ``tf.constant(x)``, ``np.asarray(x)``."""
    if isinstance(node, ast.Name):
        return node.id
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _WRAPPERS
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Name)
    ):
        return node.args[0].id
    return None


def _served_calls(tree: ast.AST) -> list[tuple[ast.Call, str, str]]:
    """(the call, the loaded object's name, the data's name) of each served call."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and len(node.args) == 1
            and not node.keywords
        ):
            data = _argument_name(node.args[0])
            if data:
                found.append((node, func.value.id, data))
        elif (
            isinstance(func, ast.Subscript)
            and isinstance(func.value, ast.Attribute)
            and func.value.attr == "signatures"
            and isinstance(func.value.value, ast.Name)
            and not node.args
            and len(node.keywords) == 1
        ):
            data = _argument_name(node.keywords[0].value)
            if data:
                found.append((node, func.value.value.id, data))
    return found


def _path_loaded(trees: list[tuple[ast.AST, str]], loaded: str) -> str | None:
    """``P`` as written of the newest ``loaded = <...>.load(P)``."""
    for tree, source in trees:
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == loaded
                and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute)
                and node.value.func.attr == "load"
                and node.value.args
            ):
                return ast.get_source_segment(source, node.value.args[0])
    return None


def _exporter(trees: list[tuple[ast.AST, str]], path: str) -> tuple[str, str] | None:
    """(the model's name, the call as written) of the newest ``M.export(P)`` or
    ``<...>.saved_model.save(M, P)`` with ``P`` written as ``path``."""
    for tree, source in trees:
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            func, args = node.func, node.args
            model: ast.expr | None = None
            written_path: ast.expr | None = None
            if func.attr == "export" and isinstance(func.value, ast.Name) and args:
                model, written_path = func.value, args[0]
            elif (
                func.attr == "save"
                and isinstance(func.value, ast.Attribute)
                and func.value.attr == "saved_model"
                and len(args) >= 2
            ):
                model, written_path = args[0], args[1]
            if not isinstance(model, ast.Name) or written_path is None:
                continue
            if ast.get_source_segment(source, written_path) == path:
                call = ast.get_source_segment(source, node)
                if call and "\n" not in call:
                    return model.id, call
    return None


def _range(value: Any) -> InputRange | None:
    if _is_ndarray(value):
        return _array_range(value)
    if "EagerTensor" in type(value).__name__:
        return _tensor_range(value, "tensor")
    return None


def served_notes(cell: CellRanges | None, namespace: Mapping[str, Any], source: str) -> list[Note]:
    """Notes for this cell's calls of a reloaded export given inputs far from the range
    its model was trained on."""
    if cell is None or not cell.trained or not (".serve(" in source or "signatures[" in source):
        return []
    try:
        return _notes(cell.trained, namespace, source)
    except Exception:
        return []


def _notes(trained: Mapping[int, Trained], namespace: Mapping[str, Any], source: str) -> list[Note]:
    tree = parsed_source(source)
    if tree is None:
        return []
    calls = [found for found in _served_calls(tree) if _loaded(namespace.get(found[1], None))][
        :MAX_NOTES
    ]
    if not calls:
        return []
    history = namespace.get("In")
    earlier = history[-MAX_HISTORY_CELLS:] if type(history) is list else []
    trees: list[tuple[ast.AST, str]] = [(tree, source)]
    for text in reversed(earlier):
        if type(text) is not str or text == source:
            continue
        if ".load(" in text or ".export(" in text or ".save(" in text:
            parsed = parsed_source(text)
            if parsed is not None:
                trees.append((parsed, text))
    notes: list[Note] = []
    for call, loaded, data in calls:
        note = _note(call, loaded, data, trained, namespace, source, trees)
        if note is not None:
            notes.append(note)
    return notes


def _note(
    call: ast.Call,
    loaded: str,
    data: str,
    trained: Mapping[int, Trained],
    namespace: Mapping[str, Any],
    source: str,
    trees: list[tuple[ast.AST, str]],
) -> Note | None:
    path = _path_loaded(trees, loaded)
    exporter = _exporter(trees, path) if path else None
    if exporter is None:
        return None
    model_name, export_call = exporter
    model = namespace.get(model_name)
    record = trained.get(id(model)) if model is not None else None
    if record is None or record.model() is not model:
        return None
    value = namespace.get(data)
    given = _range(value)
    if given is None or id(value) == record.data_id:
        return None
    if (_whole_numbers(given) and _whole_numbers(record.inputs)) or _takes_codes(model):
        return None
    small, large = sorted((record.inputs.magnitude, given.magnitude))
    if small <= 0 or large / small < MISMATCH_RATIO:
        return None
    written = ast.get_source_segment(source, call)
    called = ast.get_source_segment(source, call.func)
    if not written or not called or "\n" in written:
        return None
    larger = given.magnitude > record.inputs.magnitude
    ratio = large / small
    trained_on = name_bound_to(record.data_id, namespace)
    trained_as = f"`{trained_on}`, " if trained_on else ""
    text = (
        f"`{called}` runs `{model_name}` as `{export_call}` wrote it, and was given "
        f"`{data}`, inputs {given.said()}, but fit trained `{model_name}` on {trained_as}"
        f"inputs {record.inputs.said()}: about {ratio:.3g} times "
        f"{'larger' if larger else 'smaller'}. The export holds the model only, not the "
        "preprocessing done to its training data outside it, so its outputs mean little, "
        "and nothing raises."
    )
    mismatch = Mismatch(id(model), "serve", record.inputs, record.data_id, given, id(value))
    copy = _scaled_copy(namespace, mismatch)
    argument = _argument_node(call)
    fixed = _with_copy(source, call, argument, copy) if copy and argument is not None else None
    if fixed:
        text += f" `{copy}` holds inputs of the same shape on the training scale: `{fixed}`."
    else:
        source_name = f" to `{trained_on}`" if trained_on else " to the training data"
        text += (
            f" Apply the preprocessing you applied{source_name} (the same statistics, "
            "computed on the training data) to these inputs."
        )
    text += (
        " Or export the preprocessing with the model (a `Normalization` layer adapted on the "
        "raw training data as its first layer, or a `tf.Module` whose function scales, then "
        "calls the model), so that every caller of the export gets it."
    )
    return reports.note(text, RANGE_SECTION)


def _argument_node(call: ast.Call) -> ast.expr | None:
    return call.args[0] if call.args else (call.keywords[0].value if call.keywords else None)


def _with_copy(source: str, call: ast.Call, argument: ast.expr, copy: str) -> str | None:
    """The call with the data's name replaced by the scaled copy's inside its argument
    (``tf.constant(x_test)`` -> ``tf.constant(x_test_n)``)."""
    written = ast.get_source_segment(source, call)
    shown = ast.get_source_segment(source, argument)
    if isinstance(argument, ast.Name):
        replaced: str | None = copy
    else:
        wrapper = ast.get_source_segment(source, argument.func)  # type: ignore[attr-defined]
        replaced = f"{wrapper}({copy})" if wrapper else None
    if not written or not shown or not replaced or written.count(shown) != 1:
        return None
    return written.replace(shown, replaced, 1)
