"""A "best", "top", "nearest" or "worst" pick taken from the wrong end of a ranking.

``np.argsort``, ``tf.argsort``, ``np.sort`` and ``sorted`` order from smallest to largest,
so ``top = np.argsort(scores)[:k]`` keeps the k LOWEST scores: a recommender that returns
the items the model likes least, a retrieval that returns the least similar neighbours.
The same slip comes as ``argmin`` over a similarity called ``best``, ``argmax`` over a
distance called ``nearest``, ``[-k:]`` over errors called ``best``. Nothing raises.

Read from the cell's own words (``intent_words.py``): the statement's target name
(``top``, ``best_items``, ``nearest``, ``worst``...), else the ``def`` it is in
(``recommend``, ``most_similar``) or its ``print`` label, tells which end is wanted:
``highest``/``largest`` the largest values, ``lowest``/``smallest`` the smallest, and
``best``/``top``/``nearest``/``recommend`` the best ones, which are the largest for a
quantity whose name says larger is better (scores, similarities, probabilities,
ratings) and the smallest for one where smaller is better (distances, errors, losses);
``worst``/``farthest`` the opposite. The computation tells which end is kept: the head
(``[:k]``, ``[0]``) or tail (``[-k:]``, ``[-1]``) of an ascending or descending
(``[::-1]``, ``direction="DESCENDING"``, ``reverse=True``) sort, ``argmin``/``argmax``,
``min``/``max``, ``top_k``, and a negated operand (``-scores``, ``1 - sims``) flips it.
Only a statement with exactly one such pick, whose words and computation clearly
disagree, is told; the fix is the statement with the operand negated, ``reverse=True``
or ``argmin`` and ``argmax`` swapped. Source only: a function's body is read too, and a
comprehension over a pick (``[vocab[i] for i in np.argsort(sims)[:k]]``) is that pick.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.intent_words import (
    cell_lines,
    identifier_words,
    label_text,
    lines_matching,
    printed_values,
    quantity_polarity,
    segment,
    statements_on,
    target_names,
    text_words,
)
from jupyterlab_tfcoach.monitor.syntax import call_name, int_literal, parsed_source
from jupyterlab_tfcoach.monitor.word_gates import word_gate

SECTION = "reducing-tensors"
MAX_NOTES = 2
MAX_CELL_CHARS = 30_000
# A cell needs a ranking call and a word that says which end it wants.
_RANKS = re.compile(
    r"\b(?:argsort|sort|sorted|n?a?rg(?:min|max)|top_k|a?min|a?max|nanmin|nanmax"
    r"|reduce_m(?:in|ax))\s*\("
)
# Whole words only: ``EarlyStopping`` holds no "top", ``argmax`` no "max".
_WANTS = word_gate(
    r"(?i:(?<![a-z])(?:best|top|highest|largest|biggest|greatest|lowest|smallest|fewest"
    r"|bottom|worst|farthest|furthest|nearest|closest|most_?similar|similar|likely"
    r"|recommend|recs|relevant|favou?rite|prefer|confident|match|neighbo|knn|hardest"
    r"|maximum|minimum|max_|min_|anomal|outlier|unusual|suspicious))"
)
# Substrings that must be there before any regular expression runs.
_RANK_TEXTS = ("sort", "argm", "top_k", "min(", "max(", "nanarg")
_WANT_TEXTS = (
    "best", "top", "high", "larg", "big", "great", "low", "small", "few", "bottom",
    "worst", "far", "near", "clos", "similar", "likely", "recommend", "recs", "relevant",
    "favo", "prefer", "confident", "match", "neighb", "knn", "hardest", "maximum",
    "minimum", "max_", "min_", "anomal", "outlier", "unusual", "suspicious",
)  # fmt: skip
_SORTS = frozenset({"argsort", "sort", "sorted"})
_PRINTED_LABEL = "the printed label"
_EXTREMES = {
    "argmin": "smallest",
    "argmax": "largest",
    "nanargmin": "smallest",
    "nanargmax": "largest",
    "min": "smallest",
    "max": "largest",
    "amin": "smallest",
    "amax": "largest",
    "nanmin": "smallest",
    "nanmax": "largest",
    "reduce_min": "smallest",
    "reduce_max": "largest",
}
_SWAPPED = {
    "argmin": "argmax",
    "argmax": "argmin",
    "nanargmin": "nanargmax",
    "nanargmax": "nanargmin",
    "min": "max",
    "max": "min",
    "amin": "amax",
    "amax": "amin",
    "nanmin": "nanmax",
    "nanmax": "nanmin",
    "reduce_min": "reduce_max",
    "reduce_max": "reduce_min",
}
_HIGH = frozenset({"highest", "largest", "biggest", "greatest", "maximum", "max", "high"})
_LOW = frozenset({"lowest", "smallest", "minimum", "min", "fewest", "bottom", "low"})
_GOOD = frozenset(
    {
        "best",
        "top",
        "recommend",
        "recommended",
        "recommendation",
        "recommendations",
        "recs",
        "nearest",
        "closest",
        "similar",
        "likely",
        "relevant",
        "favourite",
        "favorite",
        "preferred",
        "confident",
        "match",
        "matches",
        "neighbours",
        "neighbors",
        "neighbour",
        "neighbor",
        "knn",
    }
)
_BAD = frozenset({"worst", "farthest", "furthest", "dissimilar", "unlikely", "hardest"})
# Words that ask for the unusual end: the largest of an error or distance (an anomaly
# score's polarity is not told by its name, so only a cost quantity decides).
_UNUSUAL = frozenset(
    {"anomalous", "anomaly", "anomalies", "outlier", "outliers", "unusual", "suspicious"}
)


@dataclass
class Pick:
    """One end of a ranking taken by an expression."""

    node: ast.expr  # the whole picking expression
    keeps: str  # "smallest" or "largest"
    call: ast.Call  # the sort, extreme or top_k call
    operand: ast.expr  # what is ranked, as written
    base: ast.expr  # what is ranked, under a negation
    how: str  # why that end is kept, in words


def _flip(end: str) -> str:
    return "largest" if end == "smallest" else "smallest"


def _negation(node: ast.expr) -> ast.expr | None:
    """``x`` for ``-x``, ``1 - x`` and ``-1 * x``; None when not negated."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return node.operand
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
        if isinstance(node.left, ast.Constant) and isinstance(node.left.value, (int, float)):
            return node.right
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        for one, other in ((node.left, node.right), (node.right, node.left)):
            value = int_literal(one) if isinstance(one, (ast.Constant, ast.UnaryOp)) else None
            if value is not None and value < 0:
                return other
    return None


def _sorted_order(node: ast.expr) -> tuple[str, ast.Call, ast.expr] | None:
    """``("ascending", call, operand)`` for a sort call (under ``[::-1]`` flips)."""
    if isinstance(node, ast.Subscript):
        part = node.slice
        if isinstance(part, ast.Tuple) and part.elts:
            part = part.elts[-1]
        if (
            isinstance(part, ast.Slice)
            and part.lower is None
            and part.upper is None
            and part.step is not None
            and int_literal(part.step) == -1
        ):
            inner = _sorted_order(node.value)
            if inner is None:
                return None
            order, call, operand = inner
            return ("descending" if order == "ascending" else "ascending"), call, operand
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "numpy" and not node.args:
            return _sorted_order(node.func.value)
    if not isinstance(node, ast.Call) or call_name(node) not in _SORTS:
        return None
    order = "ascending"
    for keyword in node.keywords:
        if keyword.arg == "key":
            return None  # ranked by a key we do not read
        if keyword.arg == "reverse":
            if not isinstance(keyword.value, ast.Constant):
                return None
            order = "descending" if keyword.value.value else "ascending"
        if keyword.arg == "direction":
            if not isinstance(keyword.value, ast.Constant):
                return None
            order = "descending" if str(keyword.value.value).upper() == "DESCENDING" else order
    if node.args:
        operand = node.args[0]
    elif isinstance(node.func, ast.Attribute) and call_name(node) == "argsort":
        operand = node.func.value  # scores.argsort()
    else:
        return None
    return order, node, operand


def _end_taken(part: ast.expr) -> str | None:
    """``"head"`` for ``[:k]`` or ``[0]``, ``"tail"`` for ``[-k:]`` or ``[-1]``."""
    if isinstance(part, ast.Tuple) and part.elts:
        part = part.elts[-1]
    if isinstance(part, ast.Slice):
        if part.step is not None:
            return None
        if part.lower is None and part.upper is not None:
            upper = int_literal(part.upper)
            return "head" if upper is None or upper > 0 else None
        if part.upper is None and part.lower is not None:
            lower = part.lower
            negative = (isinstance(lower, ast.UnaryOp) and isinstance(lower.op, ast.USub)) or (
                int_literal(lower) is not None and (int_literal(lower) or 0) < 0
            )
            return "tail" if negative else None
        return None
    index = int_literal(part)
    if index == 0:
        return "head"
    if index == -1:
        return "tail"
    return None


def _pick(node: ast.AST) -> Pick | None:
    if isinstance(node, ast.Subscript):
        ordered = _sorted_order(node.value)
        end = _end_taken(node.slice)
        if ordered is None or end is None:
            return None
        order, call, operand = ordered
        keeps = "smallest" if (end == "head") == (order == "ascending") else "largest"
        name = call_name(call) or "sort"
        if order == "ascending":
            how = f"`{name}` orders from smallest to largest, so the " + (
                "first positions are the lowest values" if end == "head" else "last are the highest"
            )
        else:
            how = "the order is reversed, so the " + (
                "first positions are the highest values" if end == "head" else "last are the lowest"
            )
        return _with_negation(Pick(node, keeps, call, operand, operand, how))
    if isinstance(node, ast.Attribute) and node.attr == "indices":
        node = node.value
    if isinstance(node, ast.Call):
        name = call_name(node)
        if name == "top_k" and node.args:
            how = "`top_k` takes the largest values"
            return _with_negation(Pick(node, "largest", node, node.args[0], node.args[0], how))
        if name in _EXTREMES:
            if isinstance(node.func, ast.Name) and (len(node.args) != 1 or node.keywords):
                return None  # builtin min(a, b) or min(xs, key=...)
            if node.args:
                operand = node.args[0]
            elif isinstance(node.func, ast.Attribute):
                operand = node.func.value
            else:
                return None
            end = _EXTREMES[name]
            how = f"`{name}` takes the {end} value"
            return _with_negation(Pick(node, end, node, operand, operand, how))
    return None


def _with_negation(pick: Pick) -> Pick:
    inner = _negation(pick.operand)
    if inner is not None:
        pick.base = inner
        pick.keeps = _flip(pick.keeps)
        pick.how += ", and the values are negated first, which turns the order around"
    return pick


# Calls that pass a pick on unchanged (conversions) or use it to index (gather, take).
_PASSING = frozenset(
    {
        "list",
        "int",
        "set",
        "tuple",
        "array",
        "asarray",
        "tolist",
        "numpy",
        "item",
        "squeeze",
        "ravel",
        "flatten",
        "gather",
        "take",
        "convert_to_tensor",
        "cast",
    }
)


def _picks(value: ast.AST) -> list[Pick]:
    """The picks the statement's value IS, under conversions and indexing only: a pick
    inside a comparison or arithmetic (``probs.max(1) < 0.5``) is a value, not a pick."""
    found: list[Pick] = []
    stack: list[ast.AST] = [value]
    while stack and len(found) < 2:
        node = stack.pop()
        pick = _pick(node)
        if pick is not None:
            found.append(pick)
            continue
        if isinstance(node, ast.Subscript):
            stack.extend((node.value, node.slice))
        elif isinstance(node, ast.Attribute) and node.attr in ("indices", "T"):
            stack.append(node.value)
        elif isinstance(node, ast.Call) and call_name(node) in _PASSING:
            stack.extend(node.args)
            if isinstance(node.func, ast.Attribute) and not node.args:
                stack.append(node.func.value)
        elif (
            isinstance(node, ast.ListComp | ast.GeneratorExp | ast.SetComp)
            and len(node.generators) == 1
            and not node.generators[0].ifs
        ):
            # ``[vocab[i] for i in np.argsort(sims)[:k]]`` maps each picked position to
            # its item: the items come from the end the ranking was taken at.
            stack.append(node.generators[0].iter)
    return found


def _wanted_end(words: list[str], ranked: list[str]) -> tuple[str, str] | None:
    """The end the words ask for, and the word that says so; None when they do not tell."""
    polarity = quantity_polarity(ranked)
    if polarity == "cost" and any(word in _UNUSUAL for word in words):
        return "largest", next(word for word in words if word in _UNUSUAL)
    for index, word in enumerate(words):
        before = words[index - 1] if index else ""
        if word in _BAD or (word in _GOOD and before == "least"):
            if polarity is None:
                return None
            return ("smallest" if polarity == "score" else "largest"), word
    for word in words:
        if word == "top":
            if polarity == "cost":
                return None  # the top distances: the nearest, or the largest?
            return "largest", word
        if word in _GOOD:
            if polarity is None:
                return None
            return ("largest" if polarity == "score" else "smallest"), word
    for word in words:
        if word in _HIGH:
            return "largest", word
        if word in _LOW or word == "least":
            return "smallest", word
    return None


def _fixed_statement(lines: list[str], statement: ast.AST, pick: Pick) -> str | None:
    """The statement's line with the pick turned to the other end."""
    line_no = getattr(statement, "lineno", 0)
    if line_no != getattr(statement, "end_lineno", -1) or not 0 < line_no <= len(lines):
        return None
    line = lines[line_no - 1].encode("utf-8")
    name = call_name(pick.call)
    if name in _SWAPPED:
        func = pick.call.func
        target = func if isinstance(func, (ast.Name, ast.Attribute)) else None
        if target is None or target.end_col_offset is None:
            return None
        stop = target.end_col_offset
        start = stop - len(name.encode("utf-8"))
        if line[start:stop].decode("utf-8", "replace") != name:
            return None
        replaced = line[:start] + _SWAPPED[name].encode("utf-8") + line[stop:]
        return replaced.decode("utf-8").strip()
    if name == "sorted" or (name == "sort" and isinstance(pick.call.func, ast.Name)):
        reverse = next((k for k in pick.call.keywords if k.arg == "reverse"), None)
        if reverse is not None:
            value = reverse.value
            if not isinstance(value, ast.Constant) or value.end_col_offset is None:
                return None
            text = "False" if value.value else "True"
            replaced = line[: value.col_offset] + text.encode() + line[value.end_col_offset :]
            return replaced.decode("utf-8").strip()
        if pick.call.end_col_offset is None:
            return None
        stop = pick.call.end_col_offset - 1  # before the closing parenthesis
        return (line[:stop] + b", reverse=True" + line[stop:]).decode("utf-8").strip()
    if name == "sort" and isinstance(pick.node, ast.Subscript):
        # Sorted values: negating them would change the values, so take the other end.
        return _other_end(line, pick.node)
    operand = pick.operand
    if operand.end_col_offset is None or operand.lineno != line_no:
        return None
    written = line[operand.col_offset : operand.end_col_offset].decode("utf-8", "replace")
    if pick.base is not operand:
        base = pick.base
        if base.end_col_offset is None:
            return None
        text = line[base.col_offset : base.end_col_offset].decode("utf-8", "replace")
    elif isinstance(operand, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
        text = f"-{written}"
    else:
        text = f"-({written})"
    replaced = line[: operand.col_offset] + text.encode("utf-8") + line[operand.end_col_offset :]
    return replaced.decode("utf-8").strip()


def _other_end(line: bytes, node: ast.Subscript) -> str | None:
    """The line with ``[:k]`` written ``[-k:]`` (and back), ``[0]`` written ``[-1]``."""
    part = node.slice
    if isinstance(part, ast.Tuple) and part.elts:
        part = part.elts[-1]
    text: str | None = None
    start, stop = getattr(part, "col_offset", None), getattr(part, "end_col_offset", None)
    if isinstance(part, ast.Slice) and part.upper is not None and part.lower is None:
        upper = part.upper
        bound = line[upper.col_offset : upper.end_col_offset or 0].decode("utf-8", "replace")
        simple = isinstance(upper, (ast.Name, ast.Constant, ast.Attribute))
        text = f"-{bound}:" if simple else f"-({bound}):"
        start, stop = upper.col_offset - 1, upper.end_col_offset
    elif isinstance(part, ast.Slice) and part.lower is not None and part.upper is None:
        lower = part.lower
        inner = lower.operand if isinstance(lower, ast.UnaryOp) else None
        if inner is None or inner.end_col_offset is None:
            return None
        bound = line[inner.col_offset : inner.end_col_offset].decode("utf-8", "replace")
        text = f":{bound}"
        start, stop = lower.col_offset, (lower.end_col_offset or 0) + 1
    elif int_literal(part) in (0, -1):
        text = "-1" if int_literal(part) == 0 else "0"
    if text is None or start is None or stop is None:
        return None
    # Python 3.9+ gives slices no position of their own: check the brackets we rewrite.
    replaced = line[:start] + text.encode("utf-8") + line[stop:]
    return replaced.decode("utf-8").strip()


def _returned(statement: ast.AST, function: ast.AST) -> bool:
    """Whether the statement is a ``return`` or binds a name the function returns: only
    then does the function's name say what the statement computes."""
    if isinstance(statement, ast.Return):
        return True
    names = set(target_names(statement))
    for node in ast.walk(function):
        if isinstance(node, ast.Return) and node.value is not None:
            if _passed_on(node.value, names):
                return True
    return False


def _passed_on(value: ast.AST, names: set[str]) -> bool:
    """Whether ``value`` is one of ``names`` under conversions, indexing and tuples only
    (``item_ids[top]``, ``list(best)``), not a value computed from it."""
    stack: list[ast.AST] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name) and node.id in names:
            return True
        if isinstance(node, ast.Subscript):
            stack.extend((node.value, node.slice))
        elif isinstance(node, (ast.Tuple, ast.List)):
            stack.extend(node.elts)
        elif isinstance(node, ast.Call) and call_name(node) in _PASSING:
            stack.extend(node.args)
            if isinstance(node.func, ast.Attribute) and not node.args:
                stack.append(node.func.value)
    return False


def _telling(word: str) -> bool:
    return word in _GOOD or word in _BAD or word in _HIGH or word in _LOW or word in _UNUSUAL


def _label_words(label: str) -> list[str]:
    """The words of a printed label that say an end by themselves: ``top`` and ``best``
    there often name a measure (``top-1 accuracy``, ``best epoch``), not the pick."""
    return [w for w in text_words(label) if w in _UNUSUAL or w in _HIGH or w in _LOW or w in _BAD]


def _printed_under_telling_label(tree: ast.Module, statement: ast.AST) -> bool:
    """Whether a later ``print`` shows the statement's name under a label with a word
    that says which end is wanted."""
    names = set(target_names(statement))
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and call_name(node) == "print" and names):
            continue
        if getattr(node, "lineno", 0) <= getattr(statement, "lineno", 0):
            continue
        if _label_words(label_text(node)) and any(
            isinstance(n, ast.Name) and n.id in names
            for value in printed_values(node)
            for n in ast.walk(value)
        ):
            return True
    return False


def _statements(
    tree: ast.Module, wanted: set[int]
) -> list[tuple[ast.AST, ast.AST, list[str], str, ast.AST | None]]:
    """(statement, value, words of its intent, whose words, its ``def``) for the
    assignments, returns and prints on the lines that rank something."""
    found: list[tuple[ast.AST, ast.AST, list[str], str, ast.AST | None]] = []
    for node, function in statements_on(tree, wanted):
        value: ast.AST | None = None
        words: list[str] = []
        whose = ""
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value:
            value = node.value
            for name in target_names(node):
                words = identifier_words(name)
                whose = f"`{name}`"
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            call = node.value
            if call_name(call) == "print":
                words = text_words(label_text(call))
                whose = "the printed label"
                values = list(printed_values(call))
                value = values[0] if len(values) == 1 else None
            elif target_names(node):
                value = call
                name = target_names(node)[0]
                words, whose = identifier_words(name), f"`{name}`"
        elif isinstance(node, ast.Return) and node.value is not None:
            value = node.value
        if value is None:
            continue
        if not any(_telling(w) for w in words):
            if function is not None and _returned(node, function):
                words, whose = identifier_words(function.name), f"the function `{function.name}`"
            elif _printed_under_telling_label(tree, node):
                words, whose = [], _PRINTED_LABEL
            else:
                continue
        found.append((node, value, words, whose, function))
    return found


def _printed_label_end(
    tree: ast.Module, statement: ast.AST, ranked: list[str]
) -> tuple[str, str] | None:
    """The end asked for by the labels of the cell's prints that show the statement's
    name (itself or indexed by it), when they all agree."""
    names = set(target_names(statement))
    if not names:
        return None
    ends: set[tuple[str, str]] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and call_name(node) == "print"):
            continue
        if getattr(node, "lineno", 0) <= getattr(statement, "lineno", 0):
            continue
        if not any(
            isinstance(n, ast.Name) and n.id in names
            for value in printed_values(node)
            for n in ast.walk(value)
        ):
            continue
        end = _wanted_end(_label_words(label_text(node)), ranked)
        if end is not None:
            ends.add(end)
    if len({end for end, _ in ends}) != 1:
        return None
    return sorted(ends)[0]


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if not source or len(source) > MAX_CELL_CHARS:
        return []
    if not any(word in source for word in _RANK_TEXTS):
        return []
    lowered = source.lower()
    if not any(word in lowered for word in _WANT_TEXTS):
        return []
    if _RANKS.search(source) is None or _WANTS.search(source) is None:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    lines = cell_lines(source)
    found: list[Note] = []
    for statement, value, words, whose, function in _statements(
        tree, lines_matching(_RANKS, source)
    ):
        if len(found) >= MAX_NOTES:
            break
        picks = _picks(value)
        if len(picks) != 1:
            continue
        pick = picks[0]
        base_text = segment(lines, pick.base)
        if base_text is None:
            continue
        wanted = _wanted_end(words, identifier_words(base_text))
        if wanted is None:
            # The name alone does not tell (``top`` of errors): the label it is printed
            # under may (``print("most anomalous readings:", top10)``).
            wanted = _printed_label_end(tree, statement, identifier_words(base_text))
            whose = _PRINTED_LABEL
        if wanted is None or wanted[0] == pick.keeps:
            continue
        end, word = wanted
        fixed = _fixed_statement(lines, statement, pick)
        written = segment(lines, statement)
        if fixed is None or written is None:
            continue
        where = f"line {getattr(statement, 'lineno', 0)} of this cell" + (
            f", in `{getattr(function, 'name', '')}`" if function is not None else ""
        )
        polarity = quantity_polarity(identifier_words(base_text))
        reason = ""
        if word in _UNUSUAL:
            reason = f" (the unusual ones are those with the largest `{base_text}`)"
        elif word not in _HIGH and word not in _LOW and polarity is not None:
            reason = (
                f" (for `{base_text}` a larger value is better)"
                if polarity == "score"
                else f" (for `{base_text}` a smaller value is better)"
            )
        found.append(
            reports.note(
                f"`{written}` ({where}) picks the {pick.keeps} of `{base_text}`: "
                f'{pick.how}. But {whose} says "{word}", which means the {end} ones'
                f"{reason}, so the result is the opposite end of the ranking, without any "
                f"error. Take the {end} first: `{fixed}`.",
                SECTION,
            )
        )
    return found
