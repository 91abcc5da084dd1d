"""A reshuffling dataset iterated twice in one cell: once for predictions, once for labels.

``preds = model.predict(ds)`` then ``ys = np.concatenate([y for x, y in ds])`` reads
``ds`` twice. When ``ds`` holds a ``shuffle`` that reshuffles on every pass (tf.data's
default, ``reshuffle_each_iteration`` left at None or True) and no ``cache`` above it,
each pass draws a new order: ``preds[i]`` and ``ys[i]`` belong to different examples, an
accuracy or confusion matrix computed from them is near chance, and nothing raises
(``model.evaluate(ds)`` is right: it pairs each batch itself).

After a cell that completed, its source (skipped without a substring test passing:
``predict``, and ``for`` or ``list(``) is parsed once (``syntax.parsed_source``,
shared) for a ``<model>.predict(<name>)`` and a ``for`` loop or comprehension over the
same ``<name>`` (or its ``unbatch()``/``as_numpy_iterator()``/``map(...)``), or
``list(...)`` of one, that keeps the labels (a comprehension whose element reads the
``y`` of its ``x, y`` target, a loop appending ``y``, ``list(ds.map(lambda x, y: y))``:
a loop that only looks at the inputs is not one). The dataset the name holds is then
read by its lineage (``dataset_order.chain_of``: each transformation's stored
``_input_dataset``, no user code run), looking for such a shuffle. The note names both
passes and the shuffle; the fix predicts and collects the labels in one pass, in the
learner's names, or builds the evaluation dataset without the shuffle.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, library_attribute
from jupyterlab_tfcoach.monitor.symptoms.dataset_order import (
    CACHE,
    SHUFFLE,
    chain_of,
    operation,
)
from jupyterlab_tfcoach.monitor.syntax import numpy_name, parsed_source

SECTION = "tf-data-order"
_PREDICT_CALLS = frozenset({"predict"})
# Calls over a dataset that keep its order (``for x, y in ds.unbatch()``).
_SAME_ORDER = frozenset({"unbatch", "as_numpy_iterator", "prefetch", "map"})
# Calls that iterate their argument (``list(ds.map(lambda x, y: y))``).
_ITERATING_CALLS = frozenset({"list"})


def reshuffling_shuffle(dataset: Any) -> Any | None:
    """The ``shuffle`` link of a dataset's lineage that draws a new order on every pass
    (no ``cache`` above it replays one); None when there is none."""
    for link in chain_of(dataset):
        kind = operation(link)
        if kind == CACHE:
            return None
        if kind == SHUFFLE:
            reshuffle = (instance_dict(link) or {}).get("_reshuffle_each_iteration")
            return link if reshuffle is None or reshuffle is True else None
    return None


def _iterated_name(node: ast.AST) -> str | None:
    for _ in range(3):
        if isinstance(node, ast.Name):
            return node.id
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _SAME_ORDER
        ):
            node = node.func.value
            continue
        return None
    return None


def _label_names(target: ast.AST) -> set[str]:
    """The names after the first of a loop's ``x, y`` target: the labels."""
    if isinstance(target, ast.Tuple | ast.List) and len(target.elts) >= 2:
        return {e.id for e in target.elts[1:] if isinstance(e, ast.Name)}
    return set()


def _mentions(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _collects_labels(node: ast.AST, tree: ast.Module) -> bool:
    """A loop or comprehension over ``(x, y)`` pairs that keeps the labels: a
    comprehension whose element reads ``y``, a loop appending or extending with ``y``,
    ``list(ds.map(lambda x, y: y))``."""
    if isinstance(node, ast.comprehension):
        labels = _label_names(node.target)
        owner = next(
            (
                n
                for n in ast.walk(tree)
                if isinstance(n, ast.ListComp | ast.GeneratorExp | ast.SetComp)
                and node in n.generators
            ),
            None,
        )
        return bool(labels) and owner is not None and _mentions(owner.elt, labels)
    if isinstance(node, ast.For):
        labels = _label_names(node.target)
        return bool(labels) and any(
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in ("append", "extend")
            and any(_mentions(a, labels) for a in n.args)
            for statement in node.body
            for n in ast.walk(statement)
        )
    if isinstance(node, ast.Call) and node.args:
        mapped = node.args[0]
        if (
            isinstance(mapped, ast.Call)
            and isinstance(mapped.func, ast.Attribute)
            and mapped.func.attr == "map"
            and mapped.args
            and isinstance(mapped.args[0], ast.Lambda)
        ):
            function = mapped.args[0]
            parameters = [a.arg for a in function.args.args]
            return len(parameters) >= 2 and _mentions(function.body, set(parameters[1:]))
    return False


def _target_of(tree: ast.Module, node: ast.AST) -> str | None:
    """The name a top-level ``name = ...`` holding ``node`` assigns."""
    for statement in tree.body:
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and any(child is node for child in ast.walk(statement.value))
        ):
            return statement.targets[0].id
    return None


def _pairs(dataset: Any) -> bool:
    spec = library_attribute(dataset, "element_spec")
    return type(spec) is tuple and len(spec) == 2


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a reshuffling dataset read once by predict and once by a loop."""
    if "predict" not in source or ("for" not in source and "list(" not in source):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    predicted: dict[str, ast.Call] = {}
    looped: dict[str, ast.AST] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _PREDICT_CALLS
            and node.args
            and isinstance(node.args[0], ast.Name)
        ):
            predicted.setdefault(node.args[0].id, node)
        elif isinstance(node, ast.For | ast.comprehension):
            name = _iterated_name(node.iter)
            if name is not None and _collects_labels(node, tree):
                looped.setdefault(name, node)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _ITERATING_CALLS
            and len(node.args) == 1
        ):
            name = _iterated_name(node.args[0])
            if name is not None and _collects_labels(node, tree):
                looped.setdefault(name, node)
    for name, call in predicted.items():
        loop = looped.get(name)
        if loop is None:
            continue
        dataset = namespace.get(name)
        shuffle = reshuffling_shuffle(dataset)
        if shuffle is None:
            continue
        return [_note(name, call, loop, tree, source, dataset, namespace)]
    return []


def _note(
    name: str,
    call: ast.Call,
    loop: ast.AST,
    tree: ast.Module,
    source: str,
    dataset: Any,
    namespace: Mapping[str, Any],
) -> Note:
    predicted = ast.get_source_segment(source, call) or f"model.predict({name})"
    holder = loop
    if isinstance(loop, ast.comprehension):
        holder = next(
            (
                n
                for n in ast.walk(tree)
                if isinstance(n, ast.ListComp | ast.GeneratorExp) and loop in n.generators
            ),
            loop,
        )
    looped = " ".join((ast.get_source_segment(source, holder) or f"for ... in {name}").split())
    if len(looped) > 60:
        looped = f"the loop over `{name}` on line {getattr(holder, 'lineno', 0)}"
    else:
        looped = f"`{looped}` (line {getattr(holder, 'lineno', 0)})"
    text = (
        f"`{name}` reshuffles on every pass (a `shuffle` with reshuffle_each_iteration="
        f"True, tf.data's default), and this cell reads it twice: `{predicted}` "
        f"(line {call.lineno}) and {looped}. Each pass draws a new order, so the i-th "
        f"prediction and the i-th label belong to different examples: an accuracy or "
        f"confusion matrix computed from them is near chance, and nothing raises."
    )
    model = (
        ast.get_source_segment(source, call.func.value)
        if isinstance(call.func, ast.Attribute)
        else None
    )
    numpy = numpy_name(namespace)
    # The fix assigns the learner's own two names: never a name they did not write.
    preds = _target_of(tree, call)
    labels = _target_of(tree, holder)
    if model and numpy and preds and labels and _pairs(dataset) and preds != labels:
        fix = (
            f"pairs = [({model}.predict_on_batch(x), y) for x, y in {name}]; "
            f"{preds} = {numpy}.concatenate([p for p, _ in pairs]); "
            f"{labels} = {numpy}.concatenate([y for _, y in pairs])"
        )
        text += f" Predict and collect the labels in one pass: `{fix}`"
    else:
        text += " Predict and collect the labels in one pass over the dataset"
    text += (
        ", or build the dataset you evaluate on without `.shuffle(...)` (or with "
        "`reshuffle_each_iteration=False`)."
    )
    return reports.note(text, SECTION)
