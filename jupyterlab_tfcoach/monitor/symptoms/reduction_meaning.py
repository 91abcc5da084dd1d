"""A reduction whose axis contradicts what the learner says the result holds: "per image"
values reduced over the images, "per dimension" values reduced over each example.

``per_image_err = np.mean((x_test - recon) ** 2, axis=0)`` averages over the images and
keeps one value per pixel; ``var_per_dim = np.var(z, axis=1)`` gives one value per
example, not per latent dimension; ``entropy = -tf.reduce_sum(p * tf.math.log(p))``
printed as "entropy per state" adds up every state into one number. The code runs, the
numbers have the wrong meaning (a ranking of the "worst images" ranks pixels); nothing
raises.

After a completed cell holding a reduction's name and a "per"/"each" word (a regular
expression search otherwise), each top-level ``name = R(A, axis=...)`` (``np.mean``,
``tf.reduce_sum``, the method ``A.var(axis=1)``, a negation or a number times it; means,
sums, variances, spreads, extremes, medians), read from its words and values:

- what the learner means it to hold: the words after ``per``/``each`` in the target's
  name or in the text a ``print`` or f-string gives right before it (``"error per
  image:"``), one of the words for examples (image, sample, state, row, ...) or for
  features (dimension, feature, unit, channel, class, ...);
- that axis 0 of ``A`` counts examples: ``A`` (or a name in it, followed through the
  cell's assignments) came from a Keras ``predict`` or a model called on data in the cell,
  and its names hold arrays of rank 2 or more that share that leading size N > 1.

Told: per-example words and a reduction over axis 0 that keeps other axes (the N
examples are gone); per-example words and a sum over every axis (one number: N times the
mean per example when the words say mean); per-example words and a reduction to one
number the cell then ranks (``np.argsort(name)``); per-feature words and a reduction that
keeps axis 0. ``np.linalg.norm``/``tf.norm`` count as reductions (their axis read only as
a keyword). The note names the statement, the shapes and what the result holds; the fix is
the statement with the axis the words mean (``axis=(1, 2, 3)`` / ``axis=-1`` per example,
then a mean over the examples for a mean; ``axis=0`` per feature).
"""

from __future__ import annotations

import ast
import re
import types
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.errors.failing_line import describe, show_shape
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.intent_words import (
    AXIS_REDUCTIONS,
    EXAMPLE_NOUNS,
)
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    held_at,
    parsed_source,
    reference_path,
    scope_nodes,
)
from jupyterlab_tfcoach.monitor.word_gates import word_gate

SECTION = "reducing-tensors"
MAX_CELL_CHARS = 50_000
MAX_NOTES = 2
_TRIGGER_WORDS = word_gate(r"(?i)(?:per|each)[_ ][a-z]")
_TRIGGER_CALLS = word_gate(
    r"\b(?:reduce_\w+|mean|sum|var|std|max|min|median|nanmean|nansum|norm)\("
)
_SUMS = frozenset({"sum", "reduce_sum", "nansum"})
_MEANS = frozenset({"mean", "reduce_mean", "nanmean", "average"})
_REDUCTIONS = (
    AXIS_REDUCTIONS
    | _SUMS
    | _MEANS
    | frozenset(
        {
            "median",
            "amax",
            "amin",
            "reduce_logsumexp",
            # ``np.linalg.norm``/``tf.norm``: the axis read only as a keyword (the
            # second argument is the order).
            "norm",
        }
    )
)
# The word after per/each and the one after it ("per code dimension").
_WORD = re.compile(r"(?:per|each)[_ ]+([a-z]+)(?:[_ ]+([a-z]+))?")
_EXAMPLE_WORDS = EXAMPLE_NOUNS | frozenset(
    {
        "input",
        "review",
        "text",
        "digit",
        "picture",
        "photo",
        "tile",
        "patch",
        "frame",
        "clip",
        "utterance",
        "molecule",
        "transaction",
        "question",
        "pair",
    }
)
_FEATURE_WORDS = frozenset(
    {
        "dim",
        "dimension",
        "feature",
        "unit",
        "latent",
        "channel",
        "column",
        "col",
        "class",
        "pixel",
        "neuron",
        "component",
        "coordinate",
        "variable",
        "label",
        "output",
    }
)
_MEAN_WORDS = re.compile(r"(?i)\b(?:mean|average|avg)\b|mean_|_mean|avg_|_avg")
_TOTAL_WORDS = word_gate(r"(?i)total|overall|sum")
_FOLLOW = 3


def _singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    if (
        word.endswith("s")
        and not word.endswith("ss")
        and word[:-1] in (_EXAMPLE_WORDS | _FEATURE_WORDS)
    ):
        return word[:-1]
    return word


def _intent(texts: list[str], data_words: set[str]) -> tuple[str, str] | None:
    """("example" or "feature", the learner's text that says it): what the words after
    per/each in the name (first) or a printed label count. A word naming the data itself
    (``per_tile`` of ``tiles``) counts its rows, the examples."""
    fallback: tuple[str, str] | None = None
    for text in texts:
        found = [_singular(word) for words in _WORD.findall(text.lower()) for word in words]
        for word in found:
            if word in _EXAMPLE_WORDS:
                return "example", text
            if word in _FEATURE_WORDS:
                return "feature", text
        # Only when no word says: "per code dimension" of ``codes`` counts dimensions.
        if fallback is None and any(len(w) > 2 and w in data_words for w in found):
            fallback = "example", text
    return fallback


def _data_words(node: ast.AST) -> set[str]:
    """The parts of the names in an expression, each also without a plural ``s``."""
    found: set[str] = set()
    for part in ast.walk(node):
        if isinstance(part, ast.Name):
            for word in part.id.lower().split("_"):
                found.add(word)
                if word.endswith("s"):
                    found.add(word[:-1])
    return found


def _is_module_path(node: ast.AST, namespace: Mapping[str, Any]) -> bool:
    found, value = held_at(reference_path(node), namespace)  # type: ignore[arg-type]
    return found and isinstance(value, types.ModuleType)


def _reduction(node: ast.AST, namespace: Mapping[str, Any]) -> tuple[ast.Call, ast.AST, Any] | None:
    """(the call, its operand, its axis node or None) when ``node`` is a reduction,
    under a negation or a product with a number."""
    for _ in range(3):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            node = node.operand
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
            node = node.right if isinstance(node.left, ast.Constant) else node.left
        else:
            break
    if not isinstance(node, ast.Call) or call_name(node) not in _REDUCTIONS:
        return None
    func = node.func
    axis: Any = None
    for keyword in node.keywords:
        if keyword.arg == "axis":
            axis = keyword.value
    if isinstance(func, ast.Attribute) and not _is_module_path(func.value, namespace):
        operand: ast.AST = func.value
        if call_name(node) == "norm":
            return None
        if axis is None and node.args:
            axis = node.args[0]
    elif node.args:
        operand = node.args[0]
        if axis is None and len(node.args) > 1 and call_name(node) != "norm":
            axis = node.args[1]
    else:
        return None
    return node, operand, axis


def _axes(axis: Any, rank: int) -> tuple[int, ...] | None:
    """The axes reduced, normalised; every axis for None; None when not a constant."""
    if axis is None:
        return tuple(range(rank))
    try:
        value = ast.literal_eval(axis)
    except Exception:
        return None
    values = value if isinstance(value, (tuple, list)) else (value,)
    if not all(type(v) is int and -rank <= v < rank for v in values):
        return None
    return tuple(sorted({v % rank for v in values}))


def _assigned(nodes: list[ast.AST]) -> dict[str, list[tuple[int, ast.expr]]]:
    found: dict[str, list[tuple[int, ast.expr]]] = {}
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                found.setdefault(target.id, []).append((node.lineno, node.value))
    return found


def _from_model(
    node: ast.AST,
    assigned: dict[str, list[tuple[int, ast.expr]]],
    line: int,
    namespace: Mapping[str, Any],
    depth: int = 0,
) -> bool:
    """Whether the expression, followed through the cell's assignments, holds the output
    of a Keras ``predict`` or of a model or layer called on data."""
    if depth > _FOLLOW:
        return False
    for part in ast.walk(node):
        if isinstance(part, ast.Call):
            if call_name(part) == "predict":
                return True
            found, value = held_at(reference_path(part.func), namespace)  # type: ignore[arg-type]
            if found and _is_model(value):
                return True
        elif isinstance(part, ast.Name):
            earlier = [v for at, v in assigned.get(part.id, ()) if at < line]
            if earlier and _from_model(earlier[-1], assigned, line, namespace, depth + 1):
                return True
    return False


def _is_model(value: Any) -> bool:
    for kind in type(value).__mro__:
        module = kind.__module__ or ""
        if kind.__name__ in ("Layer", "Model", "Module") and module.startswith(
            ("keras", "tensorflow")
        ):
            return True
    return False


def _labels(nodes: list[ast.AST], name: str) -> list[str]:
    """The target's name and the text printed right before it (``print("x per y:", v)``,
    ``f"x per y: {v}"``)."""
    texts = [name]
    for node in nodes:
        parts: list[ast.AST] = []
        if isinstance(node, ast.Call) and call_name(node) == "print":
            parts = list(node.args)
        elif isinstance(node, ast.JoinedStr):
            parts = list(node.values)
        previous: str | None = None
        for part in parts:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                previous = part.value
                continue
            if isinstance(part, ast.JoinedStr):
                continue
            uses = any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(part))
            if uses and previous is not None:
                texts.append(previous.strip())
            previous = None
    return texts


def _shape(
    node: ast.AST, namespace: Mapping[str, Any], rebound: set[str]
) -> tuple[int, ...] | None:
    """The shape shared by the highest-rank arrays the operand's names hold (their leading
    size agreeing), or None."""
    shapes: list[tuple[int, ...]] = []
    for part in ast.walk(node):
        if isinstance(part, ast.Name) and part.id not in rebound and part.id in namespace:
            described = describe(part.id, namespace[part.id])
            if described is None or described.kind not in ("tensor", "array", "variable"):
                continue
            shape = described.shape
            if shape is None or any(d is None for d in shape):
                continue
            shapes.append(tuple(int(d) for d in shape))  # type: ignore[arg-type]
    if not shapes:
        return None
    rank = max(len(s) for s in shapes)
    top = {s for s in shapes if len(s) == rank}
    if len({s[0] for s in top}) != 1:
        return None
    return max(top)


# The top-level nodes and assignments of the last few sources read.
_READ: dict[str, tuple[list[ast.AST], dict[str, list[tuple[int, ast.expr]]]] | None] = {}
_CACHED_SOURCES = 16


def _read(source: str) -> tuple[list[ast.AST], dict[str, list[tuple[int, ast.expr]]]] | None:
    if source not in _READ:
        if len(_READ) >= _CACHED_SOURCES:
            _READ.pop(next(iter(_READ)))
        tree = parsed_source(source)
        if tree is None:
            _READ[source] = None
        else:
            nodes = scope_nodes(tree)
            _READ[source] = (nodes, _assigned(nodes))
    return _READ[source]


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    return notes_and_lines(source, namespace)[0]


def notes_and_lines(source: str, namespace: Mapping[str, Any]) -> tuple[list[Note], set[int]]:
    """The notes, and the cell lines of the statements they are about (so another reading
    of reductions, ``per_item_reductions``, does not tell the same statement again)."""
    lines: set[int] = set()
    if not source or len(source) > MAX_CELL_CHARS:
        return [], lines
    if _TRIGGER_WORDS.search(source) is None or _TRIGGER_CALLS.search(source) is None:
        return [], lines
    read = _read(source)
    if read is None:
        return [], lines
    nodes, assigned = read
    told: list[Note] = []
    for node in nodes:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if not isinstance(target, ast.Name):
            continue
        found = _reduction(node.value, namespace)
        if found is None:
            continue
        call, operand, axis = found
        texts = _labels(nodes, target.id)
        said = _intent(texts, _data_words(operand))
        if said is None:
            continue
        intent, text = said
        words = (
            f"its name `{target.id}` says"
            if text == target.id
            else f'`{target.id}` is printed as "{text}", which says'
        )
        labels = " ".join(texts)
        # Names bound again after the statement no longer hold what it read.
        rebound = {
            name for name, values in assigned.items() if any(at > node.lineno for at, _ in values)
        }
        shape = _shape(operand, namespace, rebound)
        if shape is None or len(shape) < 2 or shape[0] < 2:
            continue
        axes = _axes(axis, len(shape))
        if axes is None or not _from_model(operand, assigned, node.lineno, namespace):
            continue
        method = isinstance(call.func, ast.Attribute) and operand is call.func.value
        ranked = _ranked(nodes, target.id)
        text = _told(
            node, call, method, operand, axes, shape, intent, labels, target.id, words, ranked
        )
        if text is not None:
            told.append(reports.note(text, SECTION))
            lines.add(node.lineno)
        if len(told) >= MAX_NOTES:
            break
    return told, lines


def _told(
    statement: ast.Assign,
    call: ast.Call,
    method: bool,
    operand: ast.AST,
    axes: tuple[int, ...],
    shape: tuple[int, ...],
    intent: str,
    labels: str,
    target: str,
    words: str,
    ranked: str | None,
) -> str | None:
    rank = len(shape)
    name = call_name(call) or ""
    written = ast.unparse(statement)
    what = ast.unparse(operand)
    examples = shape[0]
    kept = tuple(d for i, d in enumerate(shape) if i not in axes)
    head = f"`{written}` (line {statement.lineno} of this cell)"
    if intent == "example":
        if 0 not in axes:
            return None
        per_example = (-1,) if rank == 2 else tuple(range(1, rank))
        axis_text = "-1" if rank == 2 else str(per_example)
        fixed = _with_axis(statement, call, axis_text, method)
        if kept:
            return (
                f"{head}: {words} one value per example, but the "
                f"{name} runs over axis 0 of `{what}` (shape {show_shape(shape)}), the axis of its "
                f"{examples} examples: `{target}` gets shape {show_shape(kept)}, one value per "
                f"position shared by all examples, and nothing per example. Anything ranked or "
                f"picked from it picks positions, not examples. Nothing raises. One value per "
                f"example is the {name} over the other axes: `{fixed}` (shape "
                f"({examples},))."
            )
        if ranked is not None:
            return (
                f"{head}: {words} one value per example, but the {name} has no axis and "
                f"reduces every value of `{what}` (shape {show_shape(shape)}), across its "
                f"{examples} examples too: `{target}` is one number, and `{ranked}` ranks "
                f"that one number, not the examples. Nothing raises. One value per example "
                f"is `{fixed}` ({examples} values)."
            )
        if name not in _SUMS or _TOTAL_WORDS.search(labels):
            return None
        mean_meant = _MEAN_WORDS.search(labels) is not None
        result = (
            f"the total over all {examples} examples: {examples} times the mean per example"
            if mean_meant
            else "one number for all the examples together"
        )
        fix = f"`{fixed}` gives one value per example ({examples} values)"
        if mean_meant:
            fix += f"; their mean is `{_mean_of(call, target, method)}`"
        return (
            f"{head}: {words} one value per example, but the {name} has no axis "
            f"and adds up every value of `{what}` (shape {show_shape(shape)}), across its "
            f"{examples} examples too: `{target}` is {result}. Nothing raises. {fix}."
        )
    if 0 in axes or not kept or kept[0] != examples:
        return None
    fixed = _with_axis(statement, call, "0", method)
    return (
        f"{head}: {words} one value per feature, but the {name} runs "
        f"over axis {', '.join(str(a) for a in axes)} of `{what}` (shape {show_shape(shape)}), "
        f"within each example: `{target}` gets shape {show_shape(kept)}, one value for "
        f"each of the {examples} examples. Nothing raises. One value per feature is the "
        f"{name} over the examples' axis: `{fixed}` (shape {show_shape(shape[1:])})."
    )


_RANKINGS = frozenset({"argsort", "argmax", "argmin", "sort", "top_k", "argpartition"})


def _ranked(nodes: list[ast.AST], name: str) -> str | None:
    """A call of the cell that ranks ``name``'s values (``np.argsort(name)``), as written."""
    for node in nodes:
        if isinstance(node, ast.Call) and call_name(node) in _RANKINGS and node.args:
            first = node.args[0]
            if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(first)):
                return ast.unparse(node)
    return None


def _mean_of(call: ast.Call, target: str, method: bool) -> str:
    """The mean of ``target`` written in the library of the learner's call."""
    if method or not isinstance(call.func, ast.Attribute):
        return f"{target}.mean()"
    prefix = ast.unparse(call.func.value)
    name = "reduce_mean" if (call_name(call) or "").startswith("reduce_") else "mean"
    return f"{prefix}.{name}({target})"


def _with_axis(statement: ast.Assign, call: ast.Call, axis: str, method: bool) -> str:
    """The statement with the call's axis replaced (or added) as a keyword."""
    copy = ast.parse(ast.unparse(statement)).body[0]
    original = ast.dump(call)
    for node in ast.walk(copy):
        if isinstance(node, ast.Call) and ast.dump(node) == original:
            # A positional axis (``np.mean(a, 0)``, ``a.mean(0)``) becomes the keyword.
            node.args = [] if method else node.args[:1]
            node.keywords = [k for k in node.keywords if k.arg != "axis"]
            node.keywords.append(ast.keyword(arg="axis", value=ast.parse(axis, mode="eval").body))
            break
    return ast.unparse(copy)
