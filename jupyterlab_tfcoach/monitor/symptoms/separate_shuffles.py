"""Features and labels shuffled by two separate calls: rows no longer match their labels.

``np.random.shuffle(x)`` then ``np.random.shuffle(y)`` (or ``random.shuffle``, or a NumPy
``Generator``'s ``shuffle``) draw two different permutations: each row keeps a random
label, the model learns noise, and nothing raises. After a cell that completed, its
statements (not inside ``def``/``lambda``; a cell without ``shuffle(`` in its text costs
one substring test) are read for two or more such calls on plain names that, after the
cell, hold NumPy arrays (or lists) of the same length above 1, with no ``seed`` call
between them (re-seeding before each shuffle repeats the permutation: silent). The note
names both calls and the length; fix: one permutation for both,
``idx = np.random.permutation(len(x)); x, y = x[idx], y[idx]`` in the learner's names
(the arrays must be rebuilt first: the shuffles already separated them).

Two arrays indexed by two permutation draws, ``X[rng.permutation(n)]`` and
``y[rng.permutation(n)]`` (or ``a, b = rng.permutation(n), rng.permutation(n)`` then
``X[a]``, ``y[b]``), are scrambled the same way: each draw is its own order. Told after a
completed cell with ``permutation(`` in its text, for two different plain names indexed
outside function bodies, holding arrays (or lists) of the same length above 1 after the
cell, with no ``seed`` call between the draws. A permutation test, where labels are
scrambled on purpose, stays silent when the cell says so (``null``, ``chance``,
``baseline``, ``placebo``, ``sanity``, ``scrambled``, ``permutation test``, ``random
labels``... in its identifiers, comments or strings). Fix: one draw, ``perm =
rng.permutation(n)``, before the first line, both arrays indexed with it (for named
draws: the second array indexed with the first draw's name, on its own line).

Reads shapes and lengths only; nothing here imports TensorFlow or prints.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.intent_words import identifier_words
from jupyterlab_tfcoach.monitor.syntax import (
    line_with_replacement,
    numpy_name,
    outside_scopes,
    parsed_source,
)

SECTION = "tf-data-order"
MAX_SHUFFLES = 16


def _length(value: Any) -> int | None:
    cls = type(value)
    if cls.__name__ == "ndarray" and cls.__module__ == "numpy":
        shape = value.shape
        return int(shape[0]) if shape else None
    if cls is list:
        return len(value)
    return None


def _is_shuffle(call: ast.Call) -> bool:
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr == "shuffle" and len(call.args) == 1


def _is_seed(call: ast.Call) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name in ("seed", "set_random_seed", "default_rng")


def notes(source: str, namespace: Mapping[str, Any]) -> list[Note]:
    """The note for this cell's separate shuffles of same-length arrays, if any."""
    if "permutation(" in source:
        found = _permutation_note(source, namespace)
        if found is not None:
            return [found]
    if "shuffle(" not in source:
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    # Runs of shuffle calls, a seed call ending a run.
    runs: list[list[ast.Call]] = [[]]
    for node in outside_scopes(tree):
        if not isinstance(node, ast.Call):
            continue
        if _is_seed(node):
            runs.append([])
        elif _is_shuffle(node) and isinstance(node.args[0], ast.Name):
            runs[-1].append(node)
    for run in runs:
        by_name: dict[str, ast.Call] = {}
        for call in run[:MAX_SHUFFLES]:
            by_name.setdefault(call.args[0].id, call)  # type: ignore[attr-defined]
        lengths = {name: _length(namespace.get(name)) for name in by_name}
        for length in {n for n in lengths.values() if n is not None and n > 1}:
            names = [name for name in by_name if lengths[name] == length]
            if len(names) >= 2:
                return [_note(names, [by_name[n] for n in names], length, source, namespace)]
    shuffled = {call.args[0].id for run in runs for call in run}  # type: ignore[attr-defined]
    for run in runs:
        for call in run[:MAX_SHUFFLES]:
            found = _paired_later(call, tree, shuffled, namespace)
            if found is not None:
                return [_lone_note(call, found[0], found[1], source, namespace)]
    return []


# Calls that pair inputs with labels row by row: fit(x, y), from_tensor_slices((x, y)),
# zip(x, y), train_test_split(x, y).
_PAIRING = ("fit", "evaluate", "from_tensor_slices", "zip", "train_test_split")


def _paired_later(
    shuffle: ast.Call, tree: ast.Module, shuffled: set[str], namespace: Mapping[str, Any]
) -> tuple[str, ast.Call] | None:
    """(the partner's name, the pairing call) when a call after ``shuffle`` pairs the
    shuffled array with another one of the same length that the cell did not shuffle."""
    name = shuffle.args[0].id  # type: ignore[attr-defined]
    length = _length(namespace.get(name))
    if length is None or length < 2:
        return None
    for node in outside_scopes(tree):
        if not isinstance(node, ast.Call) or node.lineno <= shuffle.lineno:
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if called not in _PAIRING:
            continue
        arguments: list[ast.expr] = []
        for argument in node.args[:2]:
            arguments.extend(argument.elts if isinstance(argument, ast.Tuple) else [argument])
        names = [a.id for a in arguments if isinstance(a, ast.Name)]
        if name not in names:
            continue
        for partner in names:
            if partner != name and partner not in shuffled:
                if _length(namespace.get(partner)) == length:
                    return partner, node
    return None


def _lone_note(
    shuffle: ast.Call, partner: str, pairing: ast.Call, source: str, namespace: Mapping[str, Any]
) -> Note:
    name = shuffle.args[0].id  # type: ignore[attr-defined]
    written = ast.get_source_segment(source, shuffle) or f"shuffle({name})"
    paired = ast.get_source_segment(source, pairing) or ""
    paired = paired if "\n" not in paired and len(paired) <= 120 else f"line {pairing.lineno}"
    text = (
        f"`{written}` (line {shuffle.lineno} of this cell) reorders the rows of `{name}` "
        f"but not those of `{partner}`, which `{paired}` pairs with it row by row: each "
        f"row of `{name}` now goes with another row's label. The model learns noise "
        f"(accuracy near chance), and nothing raises."
    )
    numpy = numpy_name(namespace)
    if numpy is not None:
        fix = (
            f"idx = {numpy}.random.permutation(len({name})); "
            f"{name}, {partner} = {name}[idx], {partner}[idx]"
        )
        text += f" Shuffle both with one permutation, in place of that line: `{fix}`."
    return reports.note(text, SECTION)


def _note(
    names: list[str],
    calls: list[ast.Call],
    length: int,
    source: str,
    namespace: Mapping[str, Any],
) -> Note:
    written = [ast.get_source_segment(source, call) or "" for call in calls]
    listed = " and ".join(f"`{w}` (line {c.lineno})" for w, c in zip(written, calls, strict=True))
    both = ", ".join(f"`{n}`" for n in names)
    text = (
        f"{listed} shuffle {both} separately: each call draws its own random order, so "
        f"after them row i of `{names[0]}` no longer goes with row i of `{names[1]}` "
        f"(all {length} rows long). The model then learns from examples paired with "
        f"random labels, and nothing raises."
    )
    numpy = numpy_name(namespace)
    if numpy is not None:
        indexed = ", ".join(f"{n}[idx]" for n in names)
        fix = f"idx = {numpy}.random.permutation(len({names[0]})); {', '.join(names)} = {indexed}"
        text += (
            f" Rebuild the arrays (the shuffles already separated them), then shuffle them "
            f"with one permutation: `{fix}`."
        )
    else:
        text += " Rebuild the arrays, then shuffle them with one permutation of the row indices."
    return reports.note(text, SECTION)


# ------------------------------------------------------------- two permutation draws
# Words that say labels are scrambled on purpose (a permutation test, a chance baseline).
_ON_PURPOSE_WORDS = frozenset(
    {"null", "chance", "baseline", "placebo", "sanity", "scrambled", "scramble", "decoy"}
)
_ON_PURPOSE_PHRASES = re.compile(
    r"permutation[ _-]?test|perm[ _-]test|random(?:ly)?[ _-](?:permuted[ _-])?labels?"
    r"|shuffled[ _-]labels?|shuffle[ _-](?:the[ _-])?labels?|label[ _-]shuffl",
    re.IGNORECASE,
)
_COMMENT = re.compile(r"#[^\n]*")


def _on_purpose(source: str, tree: ast.Module) -> bool:
    """Whether the cell says it scrambles labels on purpose (a permutation test)."""
    if _ON_PURPOSE_PHRASES.search(source):
        return True
    words: set[str] = set()
    for node in outside_scopes(tree):
        if isinstance(node, ast.Name):
            words.update(w.lower() for w in identifier_words(node.id))
        elif isinstance(node, ast.Constant) and type(node.value) is str:
            words.update(re.findall(r"[a-z]+", node.value.lower()))
    for comment in _COMMENT.findall(source):
        words.update(re.findall(r"[a-z]+", comment.lower()))
    return bool(words & _ON_PURPOSE_WORDS)


def _is_permutation(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "permutation"
        and len(node.args) == 1
    )


def _permutation_note(source: str, namespace: Mapping[str, Any]) -> Note | None:
    tree = parsed_source(source)
    if tree is None:
        return None
    # Each draw: a permutation call written inline, or the last assignment of a name to one.
    drawn: dict[str, ast.Call] = {}  # name -> its draw, as the cell goes
    uses: list[tuple[str, ast.Subscript, ast.Call, str | None]] = []
    seeds: list[int] = []
    nodes = sorted(
        (n for n in outside_scopes(tree) if hasattr(n, "lineno")),
        key=lambda n: (n.lineno, n.col_offset),  # type: ignore[attr-defined]
    )
    for node in nodes:
        if isinstance(node, ast.Call) and _is_seed(node):
            seeds.append(node.lineno)
        if isinstance(node, ast.Assign) and _is_permutation(node.value):
            targets = [t for t in node.targets if isinstance(t, ast.Name)]
            for target in targets:
                drawn[target.id] = node.value  # type: ignore[assignment]
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple):
            for target, value in zip(
                node.targets[0].elts if isinstance(node.targets[0], ast.Tuple) else [],
                node.value.elts,
                strict=False,
            ):
                if isinstance(target, ast.Name) and _is_permutation(value):
                    drawn[target.id] = value  # type: ignore[assignment]
        if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)):
            continue
        index = node.slice
        if _is_permutation(index):
            uses.append((node.value.id, node, index, None))  # type: ignore[arg-type]
        elif isinstance(index, ast.Name) and index.id in drawn:
            uses.append((node.value.id, node, drawn[index.id], index.id))
    if len(uses) < 2:
        return None
    for i, (first, first_use, first_draw, first_name) in enumerate(uses):
        for second, second_use, second_draw, second_name in uses[i + 1 :]:
            if second == first or second_draw is first_draw:
                continue
            if any(first_draw.lineno <= line <= second_draw.lineno for line in seeds):
                continue
            length = _length(namespace.get(first))
            if length is None or length < 2 or _length(namespace.get(second)) != length:
                continue
            if _on_purpose(source, tree):
                return None
            return _permutation_text(
                (first, first_use, first_draw, first_name),
                (second, second_use, second_draw, second_name),
                length,
                source,
                tree,
            )
    return None


def _statement_of(tree: ast.Module, node: ast.AST) -> ast.stmt | None:
    for statement in tree.body:
        if (
            statement.lineno <= node.lineno  # type: ignore[attr-defined]
            and (statement.end_lineno or statement.lineno) >= node.lineno  # type: ignore[attr-defined]
        ):
            return statement
    return None


def _permutation_text(
    first: tuple[str, ast.Subscript, ast.Call, str | None],
    second: tuple[str, ast.Subscript, ast.Call, str | None],
    length: int,
    source: str,
    tree: ast.Module,
) -> Note | None:
    lines = source.splitlines()
    first_name, first_use, first_draw, first_index = first
    second_name, second_use, _, second_index = second
    written = [ast.get_source_segment(source, u) or "" for u in (first_use, second_use)]
    text = (
        f"`{written[0]}` (line {first_use.lineno}) and `{written[1]}` (line "
        f"{second_use.lineno}) index `{first_name}` and `{second_name}` with two different "
        f"permutations: each `permutation` call draws its own random order, so after them "
        f"row i of one no longer goes with row i of the other (both {length} rows long). "
        "Examples are then paired with random labels; shapes and class rates look right, "
        "and nothing raises."
    )
    draw = ast.get_source_segment(source, first_draw) or "rng.permutation(...)"
    statements = [_statement_of(tree, u) for u in (first_use, second_use)]
    if first_index is not None and second_index is not None and statements[1] is not None:
        index_node = second_use.slice
        fixed = line_with_replacement(lines, statements[1], index_node, first_index)
        if fixed is None:
            return reports.note(text, SECTION)
        return reports.note(
            text + f" Index both with one draw: `{fixed}` (line {second_use.lineno}).", SECTION
        )
    if first_index is not None or second_index is not None:
        return reports.note(text, SECTION)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    perm = next(n for n in ("perm", "order", "shared_order", "row_order") if n not in used)
    rewritten = []
    for statement, use in zip(statements, (first_use, second_use), strict=True):
        if statement is None:
            return reports.note(text, SECTION)
        fixed = line_with_replacement(lines, statement, use.slice, perm)
        if fixed is None:
            return reports.note(text, SECTION)
        rewritten.append((fixed, use.lineno))
    if rewritten[0][1] == rewritten[1][1]:
        # Both on one line: that line, with both replaced.
        same = statements[0]
        assert same is not None
        line = lines[same.lineno - 1]
        for segment in written:
            line = line.replace(segment, segment.replace(draw, perm), 1)
        fix = (
            f" Draw one permutation and index both with it: `{perm} = {draw}` on a new line "
            f"before line {same.lineno}, then `{line.strip()}` (line {same.lineno})."
        )
        return reports.note(text + fix, SECTION)
    fix = (
        f" Draw one permutation and index both with it: `{perm} = {draw}` on a new line "
        f"before line {first_use.lineno}, then `{rewritten[0][0]}` (line {rewritten[0][1]}) "
        f"and `{rewritten[1][0]}` (line {rewritten[1][1]})."
    )
    return reports.note(text + fix, SECTION)
