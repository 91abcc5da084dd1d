"""What the learner says a value is: the words of its name, its printed label, its function.

The checks that compare a computation with its stated intent (``ranking_direction.py``,
``retrieval_metrics.py``, ``reverse_recurrence.py``, ``per_item_reductions.py``,
``reduction_meaning.py``, ``rank_counts.py``, ``hits_cutoffs.py``) read the same words:
an identifier split at underscores, capitals and digits (``topItems`` -> ``top``,
``items``; ``recall_at_10`` -> ``recall``, ``at``), the literal parts of a ``print`` label
or an f-string, and the name of the function a ``return`` is in. This module holds that
lexicon and the readers; each check decides what the words promise.

Nothing here reads values: only the cell's syntax tree, parsed once per source.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

# Quantities where a larger value is better (a model's liking, a match's strength) and
# quantities where a smaller value is better (how far, how wrong).
SCORE_WORDS = frozenset(
    {
        "score",
        "scores",
        "sim",
        "sims",
        "similarity",
        "similarities",
        "cos",
        "cosine",
        "prob",
        "probs",
        "probability",
        "probabilities",
        "logit",
        "logits",
        "rating",
        "ratings",
        "affinity",
        "affinities",
        "relevance",
        "pred",
        "preds",
        "prediction",
        "predictions",
        "predict",
        "confidence",
        "likelihood",
        "dot",
        "dots",
        "utility",
        "reward",
        "rewards",
        "acc",
        "accuracy",
        "auc",
        "f1",
        "precision",
        "recall",
        "iou",
        "gain",
    }
)
COST_WORDS = frozenset(
    {
        "dist",
        "dists",
        "distance",
        "distances",
        "err",
        "errs",
        "error",
        "errors",
        "loss",
        "losses",
        "cost",
        "costs",
        "mse",
        "mae",
        "rmse",
        "residual",
        "residuals",
        "diff",
        "diffs",
        "euclidean",
        "divergence",
        "nll",
        "energy",
        "regret",
    }
)


# Nouns that name one example of a batch (``per_image``, ``each sample``): the words both
# ``per_item_reductions.py`` and ``reduction_meaning.py`` read; each adds the few only it
# reads (plurals in one, more nouns in the other).
EXAMPLE_NOUNS = frozenset(
    {
        "customer",
        "doc",
        "document",
        "episode",
        "example",
        "image",
        "img",
        "instance",
        "item",
        "obs",
        "observation",
        "patient",
        "point",
        "query",
        "record",
        "row",
        "sample",
        "sentence",
        "seq",
        "sequence",
        "series",
        "state",
        "user",
        "window",
    }
)
# Words that ask for a mean rather than a total.
MEAN_WORDS = frozenset({"mean", "average", "avg"})
# NumPy's and TensorFlow's reductions whose axis both checks read.
AXIS_REDUCTIONS = frozenset(
    {
        "mean",
        "sum",
        "max",
        "min",
        "std",
        "var",
        "reduce_mean",
        "reduce_sum",
        "reduce_max",
        "reduce_min",
        "reduce_std",
        "reduce_variance",
    }
)


def identifier_words(name: str) -> list[str]:
    """``["top", "items"]`` for ``top_items`` or ``topItems``, lower case."""
    return [part.lower() for part in _PARTS.findall(name)]


def text_words(text: str) -> list[str]:
    """The words of a label (``"mean recall@10 over"`` -> mean, recall, 10, over)."""
    return identifier_words(text)


def target_names(node: ast.AST) -> list[str]:
    """The names a statement gives its value: ``x`` for ``x = ...``, ``x += ...``,
    ``obj.x = ...`` and ``x.append(...)``, ``x[i] = ...``."""
    found: list[str] = []
    targets: list[ast.AST] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        if isinstance(func, ast.Attribute) and func.attr in ("append", "extend", "add"):
            targets = [func.value]
    for target in targets:
        while isinstance(target, ast.Subscript):
            target = target.value
        if isinstance(target, ast.Name):
            found.append(target.id)
        elif isinstance(target, ast.Attribute):
            found.append(target.attr)
    return found


def label_text(call: ast.Call) -> str:
    """The literal text of a ``print`` call's string arguments and f-strings' constant
    parts (``print("mean recall:", r)`` -> ``"mean recall:"``)."""
    parts: list[str] = []
    for argument in call.args:
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            parts.append(argument.value)
        elif isinstance(argument, ast.JoinedStr):
            for value in argument.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    parts.append(value.value)
    return " ".join(parts)


def printed_values(call: ast.Call) -> Iterator[ast.expr]:
    """The expressions a ``print`` call shows: its non-string arguments and the values
    inside its f-strings."""
    for argument in call.args:
        if isinstance(argument, ast.JoinedStr):
            for value in argument.values:
                if isinstance(value, ast.FormattedValue):
                    yield value.value
        elif not (isinstance(argument, ast.Constant) and isinstance(argument.value, str)):
            yield argument


def names_in(node: ast.AST) -> set[str]:
    """Every plain name read in an expression."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def quantity_polarity(text_or_words: list[str]) -> str | None:
    """``"score"`` when the last meaningful word names a quantity where larger is better,
    ``"cost"`` when smaller is better (``cosine_distance`` is a distance: the head word of
    a compound name is its last), None when none of the words tells."""
    for word in reversed(text_or_words):
        if word in COST_WORDS:
            return "cost"
        if word in SCORE_WORDS:
            return "score"
    return None


def enclosing_functions(tree: ast.AST) -> dict[int, ast.FunctionDef | ast.AsyncFunctionDef]:
    """For each node inside a ``def``, the innermost ``def`` it is in (by node id)."""
    owner: dict[int, ast.FunctionDef | ast.AsyncFunctionDef] = {}

    def visit(node: ast.AST, current: ast.FunctionDef | ast.AsyncFunctionDef | None) -> None:
        for child in ast.iter_child_nodes(node):
            if current is not None:
                owner[id(child)] = current
            inner = child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
            visit(child, inner or current)

    visit(tree, None)
    return owner


def source_line(source_lines: list[str], node: ast.AST) -> str | None:
    """The statement's text when it is on one line, stripped of its indentation."""
    line, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    if line is None or line != end or not 0 < line <= len(source_lines):
        return None
    return source_lines[line - 1].strip()


def segment(source_lines: list[str], node: ast.AST) -> str | None:
    """The node's exact text when it is on one line."""
    line, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    start, stop = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
    if line is None or line != end or start is None or stop is None:
        return None
    if not 0 < line <= len(source_lines):
        return None
    raw = source_lines[line - 1].encode("utf-8")
    try:
        return raw[start:stop].decode("utf-8")
    except UnicodeDecodeError:
        return None


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def cell_lines(source: str) -> list[str]:
    """The cell's lines as ``ast`` numbers them (form feeds do not split a line)."""
    return _LINE_BREAK.split(source)


def statements_on(
    tree: ast.Module, wanted: set[int]
) -> Iterator[tuple[ast.stmt, ast.FunctionDef | ast.AsyncFunctionDef | None]]:
    """The statements (with the ``def`` each is in) that start on one of the ``wanted``
    lines, found through statement bodies only: a cell's expressions are not walked, so a
    large cell costs a few microseconds per statement."""
    stack: list[tuple[ast.stmt, ast.FunctionDef | ast.AsyncFunctionDef | None]] = [
        (s, None) for s in reversed(tree.body)
    ]
    while stack:
        statement, owner = stack.pop()
        if statement.lineno in wanted:
            yield statement, owner
        inner = (
            statement if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)) else owner
        )
        children: list[ast.stmt] = []
        for attribute in ("body", "orelse", "finalbody"):
            children.extend(getattr(statement, attribute, None) or [])
        for handler in getattr(statement, "handlers", None) or []:
            children.extend(handler.body)
        for case in getattr(statement, "cases", None) or []:
            children.extend(case.body)
        stack.extend((child, inner) for child in reversed(children))


def lines_matching(pattern: re.Pattern[str], source: str) -> set[int]:
    """The 1-based numbers of the lines where ``pattern`` matches."""
    return {source.count("\n", 0, match.start()) + 1 for match in pattern.finditer(source)}
