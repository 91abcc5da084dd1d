"""A value named recall computed as precision, or precision computed as recall.

Both share a numerator (the hits: relevant items retrieved, true positives) and differ
only in what they divide by: recall by how many items are RELEVANT (``len(relevant)``,
``tp + fn``, a confusion matrix's row sums: the true labels), precision by how many were
RETRIEVED (the cut-off ``k``, ``len(recommended)``, ``tp + fp``, the column sums: the
predictions). ``recall = len(recs & relevant) / K`` is precision@K; ``precision = tp /
(tp + fn)`` is recall; ``np.diag(cm) / cm.sum(axis=0)`` labelled recall is precision.
The number is off by the ratio of the two counts, and nothing raises.

Read from the cell's own words (``intent_words.py``): a statement whose target name
(``recall``, ``recalls.append(...)``, ``prec_at_k``), printed label or ``def`` says
recall (or sensitivity, TPR) or precision (or PPV), and a division in it whose
denominator's words say the other count: a cut-off (``k``, ``top_k``, or the number
after ``@`` in the label), ``len()`` of a name for recommended/predicted/retrieved items
or of one for relevant/true/held-out items, a sum of ``tp`` with ``fp`` or ``fn``, a
confusion matrix summed over axis 0 or 1. The fix divides by the other count, taken from
the statement's own names (``len(relevant)``, ``tp + fn``, ``axis=1``). Source only.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.intent_words import (
    cell_lines,
    identifier_words,
    label_text,
    lines_matching,
    segment,
    statements_on,
    target_names,
    text_words,
)
from jupyterlab_tfcoach.monitor.syntax import (
    call_name,
    int_literal,
    line_with_replacement,
    parsed_source,
)
from jupyterlab_tfcoach.monitor.word_gates import word_gate

SECTION = "labels-and-loss"
MAX_NOTES = 2
MAX_CELL_CHARS = 30_000
_TRIGGER = word_gate(r"(?i:recall|precision|sensitivity|tpr|ppv)")
_TRIGGER_TEXTS = ("ecall", "recision", "ensitivity", "tpr", "TPR", "ppv", "PPV")
_RECALL = frozenset({"recall", "recalls", "sensitivity", "tpr"})
_PRECISION = frozenset({"precision", "precisions", "ppv"})
# The counts' own words: what was retrieved (predicted) and what is relevant (true).
_RETRIEVED = frozenset(
    {
        "rec",
        "recs",
        "recommend",
        "recommended",
        "recommendation",
        "recommendations",
        "pred",
        "preds",
        "predicted",
        "prediction",
        "predictions",
        "retrieved",
        "top",
        "topk",
        "returned",
        "ranked",
        "suggested",
        "suggestions",
        "shown",
        "fp",
        "fps",
    }
)
_RELEVANT = frozenset(
    {
        "relevant",
        "rel",
        "true",
        "truth",
        "actual",
        "gt",
        "target",
        "targets",
        "label",
        "labels",
        "held",
        "heldout",
        "liked",
        "positives",
        "clicked",
        "purchased",
        "bought",
        "gold",
        "expected",
        "fn",
        "fns",
    }
)
_CUTOFF_WORDS = frozenset({"k", "top", "topk", "n", "num", "cutoff", "at"})
_MATRIX_WORDS = frozenset({"cm", "conf", "confusion", "matrix", "cmat", "confmat"})
_PRINT = re.compile(r"\bprint\s*\(")
_DIVISION = re.compile(r"(?<![/])/(?![/=])")
_AT = word_gate(r"(?:@|\bat_?)(\d+)")
_MEANING = {
    "recall": "the share of the relevant items that were found: hits over how many items "
    "are relevant",
    "precision": "the share of the retrieved (predicted) items that are right: hits over how "
    "many were retrieved",
}
_COUNT = {"retrieved": "how many items were retrieved", "relevant": "how many are relevant"}


def _intent(words: list[str]) -> str | None:
    recall = any(w in _RECALL for w in words)
    precision = any(w in _PRECISION for w in words)
    if recall == precision:
        return None
    return "recall" if recall else "precision"


def _side(words: list[str]) -> str | None:
    retrieved = any(w in _RETRIEVED for w in words)
    relevant = any(w in _RELEVANT for w in words)
    if retrieved == relevant:
        return None
    return "retrieved" if retrieved else "relevant"


def _swap_pair(name: str) -> str | None:
    """``fn`` for ``fp`` (any case, inside a name), ``false_neg`` for ``false_pos``."""
    for one, other in (("fp", "fn"), ("fn", "fp"), ("pos", "neg"), ("neg", "pos")):
        pattern = re.compile(rf"(?i)(?<![a-z]){one}(?![a-z])|(?<=_){one}|{one}(?=_)")
        if pattern.search(name):
            return pattern.sub(other, name, count=1)
    return None


def _denominator(
    node: ast.expr, lines: list[str], cutoff: int | None
) -> tuple[str, ast.AST, str] | None:
    """(side, node to replace, text of the other side's count) for a denominator; the
    replacement text is "" when the other side's count must come from the numerator."""
    if isinstance(node, ast.Name):
        words = identifier_words(node.id)
        if (words and set(words) <= _CUTOFF_WORDS and "k" in words) or words == ["topk"]:
            return "retrieved", node, ""
        return None
    constant = int_literal(node)
    if constant is not None and cutoff is not None and constant == cutoff:
        return "retrieved", node, ""
    if isinstance(node, ast.Call) and call_name(node) == "len" and len(node.args) == 1:
        text = segment(lines, node.args[0])
        side = _side(identifier_words(text)) if text else None
        return (side, node, "") if side else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        names = [n for n in (node.left, node.right) if isinstance(n, ast.Name)]
        if len(names) != 2:
            return None
        for part in names:
            words = identifier_words(part.id)
            if "tp" in words or "true" in words:
                continue
            side = (
                "retrieved"
                if "fp" in words or ("false" in words and "pos" in words)
                else "relevant"
                if "fn" in words or ("false" in words and "neg" in words)
                else None
            )
            swapped = _swap_pair(part.id)
            if side is None or swapped is None:
                return None
            return side, part, swapped
        return None
    if isinstance(node, ast.Call) and call_name(node) in ("sum", "reduce_sum"):
        axis = next((k.value for k in node.keywords if k.arg == "axis"), None)
        matrix = node.args[0] if node.args else getattr(node.func, "value", None)
        if axis is None or matrix is None:
            return None
        text = segment(lines, matrix)
        if not text or not set(identifier_words(text)) & _MATRIX_WORDS:
            return None
        value = int_literal(axis)
        if value not in (0, 1):
            return None
        # Rows are the true labels (tf.math.confusion_matrix, scikit-learn): summing over
        # axis 0 counts each class's predictions, over axis 1 its true examples.
        return ("retrieved" if value == 0 else "relevant"), axis, "1" if value == 0 else "0"
    return None


def _count_from(statement: ast.AST, side: str) -> str | None:
    """A name in the statement whose words say it holds the ``side`` items."""
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and _side(identifier_words(node.id)) == side:
            return node.id
    return None


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if not source or len(source) > MAX_CELL_CHARS or "/" not in source:
        return []
    if not any(word in source for word in _TRIGGER_TEXTS) or _TRIGGER.search(source) is None:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    lines = cell_lines(source)
    prints = [
        statement.value
        for statement, _ in statements_on(tree, lines_matching(_PRINT, source))
        if isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Call)
        and call_name(statement.value) == "print"
    ]
    labels = [text_words(label_text(call)) for call in prints]
    found: list[Note] = []
    for statement, function in statements_on(tree, lines_matching(_DIVISION, source)):
        if len(found) >= MAX_NOTES:
            break
        if not isinstance(statement, (ast.Assign, ast.AugAssign, ast.Return, ast.Expr)):
            continue
        value = statement.value
        if value is None:
            continue
        names = target_names(statement)
        words = [w for name in names for w in identifier_words(name)]
        if _intent(words) is None and function is not None and _returns(function, statement):
            words = identifier_words(function.name)
        if _intent(words) is None and names:
            # A generic name printed under a recall label: ``print("recall@10", score)``.
            printed = [
                label
                for label, n in zip(labels, prints, strict=True)
                if any(isinstance(x, ast.Name) and x.id in names for x in ast.walk(n))
            ]
            words = [w for label in printed for w in label]
        intent = _intent(words)
        if intent is None:
            continue
        all_words = " ".join(words) + " " + " ".join(names)
        match = _AT.search(all_words.replace(" ", "_")) or _AT.search(source)
        cutoff = int(match.group(1)) if match else None
        for division in ast.walk(value):
            if not (isinstance(division, ast.BinOp) and isinstance(division.op, ast.Div)):
                continue
            read = _denominator(division.right, lines, cutoff)
            if read is None:
                continue
            side, replaced, other_text = read
            wrong = (intent == "recall") == (side == "retrieved")
            if not wrong:
                continue
            other = "relevant" if side == "retrieved" else "retrieved"
            if not other_text:
                scope: ast.AST = function if function is not None else tree
                name = _count_from(division.left, other) or _count_from(statement, other)
                if name is None and other == "retrieved":
                    other_text = _cutoff_name(scope) or ""
                elif name is None:
                    name = _count_from(scope, other)
                if name is not None:
                    other_text = f"len({name})"
                if not other_text:
                    continue
            fixed = line_with_replacement(lines, statement, replaced, other_text)
            written = segment(lines, statement)
            denominator = segment(lines, division.right)
            if fixed is None or written is None or denominator is None:
                continue
            mistaken = "precision" if intent == "recall" else "recall"
            where = f"line {getattr(statement, 'lineno', 0)} of this cell" + (
                f", in `{function.name}`" if function is not None else ""
            )
            found.append(
                reports.note(
                    f"`{written}` ({where}) is meant as {intent} but divides by "
                    f"`{denominator}`, {_COUNT[side]}: that makes it the {mistaken} "
                    f"({_MEANING[mistaken]}). The {intent} is {_MEANING[intent]}, so the "
                    "number printed is off by the ratio of the two counts, without any "
                    f"error. Divide by {_COUNT[other]}: `{fixed}`.",
                    SECTION,
                )
            )
            break
    return found


def _returns(function: ast.AST, statement: ast.AST) -> bool:
    """Whether the function returns what the statement computes (the statement is a
    ``return``, or a name it binds is read in one): only then does its name tell."""
    if isinstance(statement, ast.Return):
        return True
    names = set(target_names(statement))
    return any(
        isinstance(node, ast.Return)
        and node.value is not None
        and any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node.value))
        for node in ast.walk(function)
    )


def _cutoff_name(scope: ast.AST) -> str | None:
    """The cut-off's name in a ``def`` or cell (``k``, ``top_k``): precision@k divides by it."""
    for node in ast.walk(scope):
        name = node.arg if isinstance(node, ast.arg) else getattr(node, "id", None)
        if isinstance(name, str):
            words = identifier_words(name)
            if words and set(words) <= _CUTOFF_WORDS and "k" in words:
                return name
    return None
