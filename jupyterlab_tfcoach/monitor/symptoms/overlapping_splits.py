"""Validation or test rows that are training rows: held-out data made so it overlaps the
training data.

``X_val = make_data(1000, seed=1)`` beside ``X_train = make_data(8000, seed=1)`` (one
seed starts the generator at the same place, so the 1000 validation rows are the first
1000 training rows), ``X_val = X[700:900]`` beside ``X_train = X[:800]`` (slices whose
ranges cross), ``X_val = X_train[-200:]`` or ``X_train = np.concatenate([X_train,
X_val])``: every score on the held-out rows then measures how well the model remembers
rows it was trained on, better than it will do on new data. Nothing raises.

Found after a cell that completed, from its source and the arrays its names hold: a
top-level assignment (outside function bodies) to a name with a held-out word (``val``,
``test``, ``te``... as ``adapt_leaks`` reads names) or a training word, paired with the
name of the other kind (``enc_val`` <-> ``enc_train``, ``X_te`` <-> ``X_tr``), both
NumPy arrays or eager tensors of at most a million numbers, where the held-out array's
rows are all rows of the training array (``trained_test_rows``'s reading: the same object,
its first or last rows, or each of its first 16 rows found there exactly once; data of
few distinct values, where a match proves nothing, is not told). A cell whose text has no
held-out word costs a substring test per word.

The fix depends on how the rows were made: a call given the same literal seed as the
training data's (this cell's or the history's assignment), or a generator made from that
seed in its arguments (``make(n, np.random.default_rng(0))``), gets another seed; a slice of
the array the training slice ``A[:k]`` came from starts at ``k``; held-out rows indexed
by a second, independent draw (``vi = rng.permutation(n)[:k]`` or ``rng.choice(n, k,
replace=False)``) while the training rows take ``order[:m]`` of another permutation are
told as that cause, and fixed by taking both from the one permutation (``vi =
order[m:m + k]``); otherwise the held-out
rows found in the training data are dropped (one ``tobytes`` set of the training rows),
when some rows are left.

A subset drawn from the whole array (``_drawn_subset``): ``idx = rng.choice(len(A), 100,
replace=False)`` then ``x_lab, y_lab = A[idx], B[idx]`` beside ``x_test = A[k:]`` in the
same cell: the row numbers come from every row, the test part's too, so the labelled
(training) subset holds test rows. Told when the held-out name is a slice of ``A``, the
other name (no held-out word, not ``A`` itself) takes ``A[idx]`` with ``idx`` a 1-D NumPy
array of at least ``MIN_DRAWN`` whole numbers, fewer than ``A``'s rows (all of them is a
shuffle), that indexes two or more arrays in the cell (inputs and labels: a labelled
subset, not a look at a few rows), and at least ``MIN_SHARED_DRAWN`` of its rows fall in
the slice. Fix: the draw's first argument (the number of rows it draws from) set to the
slice's start, for a slice to the end written from the start (``A[k:]``), else in words.

The same for tf.data: a held-out ``base.take(n)`` (or ``.skip(n)``, under maps and
batches) whose ``base`` the training dataset reads too (its ``_input_dataset`` links,
``dataset_order.chain_of``) without a split leaving those elements out (``skip(m)``
with ``m >= n``); two splits of a dataset reshuffled each pass are ``dataset_order``'s.
Fix: the training statement reading ``base.skip(n)`` (``base.take(n)``) in place of
``base``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.adapt_leaks import (
    as_training_name,
    is_held_out_name,
    is_training_name,
    top_statements,
)
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import row_count, slice_rows
from jupyterlab_tfcoach.monitor.symptoms.dataset_order import (
    SKIP,
    TAKE,
    chain_of,
    operation,
    reshuffled_each_epoch,
    scalar,
)
from jupyterlab_tfcoach.monitor.symptoms.trained_test_rows import held_rows, shared_rows
from jupyterlab_tfcoach.monitor.syntax import call_name, history_assignments, parsed_source

SECTION = "keras-validation-data"
MAX_CELL_CHARS = 50_000
_HISTORY_CELLS = 50
# Substrings one of which a cell assigning a held-out name must contain.
_TRIGGERS = ("val", "test", "te", "va", "tst", "dev", "holdout", "eval")
# Pieces of split names looked for left of a line's ``=`` before any parse.
_SPLIT_HINTS = ("val", "test", "te", "va", "tst", "dev", "holdout", "eval", "tr")
_SEED_KEYWORDS = frozenset({"seed", "random_state", "random_seed"})
# Constructors of a random generator from a seed (NumPy's, Python's, TensorFlow's).
_GENERATORS = frozenset({"default_rng", "RandomState", "Random", "from_seed"})
# The held-out words a training word may stand for, in the order tried.
_HELD_FOR = {
    "train": ("val", "valid", "validation", "test", "dev", "holdout"),
    "training": ("validation", "test"),
    "tr": ("va", "te", "val", "test"),
    "trn": ("tst", "val", "test"),
}


def _assigns_split(source: str) -> bool:
    """Whether a line's text left of its first ``=`` (an assignment's targets) names a
    split: string operations only (a regular expression over the cell cost ~60 us)."""
    for line in source.splitlines():
        head, equals, tail = line.partition("=")
        if not equals or tail.startswith("=") or (head and head[-1] in "!<>=+-*/%&|^:@"):
            continue
        lowered = head.lower()
        if "(" in head or not any(hint in lowered for hint in _SPLIT_HINTS):
            continue
        for name in re.findall(r"[A-Za-z_]\w*", head):
            if is_held_out_name(name) or is_training_name(name):
                return True
    return False


def _targets(statement: ast.Assign) -> list[str]:
    names: list[str] = []
    for target in statement.targets:
        if isinstance(target, ast.Name):
            names.append(target.id)
        elif isinstance(target, ast.Tuple | ast.List):
            names.extend(e.id for e in target.elts if isinstance(e, ast.Name))
    return names


def _held_out_names(training: str) -> list[str]:
    """``x_val``, ``x_test``... for ``x_train``: the training word replaced."""
    found: list[str] = []
    for word, held in _HELD_FOR.items():
        pattern = re.compile(rf"(?<![A-Za-z]){word}(?![a-z])", re.IGNORECASE)
        if pattern.search(training):
            found.extend(pattern.sub(h, training, count=1) for h in held)
    return found


def _pairs(names: list[str], namespace: dict[str, Any]) -> list[tuple[str, str]]:
    """(held-out, training) name pairs for the names this cell assigned."""
    pairs: list[tuple[str, str]] = []
    for name in names:
        if is_held_out_name(name):
            training = as_training_name(name)
            if training is not None and training in namespace:
                pairs.append((name, training))
        elif is_training_name(name):
            pairs.extend((held, name) for held in _held_out_names(name) if held in namespace)
    return pairs


def notes(source: str, namespace: dict[str, Any]) -> list[Note]:
    if "=" not in source or len(source) > MAX_CELL_CHARS:
        return []
    lowered = source.lower()
    if not any(word in lowered for word in _TRIGGERS):
        return []
    # Only a cell assigning a name of a split is read further (no parse otherwise).
    if not _assigns_split(source):
        return []
    tree = parsed_source(source)
    if tree is None:
        return []
    statements = [s for s in top_statements(tree) if isinstance(s, ast.Assign)]
    by_name: dict[str, ast.Assign] = {}
    for statement in statements:
        for name in _targets(statement):
            by_name[name] = statement
    cell = _Cell(by_name, source, namespace)
    seen: set[tuple[str, str]] = set()
    for held, training in _pairs(list(by_name), namespace):
        if (held, training) in seen:
            continue
        seen.add((held, training))
        shared = shared_rows(namespace.get(held), namespace.get(training))
        if shared is None:
            # Rows of few distinct values (small pictures, codes) repeat by chance, so
            # their values prove nothing: two slices of one array whose ranges cross do.
            shared = _slice_overlap(held, training, cell)
        if shared is not None:
            return [_note(held, training, shared, cell)]
        split = _dataset_overlap(namespace.get(held), namespace.get(training))
        if split is not None:
            return [_dataset_note(held, training, split, cell)]
    drawn = _drawn_subset(statements, source, namespace)
    return [drawn] if drawn is not None else []


MIN_DRAWN = 10
MIN_SHARED_DRAWN = 3


def _element(statement: ast.Assign, name: str) -> ast.expr | None:
    """What ``statement`` assigns to ``name`` (``a, b = e1, e2`` pairs them up)."""
    for target in statement.targets:
        if isinstance(target, ast.Name) and target.id == name:
            return statement.value
        if (
            isinstance(target, ast.Tuple)
            and isinstance(statement.value, ast.Tuple)
            and len(target.elts) == len(statement.value.elts)
        ):
            for part, value in zip(target.elts, statement.value.elts, strict=True):
                if isinstance(part, ast.Name) and part.id == name:
                    return value
    return None


def _drawn_subset(
    statements: list[ast.Assign], source: str, namespace: dict[str, Any]
) -> Note | None:
    """A subset indexed by row numbers drawn from every row of the array a held-out
    slice is cut from (module docstring)."""
    numpy = __import__("sys").modules.get("numpy")
    if numpy is None:
        return None
    elements: list[tuple[str, ast.Assign, ast.expr]] = []
    for statement in statements:
        for name in _targets(statement):
            value = _element(statement, name)
            if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name):
                elements.append((name, statement, value))
    indexed: dict[str, set[str]] = {}
    for _, _, value in elements:
        if isinstance(value.slice, ast.Name):
            indexed.setdefault(value.slice.id, set()).add(value.value.id)  # type: ignore[union-attr]
    for held, held_statement, held_value in elements:
        if not is_held_out_name(held):
            continue
        cut = slice_rows(held_value, namespace)
        if cut is None:
            continue
        base, start, stop, rows = cut
        for other, statement, value in elements:
            if other == held or is_held_out_name(other) or not isinstance(value.slice, ast.Name):
                continue
            if value.value.id != base or other == base:  # type: ignore[union-attr]
                continue  # ``A = A[perm]`` reorders ``A`` itself: no subset
            index_name = value.slice.id
            if len(indexed.get(index_name, ())) < 2:
                continue
            drawn = namespace.get(index_name)
            if (
                type(drawn).__name__ != "ndarray"
                or drawn.ndim != 1
                or drawn.dtype.kind not in "iu"
                or drawn.shape[0] < MIN_DRAWN
                or drawn.shape[0] >= rows  # every row, reordered: a shuffle, not a subset
            ):
                continue
            positions = numpy.where(drawn < 0, drawn + rows, drawn)
            shared = int(((positions >= start) & (positions < stop)).sum())
            if shared < MIN_SHARED_DRAWN:
                continue
            return _drawn_note(
                held,
                held_statement,
                other,
                statement,
                index_name,
                base,
                (start, stop, rows, shared, int(drawn.shape[0])),
                held_value,
                source,
            )
    return None


def _drawn_note(
    held: str,
    held_statement: ast.Assign,
    other: str,
    statement: ast.Assign,
    index_name: str,
    base: str,
    counts: tuple[int, int, int, int, int],
    held_value: ast.Subscript,
    source: str,
) -> Note:
    start, stop, rows, shared, drawn = counts
    held_text = ast.get_source_segment(source, held_value) or f"{base}[...]"
    text = (
        f"`{other}` (line {statement.lineno}) takes the rows `{index_name}` names, and "
        f"{shared} of its {drawn} rows are rows {start} to {stop - 1} of `{base}`, the rows "
        f"of the held-out `{held} = {held_text}` (line {held_statement.lineno}): "
        f"`{index_name}` was drawn from all {rows} rows, so whatever trains on `{other}` "
        f"has seen part of the test data and its score there is optimistic (leakage). "
        f"Nothing raises. Draw `{index_name}` from the rows outside the held-out part."
    )
    fix = _drawn_fix(index_name, start, stop, rows, held_value, source)
    if fix is not None:
        text += f" Fix: `{fix}`."
    return reports.note(text, SECTION)


def _drawn_fix(
    index_name: str, start: int, stop: int, rows: int, held_value: ast.Subscript, source: str
) -> str | None:
    """The draw with its row count set to the slice's start, when the held-out slice
    runs to the end (``A[k:]``) and the draw is ``G.choice(n, ...)`` or
    ``G.permutation(n)[:m]`` in this cell."""
    if stop != rows or start == 0 or not isinstance(held_value.slice, ast.Slice):
        return None
    lower = held_value.slice.lower
    tree = parsed_source(source)
    if tree is None or lower is None:
        return None
    bound = ast.get_source_segment(source, lower)
    if bound is None or bound.lstrip().startswith("-"):
        return None  # a count from the end: the draw's own count is said in words
    for statement in tree.body:
        if not (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id == index_name
        ):
            continue
        node = statement.value
        if isinstance(node, ast.Subscript):
            node = node.value
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("choice", "permutation")
            and node.args
        ):
            return None
        written = ast.get_source_segment(source, statement)
        count = node.args[0]
        if written is None or bound is None or "\n" in written:
            return None
        offset = statement.col_offset
        head = written[: count.col_offset - offset]
        tail = written[(count.end_col_offset or 0) - offset :]
        return f"{head}{bound}{tail}"
    return None


def _dataset_overlap(held: Any, training: Any) -> tuple[Any, str, int, str | None] | None:
    """A held-out ``base.take(n)`` (or ``.skip(n)``) whose ``base`` the training dataset
    also reads without leaving those elements out: (base, the held-out split, n, the
    training split or None). Two splits of a dataset that reshuffles under them are
    ``dataset_order``'s (another order each pass); a training dataset reading all of
    ``base`` holds the held-out elements in any order."""
    chain = chain_of(held)
    at = next((i for i, link in enumerate(chain) if operation(link) in (TAKE, SKIP)), None)
    if at is None or at + 1 >= len(chain):
        return None
    kind, count, base = operation(chain[at]), scalar(chain[at], "_count"), chain[at + 1]
    if type(count) is not int or count <= 0:
        return None
    trained = chain_of(training)
    if not any(link is base for link in trained):
        return None
    # The training dataset's own split between it and ``base``.
    splits = [
        link
        for link in trained[: [id(x) for x in trained].index(id(base))]
        if operation(link) in (TAKE, SKIP)
    ]
    if len(splits) > 1:
        return None
    if not splits:
        return base, kind or TAKE, count, None
    if reshuffled_each_epoch(chain[at]):
        return None  # each pass splits other elements: ``dataset_order``'s note
    other, other_count = operation(splits[0]), scalar(splits[0], "_count")
    if type(other_count) is not int:
        return None
    disjoint = (kind == TAKE and other == SKIP and other_count >= count) or (
        kind == SKIP and other == TAKE and 0 <= other_count <= count
    )
    return None if disjoint else (base, kind or TAKE, count, other)


@dataclass(frozen=True)
class _Cell:
    """What the notes and fixes read: the cell's assignments by target name, its source,
    and the namespace (where earlier cells' sources are found)."""

    by_name: dict[str, ast.Assign]
    source: str
    namespace: dict[str, Any]

    def assignment(self, name: str) -> tuple[ast.Assign, str] | None:
        """The statement assigning ``name`` and the source it is in: this cell's, else the
        latest earlier cell's."""
        if name in self.by_name:
            return self.by_name[name], self.source
        for statement, text in history_assignments(
            name, self.namespace, _HISTORY_CELLS, MAX_CELL_CHARS
        ):
            return statement, text
        return None

    def split_pair(self, held: str, training: str) -> tuple[ast.Assign, ast.Assign, str] | None:
        """The held-out name's assignment in this cell, and the training name's with the
        source it is in (this cell's or an earlier one's)."""
        held_at = self.by_name.get(held)
        trained_at = self.assignment(training)
        if held_at is None or trained_at is None:
            return None
        return held_at, trained_at[0], trained_at[1]


def _note(held: str, training: str, shared: tuple[int, int], cell: _Cell) -> Note:
    statement = cell.by_name.get(held) or cell.by_name[training]
    written = ast.get_source_segment(cell.source, statement) or held
    count, total = shared
    how_many = f"all its {total} rows" if count == total else f"{count} of its {total} rows"
    text = (
        f"`{written}` (line {statement.lineno}) leaves `{held}` with {how_many} also in "
        f"`{training}`: that held-out data is training data. A model fit on "
        f"`{training}` has seen these rows and their labels, so its scores on `{held}` "
        "measure how well it remembers them, better than it will do on new data, and "
        "nothing raises."
    )
    fix = (
        _seed_fix(held, training, cell)
        or _slice_fix(held, training, cell)
        or _permutation_fix(held, training, cell)
    )
    if fix is not None:
        cause, code = fix
        return reports.note(f"{text} {cause} Make them from other rows: `{code}`.", SECTION)
    if count < total:
        partners = [
            name
            for name in _targets(statement)
            if is_held_out_name(name) and held_rows(cell.namespace.get(name)) is not None
        ] or [held]
        drop = ", ".join(f"{n}[keep]" for n in partners)
        code = (
            f"seen = {{r.tobytes() for r in np.asarray({training})}}; "
            f"keep = np.array([r.tobytes() not in seen for r in np.asarray({held})]); "
            f"{', '.join(partners)} = {drop}"
        )
        text += (
            " Keep only held-out rows the training data does not have (or split the data "
            f"once, into parts that share no row): `{code}`."
        )
    return reports.note(text, SECTION)


def _dataset_note(
    held: str,
    training: str,
    split: tuple[Any, str, int, str | None],
    cell: _Cell,
) -> Note:
    by_name, source, namespace = cell.by_name, cell.source, cell.namespace
    base, kind, count, other = split
    holders = [
        n
        for n, v in list(namespace.items())
        if v is base and not n.startswith("_") and n not in (held, training)
    ]
    base_name = next((n for n in holders if n in source), holders[0] if holders else None)
    statement = by_name.get(held) or by_name.get(training)
    written = ast.get_source_segment(source, statement) if statement is not None else None
    where = f"`{written}` (line {statement.lineno})" if written and statement else f"`{held}`"
    of = f"`{base_name}`" if base_name else "the dataset"
    part = (
        f"the first {count} elements" if kind == TAKE else f"the elements after the first {count}"
    )
    reads = "without leaving them out" if other is None else "with a split that keeps some of them"
    text = (
        f"{where}: `{held}` is {part} of {of}, and `{training}` reads {of} {reads}: "
        f"the held-out elements are training elements. A model fit on `{training}` has seen "
        f"them, so its scores on `{held}` measure how well it remembers them, better than "
        "it will do on new data. Nothing raises."
    )
    trained_at = cell.assignment(training)
    if base_name is not None and trained_at is not None and other is None:
        statement_at, text_at = trained_at
        value = ast.get_source_segment(text_at, statement_at.value)
        pattern = re.compile(rf"(?<![\w.]){re.escape(base_name)}(?!\w)")
        rest = f"skip({count})" if kind == TAKE else f"take({count})"
        if value is not None and "\n" not in value and len(pattern.findall(value)) == 1:
            fixed = f"{training} = {pattern.sub(f'{base_name}.{rest}', value)}"
            return reports.note(f"{text} Train on the other elements only: `{fixed}`.", SECTION)
    return reports.note(
        f"{text} Split once into parts that share no element (`take(n)` for one, `skip(n)` "
        "for the other).",
        SECTION,
    )


def _literal_seed(call: ast.Call) -> tuple[ast.AST, int] | None:
    for keyword in call.keywords:
        if keyword.arg in _SEED_KEYWORDS and isinstance(keyword.value, ast.Constant):
            if type(keyword.value.value) is int:
                return keyword.value, keyword.value.value
    return None


def _seed_of(call: ast.Call) -> tuple[ast.AST, int] | None:
    """The literal seed ``call`` is given: a ``seed=`` keyword, or the seed of a generator
    made in its arguments, ``make(300, np.random.default_rng(0))``."""
    found = _literal_seed(call)
    if found is not None:
        return found
    for argument in [*call.args, *(keyword.value for keyword in call.keywords)]:
        if not isinstance(argument, ast.Call) or call_name(argument) not in _GENERATORS:
            continue
        first = argument.args[0] if argument.args else None
        if isinstance(first, ast.Constant) and type(first.value) is int:
            return first, first.value
        found = _literal_seed(argument)
        if found is not None:
            return found
    return None


def _seed_fix(held: str, training: str, cell: _Cell) -> tuple[str, str] | None:
    """Both made by one function given the same literal seed: the held-out call with
    another seed."""
    found = cell.split_pair(held, training)
    if found is None:
        return None
    held_at, trained, trained_text = found
    held_call, trained_call = held_at.value, trained.value
    if not isinstance(held_call, ast.Call) or not isinstance(trained_call, ast.Call):
        return None
    if ast.dump(held_call.func) != ast.dump(trained_call.func):
        return None
    held_seed, trained_seed = _seed_of(held_call), _seed_of(trained_call)
    if held_seed is None or trained_seed is None or held_seed[1] != trained_seed[1]:
        return None
    node, seed = held_seed
    written = ast.get_source_segment(cell.source, held_at)
    if written is None or held_at.lineno != held_at.end_lineno:
        return None
    start = node.col_offset - held_at.col_offset
    end = (node.end_col_offset or 0) - held_at.col_offset
    if written[start:end] != str(seed):
        return None
    code = f"{written[:start]}{seed + 1}{written[end:]}"
    function = ast.get_source_segment(trained_text, trained_call.func) or "the same function"
    written_in_call = any(node is keyword.value for keyword in held_call.keywords)
    given = "the same seed" if written_in_call else "a generator made from the same seed"
    cause = (
        f"`{function}` is given {given} ({seed}) for both: the generator starts at "
        "the same place and draws the same examples, so the first rows of one are the "
        "rows of the other."
    )
    return cause, code


def _assigned_value(statement: ast.Assign, name: str) -> ast.expr | None:
    """What ``name`` is given: the value of ``name = ...``, or its element of ``a, b =
    x[:n], x[n:]``."""
    if len(statement.targets) != 1:
        return None
    target, value = statement.targets[0], statement.value
    if isinstance(target, ast.Name):
        return value if target.id == name else None
    if (
        isinstance(target, ast.Tuple | ast.List)
        and isinstance(value, ast.Tuple | ast.List)
        and len(target.elts) == len(value.elts)
    ):
        for element, part in zip(target.elts, value.elts, strict=True):
            if isinstance(element, ast.Name) and element.id == name:
                return part
    return None


def _slices(
    held: str, training: str, cell: _Cell
) -> tuple[ast.Subscript, tuple[str, int, int, int], ast.Subscript, tuple[int, int], str] | None:
    """The held-out and training names' slices of one array, with the rows each takes
    (``cell_reading.slice_rows``) and the source the training slice is written in; None
    unless both are slices of one name and still hold those rows."""
    found = cell.split_pair(held, training)
    if found is None:
        return None
    held_at, trained_at, trained_text = found
    held_value, trained_value = (
        _assigned_value(held_at, held),
        _assigned_value(trained_at, training),
    )
    if not isinstance(held_value, ast.Subscript) or not isinstance(trained_value, ast.Subscript):
        return None
    held_rows_at = slice_rows(held_value, cell.namespace)
    trained_rows = slice_rows(trained_value, cell.namespace)
    if held_rows_at is None or trained_rows is None or held_rows_at[0] != trained_rows[0]:
        return None
    # The names still hold those slices (no later statement changed them).
    if row_count(cell.namespace.get(held)) != held_rows_at[2] - held_rows_at[1]:
        return None
    if row_count(cell.namespace.get(training)) != trained_rows[2] - trained_rows[1]:
        return None
    return held_value, held_rows_at, trained_value, trained_rows[1:3], trained_text


def _slice_overlap(held: str, training: str, cell: _Cell) -> tuple[int, int] | None:
    """(rows the held-out slice shares with the training slice, its rows) when a quarter
    of it or more is training rows (a few rows of context, as windows over a series
    take, are not told)."""
    found = _slices(held, training, cell)
    if found is None:
        return None
    _, (_, start, stop, _), _, (trained_start, trained_stop), _ = found
    shared = min(stop, trained_stop) - max(start, trained_start)
    total = stop - start
    if shared <= 0 or shared * 4 < total:
        return None
    return shared, total


def _slice_fix(held: str, training: str, cell: _Cell) -> tuple[str, str] | None:
    """``X_train = X[:800]``, ``X_val = X[700:900]``: the held-out slice from 800 (and
    ``X_train = X[200:]``, ``X_val = X[:300]``: the held-out slice up to 200), written
    with the learner's own bound (``X[n_train:]``)."""
    found = _slices(held, training, cell)
    if found is None:
        return None
    held_value, (base, start, stop, rows), trained_value, trained_rows, trained_text = found
    trained_start, trained_stop = trained_rows
    held_cut, trained_cut = held_value.slice, trained_value.slice
    assert isinstance(held_cut, ast.Slice) and isinstance(trained_cut, ast.Slice)

    def written(node: ast.expr | None, text: str) -> str | None:
        return "" if node is None else ast.get_source_segment(text, node)

    if trained_start == 0 and trained_stop < rows and stop > trained_stop:
        edge = written(trained_cut.upper, trained_text)
        upper = written(held_cut.upper, cell.source)
        if not edge or upper is None:
            return None
        code = f"{held} = {base}[{edge}:{upper}]"
        cause = (
            f"`{training}` takes the rows of `{base}` up to {trained_stop}, and `{held}` "
            f"starts at {start}, inside that range."
        )
        return cause, code
    if trained_stop == rows and trained_start > 0 and start < trained_start:
        edge = written(trained_cut.lower, trained_text)
        lower = written(held_cut.lower, cell.source)
        if not edge or lower is None:
            return None
        code = f"{held} = {base}[{lower}:{edge}]"
        cause = (
            f"`{training}` takes the rows of `{base}` from {trained_start}, and `{held}` "
            f"ends at {stop}, inside that range."
        )
        return cause, code
    return None


_DRAWS = ("permutation", "choice")


def _draw_call(node: ast.AST) -> ast.Call | None:
    """``rng.permutation(n)`` or ``np.random.choice(n, k, replace=False)``: a random draw
    of positions (a slice of it too)."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        node = node.value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _DRAWS
    ):
        return node
    return None


def _positions(value: ast.AST, want_slice: bool) -> ast.AST | None:
    """The index of the first ``A[index]`` in an assignment's value: a name (the held-out
    draw) or, with ``want_slice``, ``order[:m]`` (the training part of a permutation)."""
    for node in ast.walk(value):
        if not isinstance(node, ast.Subscript):
            continue
        index = node.slice
        if not want_slice and isinstance(index, ast.Name):
            return index
        if (
            want_slice
            and isinstance(index, ast.Subscript)
            and isinstance(index.value, ast.Name)
            and isinstance(index.slice, ast.Slice)
        ):
            return index
    return None


def _permutation_fix(held: str, training: str, cell: _Cell) -> tuple[str, str] | None:
    """``x_tr = X[order[:m]]`` and ``x_val = X[vi]`` where ``vi`` is a second, independent
    draw: ``vi = order[m:m + k]``, the next positions of the same permutation."""
    held_at = cell.assignment(held)
    trained_at = cell.assignment(training)
    if held_at is None or trained_at is None:
        return None
    drawn = _positions(held_at[0].value, want_slice=False)
    taken = _positions(trained_at[0].value, want_slice=True)
    if not isinstance(drawn, ast.Name) or not isinstance(taken, ast.Subscript):
        return None
    order = taken.value.id if isinstance(taken.value, ast.Name) else None
    bounds = slice_rows(taken, cell.namespace)
    if order is None or bounds is None or bounds[1] != 0 or bounds[2] >= bounds[3]:
        return None
    draw_at = cell.assignment(drawn.id)
    order_at = cell.assignment(order)
    if draw_at is None or order_at is None or _targets(draw_at[0]) != [drawn.id]:
        return None
    draw = _draw_call(draw_at[0].value)
    if draw is None or _draw_call(order_at[0].value) is None or draw_at[0] is order_at[0]:
        return None
    try:
        total = len(cell.namespace[order])
        count = len(cell.namespace[drawn.id])
    except Exception:
        return None
    end = bounds[2]
    if count <= 0 or end >= total:
        return None
    stop = min(end + count, total)
    code = f"{drawn.id} = {order}[{end}:{stop}]"
    held_text = ast.get_source_segment(held_at[1], held_at[0])
    if held_text and "\n" not in held_text and drawn.id in held_text:
        code += f"; {held_text}"
    call = ast.get_source_segment(draw_at[1], draw) or "a second draw"
    cause = (
        f"`{drawn.id}` comes from a second, independent draw (`{call}`), while `{training}` "
        f"takes the first {end} positions of `{order}`: two shuffles of the same rows pick "
        "mostly the same rows. Take both parts from one permutation, the held-out positions "
        "after the training ones."
    )
    return cause, code
