"""A validation or test figure computed on the training data.

``val_loss, val_acc = model.evaluate(x_train, y_train)`` or ``print("test accuracy",
np.mean(model.predict(X_tr).argmax(1) == y_tr))`` measure the model on the rows it was
fitted to: the number is as good as the training figure, says nothing about unseen data,
and hides overfitting. Nothing raises.

Read from the cell's words (``intent_words.py``): a top-level statement whose target
names or ``print`` label say validation or test (``val``, ``valid``, ``validation``,
``dev``, ``test``, ``holdout``) and not train, whose value evaluates something (a call of
``evaluate``/``predict``/``test_on_batch``, of a name holding a Keras model or layer, or
of a function whose name says loss, accuracy, error, metric or score) on names that say
train (``x_train``, ``X_tr``, ``train_ds``) and on no name that says validation or test.
Told only when every such training name has a counterpart of the wanted split in the
namespace (``x_train`` -> ``x_val``/``x_valid``/``x_test``...): the fix is the statement
with the counterparts in their place. Slices and splits of the training data
(``x_val = x_train[-200:]``) evaluate nothing and stay silent.

A function the cell defines whose name or docstring says validation or test ("held-out"
and "held out" read as test) and not train, whose body evaluates on training names and on
no held-out name, is told the same way (``_function_notes``): each body line that reads a
training name, with the counterparts in their place.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import value_kind_at
from jupyterlab_tfcoach.monitor.symptoms.intent_words import (
    cell_lines,
    identifier_words,
    label_text,
    segment,
    text_words,
)
from jupyterlab_tfcoach.monitor.syntax import call_name, parsed_source

SECTION = "keras-validation-data"
MAX_NOTES = 1
MAX_CELL_CHARS = 30_000
_TRAIN_TEXTS = ("train", "_tr", "tr_", "Train")
_HELD_TEXTS = ("val", "test", "Val", "Test", "VAL", "TEST", "dev", "holdout", "heldout", "held")
_TRAIN = frozenset({"train", "tr", "training", "trn"})
_SPLITS = {
    "validation": ("val", "valid", "validation", "dev", "va"),
    "test": ("test", "te", "tst", "holdout", "heldout"),
}
_WORD_SPLIT = {word: split for split, words in _SPLITS.items() for word in words}
_EVALUATING = frozenset({"evaluate", "predict", "predict_on_batch", "test_on_batch", "score"})
_METRIC_WORDS = frozenset(
    {"loss", "accuracy", "acc", "error", "err", "mse", "mae", "metric", "score", "auc", "f1"}
)
_MODEL_KINDS = frozenset({"model", "layer"})


def _split_of(words: list[str]) -> str | None:
    """``"validation"`` or ``"test"`` for words that name only that held-out split."""
    if any(w in _TRAIN for w in words):
        return None
    found = {_WORD_SPLIT[w] for w in words if w in _WORD_SPLIT}
    return found.pop() if len(found) == 1 else None


def _targets(statement: ast.AST) -> list[str]:
    names: list[str] = []
    targets = statement.targets if isinstance(statement, ast.Assign) else []
    for target in targets:
        parts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
        for part in parts:
            if isinstance(part, ast.Name):
                names.append(part.id)
    return names


def _evaluates(value: ast.AST, namespace: dict[str, Any]) -> bool:
    for node in ast.walk(value):
        if not isinstance(node, ast.Call):
            continue
        name = call_name(node) or ""
        if name in _EVALUATING or set(identifier_words(name)) & _METRIC_WORDS:
            return True
        if isinstance(node.func, (ast.Name, ast.Attribute)):
            if value_kind_at(node.func, namespace) in _MODEL_KINDS:
                return True
    return False


def _counterpart(name: str, split: str, namespace: dict[str, Any]) -> str | None:
    """``x_val`` for ``x_train`` when the namespace holds it (the split's usual spellings,
    in the case the training name used)."""
    words = identifier_words(name)
    for train_word in _TRAIN:
        pattern = re.compile(rf"(?i)(?<![a-z]){train_word}(?![a-z])")
        if train_word not in words or not pattern.search(name):
            continue
        for held in _SPLITS[split]:
            for spelled in (held, held.upper(), held.capitalize()):
                candidate = pattern.sub(spelled, name, count=1)
                if candidate != name and candidate in namespace:
                    return candidate
    return None


_HELD_OUT_PHRASE = re.compile(r"(?i)\bheld[- ]out\b")


def _said_words(text: str) -> list[str]:
    """A label's or docstring's words, "held-out" and "held out" read as one word."""
    return text_words(_HELD_OUT_PHRASE.sub("heldout", text))


def _function_notes(tree: ast.Module, lines: list[str], namespace: dict[str, Any]) -> list[Note]:
    """A function named or documented as measuring held-out data that reads training
    names."""
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef):
            continue
        docstring = ast.get_docstring(function) or ""
        words = identifier_words(function.name) + _said_words(docstring)
        split = _split_of(words)
        if split is None:
            continue
        body = function.body[1:] if docstring else function.body
        read = [n for statement in body for n in ast.walk(statement) if isinstance(n, ast.Name)]
        if any(_split_of(identifier_words(n.id)) for n in read):
            continue
        training = [n for n in read if set(identifier_words(n.id)) & _TRAIN and n.id in namespace]
        if not training or not any(_evaluates(statement, namespace) for statement in body):
            continue
        swaps = {n.id: _counterpart(n.id, split, namespace) for n in training}
        if any(v is None for v in swaps.values()):
            continue
        fixed_lines: dict[int, bytes] = {}
        for node in sorted(training, key=lambda n: (n.lineno, -n.col_offset)):
            raw = fixed_lines.get(node.lineno, lines[node.lineno - 1].encode("utf-8"))
            swapped = (swaps[node.id] or node.id).encode("utf-8")
            fixed_lines[node.lineno] = (
                raw[: node.col_offset] + swapped + raw[node.end_col_offset or 0 :]
            )
        fixes = " and ".join(
            f"`{raw.decode('utf-8').strip()}` (line {number})"
            for number, raw in sorted(fixed_lines.items())
        )
        used = ", ".join(f"`{n}`" for n in dict.fromkeys(n.id for n in training))
        documented = _split_of(_said_words(docstring)) if docstring else None
        whose = "its docstring says" if documented == split else "its name says"
        return [
            reports.note(
                f"`{function.name}` (defined in this cell): {whose} {split} data, but it "
                f"measures the model on {used}, the training data: the model was fitted to "
                "those rows, so the number is a training figure that says nothing about "
                "unseen data and hides overfitting, without any error. Measure it on the "
                f"{split} data: {fixes}.",
                SECTION,
            )
        ]
    return []


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if not source or len(source) > MAX_CELL_CHARS:
        return []
    if "def " in source and any(t in source for t in _TRAIN_TEXTS):
        tree = parsed_source(source)
        told = _function_notes(tree, cell_lines(source), namespace) if tree else []
        if told:
            return told
    if not any(t in source for t in _TRAIN_TEXTS) or not any(t in source for t in _HELD_TEXTS):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    lines = cell_lines(source)
    found: list[Note] = []
    for statement in tree.body:
        if len(found) >= MAX_NOTES:
            break
        if isinstance(statement, ast.Assign):
            names = _targets(statement)
            words = [w for n in names for w in identifier_words(n)]
            whose = ", ".join(f"`{n}`" for n in names)
        elif (
            isinstance(statement, ast.Expr)
            and isinstance(statement.value, ast.Call)
            and call_name(statement.value) == "print"
        ):
            words = _said_words(label_text(statement.value))
            whose = "the printed label"
        else:
            continue
        split = _split_of(words)
        if split is None:
            continue
        value = statement.value
        read = [n for n in ast.walk(value) if isinstance(n, ast.Name)]
        if any(_split_of(identifier_words(n.id)) for n in read):
            continue  # some held-out data is there already
        training = [n for n in read if set(identifier_words(n.id)) & _TRAIN and n.id in namespace]
        if not training or not _evaluates(value, namespace):
            continue
        swaps = {n.id: _counterpart(n.id, split, namespace) for n in training}
        if any(v is None for v in swaps.values()):
            continue
        written = segment(lines, statement)
        if written is None:
            continue
        raw = lines[statement.lineno - 1].encode("utf-8")
        for node in sorted(training, key=lambda n: -n.col_offset):
            swapped = swaps[node.id] or node.id
            raw = raw[: node.col_offset] + swapped.encode("utf-8") + raw[node.end_col_offset or 0 :]
        fixed = raw.decode("utf-8").strip()
        ordered = sorted(training, key=lambda n: (n.lineno, n.col_offset))
        used = ", ".join(f"`{n}`" for n in dict.fromkeys(n.id for n in ordered))
        verb = "say" if len(whose.split(", ")) > 1 else "says"
        found.append(
            reports.note(
                f"{whose[0].upper() + whose[1:]} {verb} {split}, but `{written}` (line "
                f"{statement.lineno} of this cell) measures the model on {used}, the "
                "training data: the model was fitted to those rows, so the number is a "
                "training figure that says nothing about unseen data and hides "
                f"overfitting, without any error. Measure it on the {split} data: "
                f"`{fixed}`.",
                SECTION,
            )
        )
    return found
