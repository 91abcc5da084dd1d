"""A custom ``train_step`` that trains only one sub-model of a model built from several.

``grads = tape.gradient(loss, self.encoder.trainable_variables)`` (or a name bound to it,
then ``apply_gradients(zip(grads, that name))``) updates the encoder alone: the other
sub-models the loss depends on keep their random start, the loss still moves a little,
and nothing raises. Told after a ``fit`` of a model whose class defines ``train_step``,
when fit changed some of its trainable weights and left others exactly as they were,
and every weight left unchanged belongs to a sub-model stored on ``self`` that the
variables given to ``tape.gradient`` never name (``self.<sub>.trainable_variables`` or
``trainable_weights``, alone or added together). Silent: a sub-model called with
``training=False`` in ``train_step``, or a class whose source says it is kept fixed
(``frozen``, ``freeze``, ``pretrained``), a GAN's two tapes (every weight changes). The
note names the ``tape.gradient`` variables as written, the line that lists them, the
unchanged weights by their Keras path; fix: that line with ``self.trainable_variables``.

Read from the method's source (``user_code.method_source``) and stored attributes only.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, keras_trainable_variables
from jupyterlab_tfcoach.monitor.training import user_code
from jupyterlab_tfcoach.monitor.training.fit_watch import FitRun

SECTION = "custom-train-step"
MAX_VARIABLES = 2000
MAX_NAMED = 4
_VARIABLE_LISTS = frozenset({"trainable_variables", "trainable_weights"})
_KEPT_FIXED = re.compile(r"\bfrozen\b|\bfreez|pretrained|pre-trained", re.IGNORECASE)


def _sub_models(node: ast.AST) -> list[str] | None:
    """``["encoder"]`` for ``self.encoder.trainable_variables``, several for a sum of
    them; None for anything else (``self.trainable_variables`` included)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _sub_models(node.left), _sub_models(node.right)
        return left + right if left is not None and right is not None else None
    if (
        isinstance(node, ast.Attribute)
        and node.attr in _VARIABLE_LISTS
        and isinstance(node.value, ast.Attribute)
        and isinstance(node.value.value, ast.Name)
        and node.value.value.id == "self"
    ):
        return [node.value.attr]
    return None


def _gradient_sources(
    tree: ast.Module,
) -> tuple[list[str], ast.AST, ast.stmt] | None:
    """The sub-models ``tape.gradient`` differentiates for, the node written there (or
    in the assignment of the name written there), and the statement to fix."""
    assigned: dict[str, ast.Assign] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            assigned[node.targets[0].id] = node
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr == "gradient"
            and len(node.value.args) >= 2
        ):
            continue
        sources = node.value.args[1]
        if isinstance(sources, ast.Name) and sources.id in assigned:
            made = assigned[sources.id]
            subs = _sub_models(made.value)
            return (subs, made.value, made) if subs else None
        subs = _sub_models(sources)
        return (subs, sources, node) if subs else None
    return None


def _called_not_training(tree: ast.Module, attribute: str) -> bool:
    """Whether ``train_step`` calls ``self.<attribute>(..., training=False)``."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == attribute
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "self"
        ):
            for keyword in node.keywords:
                if (
                    keyword.arg == "training"
                    and isinstance(keyword.value, ast.Constant)
                    and keyword.value.value is False
                ):
                    return True
    return False


def partial_step_note(
    run: FitRun, model: Any, function: Any, subject: str, namespace: Mapping[str, Any]
) -> Note | None:
    weights = run.weights
    unchanged = [w for w in weights if not w.changed]
    if not run.compared or not unchanged or len(unchanged) == len(weights):
        return None
    method = user_code.method_source(function)
    if method is None or _KEPT_FIXED.search(method.source):
        return None
    found = _gradient_sources(method.tree)
    if found is None:
        return None
    listed, written_node, statement = found
    attributes = instance_dict(model) or {}
    # Which sub-model stored on ``self`` holds each unchanged weight.
    owners: dict[int, str] = {}
    for attribute, value in list(attributes.items())[:200]:
        if type(attribute) is not str or attribute in listed or attribute.startswith("_"):
            continue
        variables = keras_trainable_variables(value, MAX_VARIABLES)
        for variable in variables or ():
            owners.setdefault(id(variable), attribute)
    left_out = {owners.get(w.variable_id) for w in unchanged}
    if None in left_out:
        return None  # a weight of no other sub-model stayed put: another cause
    others = sorted(a for a in left_out if a is not None)
    if any(_called_not_training(method.tree, attribute) for attribute in others):
        return None
    source = method.source
    written = ast.get_source_segment(source, written_node) or ast.unparse(written_node)
    line_text = ast.get_source_segment(source, statement) or ast.unparse(statement)
    if "\n" in line_text:
        return None
    # Written in ``tape.gradient`` itself, the same list is usually written again in the
    # ``apply_gradients`` call: every statement that writes it gets the fix.
    fixes = [(statement, line_text)]
    if isinstance(statement.value, ast.Call):  # type: ignore[attr-defined]
        for other in ast.walk(method.tree):
            if not isinstance(other, ast.Expr | ast.Assign) or other is statement:
                continue
            text = ast.get_source_segment(source, other) or ""
            if written in text and "\n" not in text:
                fixes.append((other, text))
    cls = type(model).__name__
    placed = [
        f"`{text.strip().replace(written, 'self.trainable_variables')}` "
        f"({user_code.place_of(function, method.first_line + node.lineno - 1, namespace)})"
        for node, text in fixes
    ]
    shown = [f"`{w.path}`" for w in unchanged[:MAX_NAMED]]
    more = f" and {len(unchanged) - MAX_NAMED} more" if len(unchanged) > MAX_NAMED else ""
    subs = " and ".join(f"`self.{a}`" for a in others)
    weight_word = "weight" if len(unchanged) == 1 else "weights"
    place = user_code.place_of(function, method.first_line + statement.lineno - 1, namespace)
    text = (
        f"{subject} changed {len(weights) - len(unchanged)} of the model's {len(weights)} "
        f"trainable weights and left {len(unchanged)} {weight_word} exactly as "
        f"{'it was' if len(unchanged) == 1 else 'they were'}: {', '.join(shown)}{more}, "
        f"of {subs}. `{cls}.train_step` takes the gradients for `{written}` only "
        f"(`{line_text.strip()}`, {place}), so {subs} keeps its random start although "
        "the loss depends on it too; the loss still moves a little and nothing raises. "
        "Differentiate and apply for every trainable variable of the model: "
        + " and ".join(placed)
        + "."
    )
    return reports.note(text, SECTION)
