"""A padding mask built from the labels where 0 is a real label.

``mask = tf.cast(y != 0, tf.float32)`` in a sequence loss or metric takes every label 0
for padding. When 0 is also a real class (a tag "other", "same as before"), every real
token of class 0 is dropped from the loss or the score as if it were padding: the model
never learns that class and the accuracy skips it. Nothing raises. The padding is marked
in the inputs (token id 0), which the same function is given.

After a completed cell holding a ``def`` and a padding test (``!= 0``, ``> 0``,
``not_equal``, ``greater``; substring tests otherwise), each function of the cell is read
(``ast``): a padding test of 0 (``masked_means._is_padding_mask``) on a parameter ``L``
that the function uses as labels (the first argument, or ``y_true=``, of a loss call,
one whose name holds ``crossentropy`` or ``loss``; or a side of ``==`` / ``equal`` with
``argmax``), while exactly one other parameter ``I`` is neither the labels nor the
predictions given with them (the inputs). The evidence, read from the namespace (at most
``MAX_NAMES`` names; type and shape first, values of at most ``MAX_VALUES`` copied): a
2-D integer array padded at one end of every row (``padded_accuracy._padding_side``) and
one of the same shape holding 0 at all of its padding positions (labels padded with 0
at either end of the rows, as many per row: not predictions), at some of its real
positions and non-zero values elsewhere: labels where 0 is a class. The fix is the test
made on ``I``.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import describe
from jupyterlab_tfcoach.monitor.errors.held_values import INTEGERS, held_array
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import unwrap_calls
from jupyterlab_tfcoach.monitor.symptoms.masked_means import MASK_WRAPPERS, _is_padding_mask
from jupyterlab_tfcoach.monitor.symptoms.padded_accuracy import _padding_side
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "joining-indexing"
MAX_CELL_CHARS = 50_000
MAX_VALUES = 5_000_000
MAX_NAMES = 300
_TESTS = ("!= 0", "> 0", "not_equal", "greater")


def _tested_name(node: ast.AST) -> str | None:
    """``L`` in ``L != 0``, ``L > 0``, ``not_equal(L, 0)``, under a cast."""
    node = unwrap_calls(node, MASK_WRAPPERS)
    if isinstance(node, ast.Compare):
        side = node.left
    elif isinstance(node, ast.Call) and node.args:
        side = node.args[0]
    else:
        return None
    return side.id if isinstance(side, ast.Name) else None


def _roles(function: ast.FunctionDef) -> tuple[set[str], set[str]]:
    """The parameters the function uses as labels, and as the predictions given with them."""
    labels: set[str] = set()
    predictions: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            name = call_name(node) or ""
            if "crossentropy" in name or "loss" in name:
                given = dict(zip(("y_true", "y_pred"), node.args, strict=False))
                given.update({k.arg: k.value for k in node.keywords if k.arg})
                for role, target in (("y_true", labels), ("y_pred", predictions)):
                    value = given.get(role)
                    if isinstance(value, ast.Name):
                        target.add(value.id)
        pair: tuple[ast.AST, ast.AST] | None = None
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq):
            pair = (node.left, node.comparators[0])
        elif isinstance(node, ast.Call) and call_name(node) == "equal" and len(node.args) == 2:
            pair = (node.args[0], node.args[1])
        if pair is not None:
            labels.update(side.id for side in pair if isinstance(side, ast.Name))
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and call_name(node) == "argmax" and node.args:
            first = node.args[0]
            if isinstance(first, ast.Name):
                predictions.add(first.id)
    return labels, predictions


def _evidence(namespace: Mapping[str, Any]) -> tuple[str, str, float] | None:
    """``(labels, inputs, share)``: a padded integer array and one of its shape holding 0
    at ``share`` of the real positions."""
    padded: dict[tuple[int, ...], list[tuple[str, Any]]] = {}
    others: list[tuple[str, tuple[int, ...], Any]] = []
    for name in [name for name in list(namespace)[-MAX_NAMES:] if not name.startswith("_")]:
        value = namespace.get(name)
        described = describe("", value)
        if described is None or described.shape is None or len(described.shape) != 2:
            continue
        values = held_array(value, MAX_VALUES, INTEGERS, ndim=2)
        if values is None:
            continue
        shape = tuple(values.shape)
        if _padding_side(values) is not None:
            padded.setdefault(shape, []).append((name, values))
        else:
            others.append((name, shape, values))
    for label_name, shape, labels in others:
        for input_name, inputs in padded.get(shape, []):
            share = _real_zeros(inputs, labels)
            if share is not None:
                return label_name, input_name, share
    return None


def _real_zeros(inputs: Any, labels: Any) -> float | None:
    """The share of real tokens labelled 0, when the labels are padded with 0 as the
    inputs are, at either end of the rows (predictions are not: they hold classes on
    the padding too); None otherwise."""
    numpy = sys.modules["numpy"]
    lengths = (inputs != 0).sum(axis=1)[:, None]
    positions = numpy.arange(inputs.shape[1])[None, :]
    for real in (positions < lengths, positions >= inputs.shape[1] - lengths):
        if (labels[~real] != 0).any():
            continue
        zeros = (labels == 0) & real
        if zeros.any() and (labels != 0).any():
            return float(zeros.sum() / real.sum())
    return None


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for a padding mask made from labels that use 0 as a class, if any."""
    if len(source) > MAX_CELL_CHARS or "def " not in source:
        return []
    if not any(test in source for test in _TESTS):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef):
            continue
        parameters = [arg.arg for arg in function.args.args if arg.arg != "self"]
        labels, predictions = _roles(function)
        for node in ast.walk(function):
            if not isinstance(node, (ast.Compare, ast.Call)) or not _is_padding_mask(node):
                continue
            tested = _tested_name(node)
            if tested is None or tested not in parameters or tested not in labels:
                continue
            inputs = [p for p in parameters if p not in labels and p not in predictions]
            if len(inputs) != 1:
                continue
            evidence = _evidence(namespace)
            if evidence is None:
                return []
            note = _note(source, function.name, node, tested, inputs[0], evidence)
            if note is not None:
                return [note]
    return []


def _note(
    source: str,
    function: str,
    test: ast.AST,
    labels: str,
    inputs: str,
    evidence: tuple[str, str, float],
) -> Note | None:
    text = ast.get_source_segment(source, test)
    operand = unwrap_calls(test, MASK_WRAPPERS)
    tested = ast.get_source_segment(source, operand)
    if not text or not tested or "\n" in text:
        return None
    fixed_test = tested.replace(labels, inputs, 1)
    fixed = text.replace(tested, fixed_test, 1)
    label_array, input_array, share = evidence
    message = (
        f"`{text}` (line {test.lineno} of this cell, in `{function}`) takes every label 0 "
        f"in `{labels}` for padding, but 0 is a real label here: `{label_array}` holds 0 at "
        f"{share:.0%} of the real (non-padding) tokens of `{input_array}`. Those tokens are "
        "dropped as if they were padding, so the model never learns that class and the "
        "score skips it. Nothing raises. The padding is marked in the inputs, which "
        f"`{function}` is given as `{inputs}`: `{fixed}`."
    )
    return reports.note(message, SECTION)
