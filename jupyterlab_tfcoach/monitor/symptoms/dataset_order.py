"""tf.data pipelines whose transformations run in an order that silently changes training.

A dataset is a chain of transformation objects: each ``Dataset.batch``/``shuffle``/
``cache``/``take``... returns a new dataset that stores its input in ``_input_dataset``
(``Dataset.zip`` stores ``_datasets``). When a dataset is used (``iter(ds)``, a ``for``
loop, or Keras's ``fit``/``evaluate``/``predict``, which all create an ``OwnedIterator``
of it: ``symptoms/datasets.py`` records the dataset, once per pass), this module walks
that chain (``MAX_CHAIN`` links, instance ``__dict__``s only: no user code runs, nothing
is traced) and looks for orders measured to go wrong on TensorFlow 2.21:

- ``.batch(n).shuffle(k)`` with no shuffle below the batch: shuffle then moves whole
  batches, so every batch still holds ``n`` consecutive rows (rows sorted by class give
  batches of one class); not when another ``batch`` stands above the shuffle
  (``ids.batch(41).map(split).shuffle(k).batch(32)``): the lower batch made the examples
  (sequences of a text's ids), the shuffle reorders examples, the upper batch batches them;
- ``.shuffle(k).cache()`` with no shuffle above the cache: the cache keeps the first
  pass's order and replays it, so every epoch sees the rows in the same order;
- ``.shuffle(1)``: a buffer of one element returns the rows in their original order;
- ``.shuffle(k)`` of rows whose labels are stored sorted (data built class by class), with
  ``k`` smaller than the shortest run of one label: shuffle draws from the next ``k`` rows
  only, so nearly every batch holds one class and each epoch walks through the classes in
  order (the model chases the class it saw last). The labels are a 1-D whole-number or
  text component of the ``from_tensor_slices`` source, or one-hot rows of one (each row's
  1 read as its class: ``to_categorical``'s labels sorted by class) (read once per dataset and cell,
  only when the buffer is smaller than the row count); silent for labels already mixed,
  for a buffer that spans a run, and for values that never repeat (an index);
- no ``.shuffle`` at all in a batched chain that ``fit`` trains on, over rows whose
  labels are stored sorted (each label one run, read as above): every epoch walks
  through the labels in order and most batches hold one label. Told once per cell, only
  when ``fit`` is on the stack of the iterator's creation (evaluating or predicting on
  sorted rows is right), and once per kernel for the same rows (a helper that rebuilds
  the dataset for every fit);
- ``.take(n)`` and ``.skip(n)`` of the same ``.shuffle(k)`` (which reshuffles on every
  pass by default) as training and validation splits: each split draws from its own
  permutation, so they overlap and some rows are in neither (measured: 20 of 120 rows
  in both, 20 in neither). Told in the cell that assigns the splits (the datasets its
  top-level statements bind, when its text has ``.take(`` or ``.skip(``), or when they
  are first used.
- ``Dataset.zip((x_ds.shuffle(n), y_ds.shuffle(n)))``: datasets from different sources
  (features and labels), at least one shuffled, zipped; each shuffle draws its own order,
  so the pairs no longer match (read from the zip's stored ``_datasets`` and each one's
  chain). Silent: the same stored seeds and buffers on every side (one permutation), and
  two shuffles of one source (pairs drawn at random on purpose, as in mixup). The fix
  zips first and shuffles once, the learner's statement rewritten when the shuffles are
  written inside the ``zip`` call. A counter or a ``Dataset.random`` seed stream zipped beside
  shuffled rows pairs nothing with an order, and stays quiet; so do sources of different
  lengths (a small labelled set beside a large unlabelled one is paired at random on
  purpose);
- ``Dataset.zip((small_ds, large_ds))`` of different sources whose lengths (read from
  the source's rows and the batch/take/skip/repeat counts the links store) are known,
  finite, and one at least twice another: zip stops when the shortest runs out, and most
  of the longer data is never read in a pass. The fix repeats the shorter dataset, the
  learner's zip statement rewritten when it names it. Silent: a repeated (infinite) side,
  a counter or a seed stream, two links of one source (``zip((ds, ds.skip(1)))``).

``.repeat()`` before ``.shuffle()``/``.batch()`` only blurs epoch boundaries (a batch may
mix two epochs), a documented trade-off rather than a mistake: it is not reported.

The note names the dataset as the learner named it (the namespace name bound to a link
of the chain) and gives the fixed chain: the learner's own statement with the calls
reordered when it is found (this cell, then earlier cells in ``In``), else the chain's
calls rebuilt from what the dataset objects store (``.shuffle(120).batch(10)``). Numbers
come from the scalar tensors tf.data stores (``_batch_size``, ``_buffer_size``) and the
row count from the shape of a ``from_tensor_slices`` source: shapes and library-created
scalars only.
"""

from __future__ import annotations

import ast
import sys
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import instance_dict, library_attribute
from jupyterlab_tfcoach.monitor.symptoms.random_maps import is_random_map

ORDER_SECTION = "tf-data-order"
MAX_CHAIN = 64  # links followed from a used dataset to its source
MAX_USED_PER_CELL = 8
MAX_NOTES = 3
MAX_REPORTED = 256
MAX_HISTORY_CELLS = 30
MAX_NAMESPACE = 20_000
MAX_SOURCE = 100_000
DATA_PACKAGE = "tensorflow.python.data"
_type_dict = type.__dict__["__dict__"].__get__  # a class's own namespace, no metaclass hook

BATCH, SHUFFLE, CACHE, TAKE, SKIP, MAP, PREFETCH, REPEAT, ZIP, WINDOW, OTHER = (
    "batch",
    "shuffle",
    "cache",
    "take",
    "skip",
    "map",
    "prefetch",
    "repeat",
    "zip",
    "window",
    "other",
)
_OPERATIONS = {
    "_BatchDataset": BATCH,
    "_ParallelBatchDataset": BATCH,
    "_PaddedBatchDataset": BATCH,
    "_ShuffleDataset": SHUFFLE,
    "CacheDataset": CACHE,
    "_CacheDataset": CACHE,
    "_MemoryCacheDataset": CACHE,
    "_TakeDataset": TAKE,
    "_SkipDataset": SKIP,
    "_MapDataset": MAP,
    "_ParallelMapDataset": MAP,
    "_PrefetchDataset": PREFETCH,
    "_RepeatDataset": REPEAT,
    "_OptionsDataset": PREFETCH,  # one element per element, like prefetch
    "_ZipDataset": ZIP,
    "_WindowDataset": WINDOW,
}
# Transformations that keep elements one for one (rows stay rows).
_ONE_FOR_ONE = frozenset({MAP, PREFETCH, CACHE})
# Method names of a chain in the learner's source (anything else ends the chain).
_CHAIN_METHODS = frozenset(
    {
        "batch",
        "padded_batch",
        "shuffle",
        "cache",
        "take",
        "skip",
        "map",
        "prefetch",
        "repeat",
        "filter",
        "with_options",
        "unbatch",
        "interleave",
        "flat_map",
    }
)

BATCH_THEN_SHUFFLE, SHUFFLE_THEN_CACHE, BUFFER_OF_ONE, RESHUFFLED_SPLIT, SHUFFLED_APART = (
    "batch-then-shuffle",
    "shuffle-then-cache",
    "buffer-of-one",
    "reshuffled-split",
    "shuffled-apart",
)
RANDOM_MAP_THEN_CACHE = "random-map-then-cache"
SHORTER_ZIP = "shorter-zip"
SHUFFLED_STEPS = "shuffle-then-window"
SMALL_BUFFER_SORTED = "small-buffer-on-sorted-labels"
UNSHUFFLED_SORTED = "unshuffled-sorted-labels"
MAX_STACK = 60  # frames looked at for a Keras fit above a new iterator
MAX_LABEL_ROWS = 1_000_000  # labels longer than this are not read
MAX_ZIPPED = 8  # components of a zip looked at
MAX_ONE_HOT = 1000  # columns of one-hot labels read as classes
MIN_LENGTH_RATIO = 2  # a zip's longest side this many times its shortest is reported


def operation(dataset: Any) -> str | None:
    """``"batch"`` for a ``_BatchDataset``...; None for what is not a tf.data dataset."""
    try:
        module = _type_dict(type(dataset)).get("__module__")
    except Exception:
        return None
    if type(module) is not str or not module.startswith(DATA_PACKAGE):
        return None
    return _OPERATIONS.get(type(dataset).__name__, OTHER)


def chain_of(dataset: Any) -> list[Any]:
    """The dataset, its input, its input's input... (``_input_dataset`` links)."""
    chain: list[Any] = []
    current = dataset
    while current is not None and len(chain) < MAX_CHAIN and operation(current) is not None:
        chain.append(current)
        attributes = instance_dict(current)
        current = attributes.get("_input_dataset") if attributes is not None else None
    return chain


def is_batched(dataset: Any) -> bool:
    """Whether a ``batch`` (or ``padded_batch``) is in the dataset's chain."""
    return any(operation(link) == BATCH for link in chain_of(dataset))


def reshuffled_each_epoch(dataset: Any) -> bool:
    """Whether a ``shuffle`` in the dataset's chain reshuffles on every pass (the default):
    a ``take``/``skip`` split of it then splits different elements each epoch."""
    return any(
        operation(link) == SHUFFLE and _scalar(link, "_reshuffle_each_iteration") is True
        for link in chain_of(dataset)
    )


def _scalar(dataset: Any, name: str) -> int | bool | None:
    """A number or flag tf.data stored on a transformation (a Python value or a scalar
    tensor it made from the user's argument)."""
    value = (instance_dict(dataset) or {}).get(name)
    if type(value) in (bool, int):
        return value
    if value is None:
        return None
    numpy = library_attribute(value, "numpy")
    if numpy is None:
        return None
    try:
        number = numpy()
        return bool(number) if number.dtype == bool else int(number)
    except Exception:
        return None


def _source_rows(chain: list[Any]) -> int | None:
    """The first dimension of a ``from_tensor_slices`` source (the chain's last link)."""
    source = chain[-1] if chain else None
    if type(source).__name__ != "_TensorSliceDataset":
        return None
    tensors = (instance_dict(source) or {}).get("_tensors")
    if type(tensors) not in (list, tuple) or not tensors:
        return None
    shape = library_attribute(tensors[0], "shape")
    try:
        rows = int(shape[0])
    except Exception:
        return None
    return rows if rows > 0 else None


INFINITE = -1


def cardinality(chain: list[Any]) -> int | None:
    """How many elements one pass over ``chain[0]`` yields, read from the numbers the
    links store (``from_tensor_slices`` rows, batch sizes, take/skip/repeat counts);
    ``INFINITE`` for a ``repeat()`` with no count; None when a link (a filter, an
    unbatch, a zip) makes it unknown. Nothing runs: tf.data's own ``cardinality()`` is
    an op."""
    count = _source_rows(chain)
    if count is None:
        return None
    for link in reversed(chain[:-1]):
        kind = operation(link)
        if kind in _ONE_FOR_ONE or kind == SHUFFLE:
            continue
        if count == INFINITE:
            if kind in (BATCH, SKIP, REPEAT):
                continue
            if kind != TAKE:
                return None
        if kind == BATCH:
            size = _number(_scalar(link, "_batch_size"))
            if size is None or size < 1:
                return None
            whole = _scalar(link, "_drop_remainder") is True
            count = count // size if whole else -(-count // size)
        elif kind == TAKE:
            taken = _number(_scalar(link, "_count"))
            if taken is None:
                return None
            if taken >= 0:  # take(-1) takes everything
                count = taken if count == INFINITE else min(count, taken)
        elif kind == SKIP:
            skipped = _number(_scalar(link, "_count"))
            if skipped is None:
                return None
            count = 0 if skipped < 0 else max(0, count - skipped)
        elif kind == REPEAT:
            times = _number(_scalar(link, "_count"))
            if times is None:
                return None
            count = INFINITE if times < 0 else count * times
        else:
            return None
    return count


def _rows(chain: list[Any], below: int) -> int | None:
    """How many rows reach ``chain[below]``: a ``from_tensor_slices`` source's first
    dimension, through one-for-one transformations only."""
    for link in chain[below + 1 : -1]:
        if operation(link) not in _ONE_FOR_ONE:
            return None
    return _source_rows(chain)


@dataclass
class LabelRuns:
    """Labels stored in runs of one value each: how many values, the shortest run."""

    classes: int
    shortest: int


def _label_runs(values: Any) -> LabelRuns | None:
    """The runs of a 1-D labels array when each value fills one run of rows and values
    repeat (each twice on average); None for mixed labels or values that never repeat."""
    numpy = sys.modules.get("numpy")
    if numpy is None or values.shape[0] < 4:
        return None
    # One pass finds the boundaries: mixed labels have about as many runs as rows and
    # stop here, before the sort in ``unique``.
    boundaries = numpy.flatnonzero(values[1:] != values[:-1]) + 1
    runs = int(boundaries.shape[0]) + 1
    if not 2 <= runs <= values.shape[0] // 2:
        return None
    if int(numpy.unique(values).shape[0]) != runs:
        return None
    edges = numpy.concatenate([[0], boundaries, [values.shape[0]]])
    return LabelRuns(runs, int(numpy.diff(edges).min()))


def _sorted_labels(chain: list[Any], rows: int) -> LabelRuns | None:
    """The runs of the first component of the chain's ``from_tensor_slices`` source that
    holds sorted labels (a 1-D whole-number or text tensor of ``rows`` values)."""
    # Imported here: the error families import this module.
    from jupyterlab_tfcoach.monitor.errors.held_values import INTEGERS, held_array

    if rows > MAX_LABEL_ROWS:
        return None
    tensors = (instance_dict(chain[-1]) or {}).get("_tensors")
    if type(tensors) not in (list, tuple):
        return None
    for tensor in tensors[:MAX_ZIPPED]:
        values = held_array(tensor, rows, (*INTEGERS, "str", "bytes"), ndim=1)
        if values is None:
            values = _one_hot_classes(tensor, rows)
        if values is None or values.shape[0] != rows:
            continue
        runs = _label_runs(values)
        if runs is not None:
            return runs
    return None


def _one_hot_classes(tensor: Any, rows: int) -> Any | None:
    """The class of each row of one-hot labels (``rows`` rows of 2 to ``MAX_ONE_HOT``
    columns, each row 0s and a single 1: ``to_categorical``'s), else None."""
    from jupyterlab_tfcoach.monitor.errors.held_values import NUMBERS, held_array

    # A tensor of more values than this is never copied (``held_array`` reads its shape).
    values = held_array(tensor, min(rows * MAX_ONE_HOT, MAX_LABEL_ROWS), NUMBERS, ndim=2)
    if values is None or values.shape[0] != rows or not 2 <= values.shape[1] <= MAX_ONE_HOT:
        return None
    if not (((values == 0) | (values == 1)).all() and (values.sum(axis=1) == 1).all()):
        return None
    return values.argmax(axis=1)


@dataclass
class Finding:
    """One wrong order, with the numbers its text needs (read when the dataset was used:
    a temporary such as ``ds.take(3)`` is gone by the end of the cell)."""

    kind: str
    # Index in the chain of the link the fix changes (the shuffle or the cache).
    at: int
    # Index of the other link of the wrong pair (the batch; the shuffle under a cache;
    # the split's take/skip); -1 when there is none.
    other: int
    rows: int | None = None
    buffer: int | None = None
    batch_size: int | None = None
    drop_remainder: bool = False
    partner: str | None = None  # the other split's name
    # A zip's components (weakly) and how many elements each yields (SHORTER_ZIP).
    parts: list[tuple[weakref.ReferenceType[Any] | None, int]] | None = None
    labels: LabelRuns | None = None  # sorted labels under a small shuffle buffer
    window_size: int | None = None  # the window cut from shuffled steps (SHUFFLED_STEPS)
    window_shift: int | None = None


def findings_in(chain: list[Any]) -> list[Finding]:
    """The wrong orders in one chain (index 0: the used dataset). A take/skip of a
    reshuffling shuffle is a candidate: ``split_partner`` decides after the cell."""
    found: list[Finding] = []
    kinds = [operation(link) for link in chain]
    shuffles = [i for i, kind in enumerate(kinds) if kind == SHUFFLE]
    for at in shuffles:
        buffer = _scalar(chain[at], "_buffer_size")
        if buffer == 1:
            found.append(Finding(BUFFER_OF_ONE, at, -1, _rows(chain, at), 1))
            continue
        windows = [i for i in range(at) if kinds[i] == WINDOW]
        # A window above a shuffle of single elements (no batch or window below it) cuts
        # its windows from steps already out of order: each window mixes far-apart steps.
        if windows and not any(kinds[i] in (BATCH, WINDOW) for i in range(at + 1, len(kinds))):
            window = chain[windows[-1]]
            found.append(
                Finding(
                    SHUFFLED_STEPS,
                    at,
                    windows[-1],
                    _rows(chain, at),
                    buffer if type(buffer) is int else None,
                    window_size=_number(_scalar(window, "_size")),
                    window_shift=_number(_scalar(window, "_shift")),
                )
            )
            continue
        rows = _rows(chain, at) if type(buffer) is int and buffer > 1 else None
        if rows is not None and type(buffer) is int and buffer < rows:
            runs = _sorted_labels(chain, rows)
            if runs is not None and buffer < runs.shortest:
                found.append(Finding(SMALL_BUFFER_SORTED, at, -1, rows, buffer, labels=runs))
                continue
        below = _batch_below(kinds, at)
        # A batch above the shuffle batches its elements again: the batch below made
        # examples (windows of a text's ids batched into sequences), and shuffling
        # those examples before batching them is the right order.
        if any(kinds[i] == BATCH for i in range(at)):
            continue
        if below is not None and not any(i > below for i in shuffles):
            found.append(
                Finding(
                    BATCH_THEN_SHUFFLE,
                    at,
                    below,
                    _rows(chain, below),
                    buffer if type(buffer) is int else None,
                    _number(_scalar(chain[below], "_batch_size")),
                    _scalar(chain[below], "_drop_remainder") is True,
                )
            )
    for at, kind in enumerate(kinds):
        if kind != CACHE or any(i < at for i in shuffles):
            continue
        under = next((i for i in shuffles if i > at), None)
        if under is not None and _scalar(chain[under], "_reshuffle_each_iteration") is True:
            buffer = _number(_scalar(chain[under], "_buffer_size"))
            found.append(Finding(SHUFFLE_THEN_CACHE, at, under, buffer=buffer))
    for at, kind in enumerate(kinds):
        if kind != CACHE or any(
            i < at and kinds[i] == MAP and is_random_map(chain[i]) for i in range(at)
        ):
            continue
        below = next(
            (i for i in range(at + 1, len(chain)) if kinds[i] == MAP and is_random_map(chain[i])),
            None,
        )
        if below is not None:
            found.append(Finding(RANDOM_MAP_THEN_CACHE, at, below))
            break
    for at, kind in enumerate(kinds):
        if kind == ZIP and _shuffled_apart(chain[at]):
            found.append(Finding(SHUFFLED_APART, at, -1))
            break
    for at, kind in enumerate(kinds):
        if kind == ZIP:
            lengths = shorter_zip(chain[at])
            if lengths is not None:
                found.append(Finding(SHORTER_ZIP, at, -1, parts=lengths))
                break
    for at, kind in enumerate(kinds):
        if kind in (TAKE, SKIP):
            shuffle_at = _split_shuffle(chain, kinds, at)
            if shuffle_at is not None:
                found.append(Finding(RESHUFFLED_SPLIT, shuffle_at, at))
                break
    return found


def _zipped(zipped: Any) -> list[Any]:
    """The datasets a ``Dataset.zip`` stores (a tuple, list or dict of them, nested)."""
    pending = [(instance_dict(zipped) or {}).get("_datasets")]
    found: list[Any] = []
    while pending and len(found) < MAX_ZIPPED:
        item = pending.pop(0)
        if type(item) in (tuple, list):
            pending.extend(item[:MAX_ZIPPED])
        elif type(item) is dict:
            pending.extend(list(item.values())[:MAX_ZIPPED])
        elif operation(item) is not None:
            found.append(item)
    return found


def _is_counter(chain: list[Any]) -> bool:
    """A ``Dataset.range`` never shuffled: an index, not data. ``enumerate`` wraps its
    range in a rewritten ``_VariantDataset`` of scalar int64 elements."""
    if any(operation(link) == SHUFFLE for link in chain):
        return False
    source = chain[-1]
    kind = type(source).__name__
    if kind == "_RangeDataset":
        return True
    if kind != "_VariantDataset":
        return False
    spec = (instance_dict(source) or {}).get("_element_spec")
    if type(spec).__name__ != "TensorSpec":
        return False
    try:
        return spec.dtype.name == "int64" and spec.shape.rank == 0
    except Exception:
        return False


def _is_seed_stream(chain: list[Any]) -> bool:
    """A ``Dataset.random`` source: fresh random numbers (seeds for stateless ops, say)
    have no order that a pairing could break, whatever is shuffled beside them."""
    return type(chain[-1]).__name__ == "_RandomDataset"


def shorter_zip(zipped: Any) -> list[tuple[weakref.ReferenceType[Any] | None, int]] | None:
    """The components of a zip and their lengths when data from different sources is
    zipped with known, different, finite lengths: ``Dataset.zip`` stops at the end of the
    shortest, and the rest of the longer ones is never read. Silent: a counter or a seed
    stream beside the data, two links of one source (``zip((ds, ds.skip(1)))``, pairs of
    neighbours), a repeated (infinite) side, any length not known."""
    components = _zipped(zipped)
    if len(components) < 2:
        return None
    parts: list[tuple[weakref.ReferenceType[Any] | None, int]] = []
    sources: set[int] = set()
    for component in components:
        chain = chain_of(component)
        if not chain or _is_counter(chain) or _is_seed_stream(chain):
            continue
        length = cardinality(chain)
        if length is None:
            return None
        sources.add(id(chain[-1]))
        parts.append((_weak(component), length))
    lengths = [length for _, length in parts]
    if len(parts) < 2 or len(sources) < len(parts) or INFINITE in lengths:
        return None
    # Twice as long at least: lengths a few elements apart are more often rows and their
    # labels that disagree in count, where repeating one side would be the wrong fix.
    if min(lengths) < 1 or max(lengths) < MIN_LENGTH_RATIO * min(lengths):
        return None
    return parts


def _shuffled_apart(zipped: Any) -> bool:
    """Whether a zip pairs datasets from different sources that were shuffled in
    different orders (features and labels shuffled each on its own): the pairs no longer
    match. The same stored seeds and buffers on every side give one permutation (an
    aligned look-alike); two shuffles of one source (pairs drawn at random, as in mixup)
    are meant to differ."""
    components = _zipped(zipped)
    if len(components) < 2:
        return False
    orders: list[tuple[tuple[Any, ...], ...]] = []
    sources: set[int] = set()
    source_rows: set[int | None] = set()
    data_components = 0
    for component in components:
        chain = chain_of(component)
        if not chain:
            return False
        if _is_counter(chain) or _is_seed_stream(chain):
            # ``ds.enumerate()`` is ``zip((Dataset.range(...), ds))``: an unshuffled
            # counter numbers whatever order the other side comes in, it pairs no data.
            continue
        data_components += 1
        sources.add(id(chain[-1]))
        source_rows.add(_source_rows(chain))
        orders.append(
            tuple(
                (
                    _scalar(link, "_seed"),
                    _scalar(link, "_seed2"),
                    _scalar(link, "_buffer_size"),
                )
                for link in chain
                if operation(link) == SHUFFLE
            )
        )
    if data_components < 2 or len(sources) < data_components or not any(orders):
        return False
    # Sources of different lengths are not rows and their labels: a small labelled set
    # beside a large unlabelled one is paired at random on purpose.
    if None not in source_rows and len(source_rows) > 1:
        return False
    # tf.data stores (0, 0) for a shuffle given no seed: the kernel then draws its own.
    seeded = all(
        seed is not None and seed2 is not None and (seed, seed2) != (0, 0)
        for order in orders
        for seed, seed2, _buffer in order
    )
    return not (seeded and len(set(orders)) == 1)


def zip_first_statement(name: str, sources: list[str]) -> str | None:
    """``pairs = tf.data.Dataset.zip((a.shuffle(64), b.shuffle(64))).batch(8)`` written
    as ``pairs = tf.data.Dataset.zip((a, b)).shuffle(64).batch(8)``: the last statement
    assigning ``name`` whose ``zip`` call has shuffles written on its arguments."""
    return _last_rewritten(name, sources, _zip_rewritten)


def _last_rewritten(
    name: str, sources: list[str], rewrite: Callable[[ast.Assign, str], str | None]
) -> str | None:
    """The newest source's last ``name = ...`` statement that ``rewrite`` rewrites, rewritten
    (sources newest first; a source that does not parse is passed over)."""
    for source in sources:
        if type(source) is not str or name not in source or len(source) > MAX_SOURCE:
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError):
            continue
        found: str | None = None
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == name
            ):
                continue
            fixed = rewrite(node, source)
            if fixed is not None:
                found = fixed
        if found is not None:
            return found
    return None


def _zip_rewritten(statement: ast.Assign, source: str) -> str | None:
    written = ast.get_source_segment(source, statement)
    if not written or "\n" in written:
        return None
    for call in ast.walk(statement.value):
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "zip"
            and call.args
            and not call.keywords
        ):
            continue
        single = len(call.args) == 1 and isinstance(call.args[0], (ast.Tuple, ast.List))
        elements = call.args[0].elts if single else call.args  # type: ignore[attr-defined]
        shuffle_arguments: str | None = None
        parts: list[str] = []
        for element in elements:
            while (
                isinstance(element, ast.Call)
                and isinstance(element.func, ast.Attribute)
                and element.func.attr == "shuffle"
            ):
                if shuffle_arguments is None:
                    shuffle_arguments = _arguments(element, source)
                element = element.func.value
            parts.append(ast.get_source_segment(source, element) or ast.unparse(element))
        func = ast.get_source_segment(source, call.func)
        whole = ast.get_source_segment(source, call)
        if shuffle_arguments is None or not func or not whole or written.count(whole) != 1:
            continue
        joined = ", ".join(parts)
        if single:
            opening, closing = ("[", "]") if isinstance(call.args[0], ast.List) else ("(", ")")
            joined = (
                f"{opening}{joined}{',' if len(parts) == 1 and opening == '(' else ''}{closing}"
            )
        return written.replace(whole, f"{func}({joined}).shuffle({shuffle_arguments})")
    return None


def _number(value: Any) -> int | None:
    return value if type(value) is int else None


def _batch_below(kinds: list[str | None], at: int) -> int | None:
    """The batch a shuffle at ``at`` shuffles whole, through one-for-one links."""
    for i in range(at + 1, len(kinds)):
        if kinds[i] == BATCH:
            return i
        if kinds[i] not in _ONE_FOR_ONE:
            return None
    return None


def _split_shuffle(chain: list[Any], kinds: list[str | None], start: int) -> int | None:
    """The reshuffling shuffle right under a take/skip at ``start`` (through one-for-one
    links)."""
    for i in range(start + 1, len(kinds)):
        if kinds[i] == SHUFFLE:
            return i if _scalar(chain[i], "_reshuffle_each_iteration") is True else None
        if kinds[i] not in _ONE_FOR_ONE:
            return None
    return None


def split_partner(shuffle: Any, split_kind: str | None, namespace: dict[str, Any]) -> str | None:
    """The namespace name of a ``take``/``skip`` (the other one than ``split_kind``) of
    the same reshuffling ``shuffle``: the other half of a split."""
    wanted = {TAKE: SKIP, SKIP: TAKE}.get(split_kind or "")
    if wanted is None:
        return None
    for name, value in list(namespace.items())[:MAX_NAMESPACE]:
        if type(name) is not str or name.startswith("_") or operation(value) is None:
            continue
        other = chain_of(value)
        other_kinds = [operation(link) for link in other]
        for i, other_kind in enumerate(other_kinds):
            if other_kind == wanted:
                j = _split_shuffle(other, other_kinds, i)
                if j is not None and other[j] is shuffle:
                    return name
    return None


# ------------------------------------------------------------- the learner's source
@dataclass
class Chain:
    """``NAME = base.m1(a).m2(b)`` as written: the name, the base's text, the calls."""

    name: str
    base: str
    calls: list[tuple[str, str]]

    def text(self, calls: list[tuple[str, str]]) -> str:
        return f"{self.name} = {self.base}" + "".join(f".{m}({a})" for m, a in calls)


def _arguments(call: ast.Call, source: str) -> str:
    parts = []
    for argument in call.args:
        parts.append(ast.get_source_segment(source, argument) or ast.unparse(argument))
    for keyword in call.keywords:
        value = ast.get_source_segment(source, keyword.value) or ast.unparse(keyword.value)
        parts.append(f"{keyword.arg}={value}" if keyword.arg else f"**{value}")
    text = ", ".join(parts)
    return text if "\n" not in text else ", ".join(ast.unparse(a) for a in call.args)


def statement_chain(name: str, sources: list[str]) -> Chain | None:
    """The last ``name = <dataset chain>`` in the first source that assigns ``name``."""
    for source in sources:
        if type(source) is not str or name not in source or len(source) > MAX_SOURCE:
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError):
            continue
        found: Chain | None = None
        found_line = 0
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == name
            ):
                calls: list[tuple[str, str]] = []
                value = node.value
                while (
                    isinstance(value, ast.Call)
                    and isinstance(value.func, ast.Attribute)
                    and value.func.attr in _CHAIN_METHODS
                ):
                    calls.append((value.func.attr, _arguments(value, source)))
                    value = value.func.value
                base = ast.get_source_segment(source, value) or ast.unparse(value)
                if "\n" in base:
                    base = ast.unparse(value)
                if calls and (found is None or node.lineno >= found_line):
                    found = Chain(name, base, list(reversed(calls)))
                    found_line = node.lineno
        if found is not None:
            return found
    return None


def _index(calls: list[tuple[str, str]], method: str, start: int = 0) -> int | None:
    for i in range(start, len(calls)):
        if calls[i][0] == method:
            return i
    return None


def _buffer_text(argument: str, rows: int | None) -> str:
    """The buffer to shuffle rows with: the learner's, or the row count when theirs is a
    smaller number (it counted batches)."""
    try:
        number = ast.literal_eval(argument.split(",")[0].split("=")[-1].strip())
    except Exception:
        return argument
    if rows is not None and type(number) is int and number < rows:
        first, _, rest = argument.partition(",")
        key = "buffer_size=" if first.strip().startswith("buffer_size") else ""
        return f"{key}{rows}" + (f",{rest}" if rest else "")
    return argument


def fixed_statement(finding: Finding, chain: Chain) -> str | None:
    """The learner's statement with the calls in the right order, or None when it does
    not show the wrong order the objects have."""
    calls = list(chain.calls)
    if finding.kind == BATCH_THEN_SHUFFLE:
        batch = _index(calls, "batch")
        shuffle = _index(calls, "shuffle", batch + 1) if batch is not None else None
        if batch is None or shuffle is None or _index(calls, "shuffle") != shuffle:
            return None
        method, argument = calls.pop(shuffle)
        calls.insert(batch, (method, _buffer_text(argument, finding.rows)))
    elif finding.kind == SHUFFLE_THEN_CACHE:
        shuffle = _index(calls, "shuffle")
        cache = _index(calls, "cache", shuffle + 1) if shuffle is not None else None
        if shuffle is None or cache is None:
            return None
        calls.insert(shuffle, calls.pop(cache))
    elif finding.kind == RANDOM_MAP_THEN_CACHE:
        cache = _index(calls, "cache")
        maps = [i for i, call in enumerate(calls[:cache]) if call[0] == "map"] if cache else []
        if cache is None or not maps:
            return None
        # Before the first map: a deterministic map above the random one stays uncached,
        # which is slower but right; the random one then runs every epoch.
        calls.insert(maps[0], calls.pop(cache))
    elif finding.kind in (BUFFER_OF_ONE, SMALL_BUFFER_SORTED):
        shuffle = _index(calls, "shuffle")
        if shuffle is None or finding.rows is None:
            return None
        rest = [p for p in calls[shuffle][1].split(",")[1:] if p.strip()]
        calls[shuffle] = ("shuffle", ", ".join([str(finding.rows), *(p.strip() for p in rest)]))
    elif finding.kind == RESHUFFLED_SPLIT:
        shuffle = _index(calls, "shuffle")
        if shuffle is None:
            return None
        parts = [p.strip() for p in calls[shuffle][1].split(",") if p.strip()]
        parts = [p for p in parts if not p.startswith("reshuffle_each_iteration")]
        calls[shuffle] = ("shuffle", ", ".join([*parts, "reshuffle_each_iteration=False"]))
    else:
        return None
    return chain.text(calls)


def _unshuffled_fixed(chain: Chain, finding: Finding) -> str | None:
    """The learner's statement with ``.shuffle(rows)`` before its batch."""
    calls = list(chain.calls)
    batch = _index(calls, "batch")
    if batch is None or _index(calls, "shuffle") is not None or finding.rows is None:
        return None
    calls.insert(batch, ("shuffle", str(finding.rows)))
    return chain.text(calls)


def _batch_call(finding: Finding) -> str:
    size = finding.batch_size if finding.batch_size is not None else "..."
    extra = ", drop_remainder=True" if finding.drop_remainder else ""
    return f".batch({size}{extra})"


def _shuffle_call(buffer: int | None) -> str:
    return f".shuffle({buffer if buffer is not None else '...'})"


# ---------------------------------------------------------------------- the notes
@dataclass
class _Used:
    """A dataset used during the cell: its chain's links (weakly: a link the learner
    did not name may be gone after the cell), their kinds, and what was found."""

    links: list[weakref.ReferenceType[Any] | None]
    kinds: list[str | None]
    findings: list[Finding]


def _in_keras_fit() -> bool:
    """Whether a Keras ``fit`` is on the stack (the iterator is made to train)."""
    try:
        frame = sys._getframe(2)
    except ValueError:
        return False
    for _ in range(MAX_STACK):
        if frame is None:
            return False
        code = frame.f_code
        if code.co_name == "fit" and "keras" in code.co_filename:
            return True
        frame = frame.f_back
    return False


def _weak(link: Any) -> weakref.ReferenceType[Any] | None:
    try:
        return weakref.ref(link)
    except TypeError:
        return None


class OrderChecker:
    """The datasets used during a cell, checked when used (once per pass, never per
    batch); told after the cell, each wrong link once per kernel."""

    def __init__(self) -> None:
        self._seen: set[int] = set()
        self._used: list[_Used] = []
        self._reported: dict[tuple[int, str], weakref.ReferenceType[Any]] = {}
        self._unshuffled_told: set[tuple[int, int, int]] = set()

    def begin_cell(self) -> None:
        self._seen = set()
        self._used = []

    def used(self, dataset: Any) -> None:
        """Called by ``OwnedIterator.__init__``: one walk of the chain per dataset and
        cell (a set lookup for a dataset already seen)."""
        key = id(dataset)
        if key in self._seen or len(self._seen) >= MAX_USED_PER_CELL:
            return
        self._seen.add(key)
        chain = chain_of(dataset)
        if len(chain) < 2 and not (chain and operation(chain[0]) == ZIP):
            return
        findings = findings_in(chain)
        unshuffled = self._unshuffled_sorted(chain)
        if unshuffled is not None:
            findings.append(unshuffled)
        if findings:
            kinds = [operation(link) for link in chain]
            self._used.append(_Used([_weak(link) for link in chain], kinds, findings))

    def _unshuffled_sorted(self, chain: list[Any]) -> Finding | None:
        """A batched chain with no shuffle over labels stored sorted, that a Keras
        ``fit`` is about to train on; one per cell."""
        if any(f.kind == UNSHUFFLED_SORTED for used in self._used for f in used.findings):
            return None
        kinds = [operation(link) for link in chain]
        if SHUFFLE in kinds or BATCH not in kinds:
            return None
        rows = _source_rows(chain)
        if rows is None or not _in_keras_fit():
            return None
        runs = _sorted_labels(chain, rows)
        if runs is None:
            return None
        # The same data rebuilt by a helper for every fit (a new dataset object each time)
        # is told once per kernel: its rows, labels and shortest run identify it.
        signature = (rows, runs.classes, runs.shortest)
        if signature in self._unshuffled_told or len(self._unshuffled_told) >= MAX_REPORTED:
            return None
        self._unshuffled_told.add(signature)
        at = kinds.index(BATCH)
        return Finding(
            UNSHUFFLED_SORTED,
            at,
            -1,
            rows,
            batch_size=_number(_scalar(chain[at], "_batch_size")),
            labels=runs,
        )

    def assigned(self, namespace: dict[str, Any], cell_source: str) -> None:
        """The take/skip splits and the cached pipelines this cell's top-level statements
        assign, checked before any use: a split of a reshuffling shuffle, and a cache after
        a random map or a reshuffling shuffle, are told in the cell that writes them (the
        pipeline is often built in one cell and only given to ``fit`` several cells later)."""
        splits = ".take(" in cell_source or ".skip(" in cell_source
        caches = ".cache(" in cell_source
        windows = ".window(" in cell_source and ".shuffle(" in cell_source
        if not splits and not caches and not windows:
            return
        wanted = {RESHUFFLED_SPLIT} if splits else set()
        if caches:
            wanted |= {RANDOM_MAP_THEN_CACHE, SHUFFLE_THEN_CACHE}
        if windows:
            wanted.add(SHUFFLED_STEPS)
        if len(cell_source) > MAX_SOURCE:
            return
        # Imported here: the error families import this module, and syntax imports them.
        from jupyterlab_tfcoach.monitor.syntax import parsed_source

        tree = parsed_source(cell_source)
        if tree is None:
            return
        for name in _assigned_names(tree)[:MAX_USED_PER_CELL]:
            value = namespace.get(name)
            if operation(value) is None or id(value) in self._seen:
                continue
            chain = chain_of(value)
            kinds = [operation(link) for link in chain]
            if (
                TAKE not in kinds
                and SKIP not in kinds
                and CACHE not in kinds
                and WINDOW not in kinds
            ):
                continue
            findings = [f for f in findings_in(chain) if f.kind in wanted]
            if findings:
                self._seen.add(id(value))
                self._used.append(_Used([_weak(link) for link in chain], kinds, findings))

    def take_notes(self, namespace: dict[str, Any], cell_source: str) -> list[Note]:
        try:
            self.assigned(namespace, cell_source)
        except Exception:
            pass
        used, self._used, self._seen = self._used, [], set()
        notes: list[Note] = []
        names: dict[int, str] | None = None
        for item in used:
            links = [ref() if ref is not None else None for ref in item.links]
            for finding in item.findings:
                link = links[finding.at]
                if finding.kind == RESHUFFLED_SPLIT:
                    finding.partner = split_partner(link, item.kinds[finding.other], namespace)
                    if finding.partner is None or link is None:
                        continue
                if link is not None:
                    key = (id(link), finding.kind)
                    known = self._reported.get(key)
                    if known is not None and known() is link:
                        continue
                    if len(self._reported) >= MAX_REPORTED:
                        self._reported.pop(next(iter(self._reported)))
                    reference = _weak(link)
                    if reference is not None:
                        self._reported[key] = reference
                if names is None:
                    names = _dataset_names(namespace)
                if finding.kind == SHUFFLED_STEPS:
                    text = _shuffled_steps_text(
                        finding, links, names, _labelled_sources(namespace, cell_source)
                    )
                else:
                    text = _note_text(finding, links, names, _sources(namespace, cell_source))
                notes.append(reports.note(text, ORDER_SECTION))
                if len(notes) >= MAX_NOTES:
                    return notes
        return notes


def _assigned_names(tree: ast.Module) -> list[str]:
    """The names a cell's top-level assignments bind (``a, b = ds.take(n), ds.skip(n)``
    too), in order."""
    names: list[str] = []
    for statement in tree.body:
        if not isinstance(statement, ast.Assign):
            continue
        for target in statement.targets:
            elements = target.elts if isinstance(target, ast.Tuple) else [target]
            names.extend(e.id for e in elements if isinstance(e, ast.Name))
    return names


def _dataset_names(namespace: dict[str, Any]) -> dict[int, str]:
    names: dict[int, str] = {}
    for name, value in list(namespace.items())[:MAX_NAMESPACE]:
        if type(name) is str and not name.startswith("_") and operation(value) is not None:
            names.setdefault(id(value), name)
    return names


def _sources(namespace: dict[str, Any], cell_source: str) -> list[str]:
    """This cell's source, then earlier cells' (IPython's ``In`` list), latest first."""
    history = namespace.get("In")
    earlier = history[-MAX_HISTORY_CELLS:] if type(history) is list else []
    return [cell_source, *reversed([s for s in earlier if type(s) is str])]


def _labelled_sources(namespace: dict[str, Any], cell_source: str) -> list[tuple[str, str]]:
    """This cell's source, then earlier cells', each with how a note names it: ``this
    cell``, ``cell In[4]``."""
    found = [(cell_source, "this cell")]
    history = namespace.get("In")
    if type(history) is list:
        last = len(history) - 1
        for index in range(last, max(0, last - MAX_HISTORY_CELLS), -1):
            text = history[index]
            if type(text) is str and text.strip() != cell_source.strip():
                found.append((text, f"cell In[{index}]"))
    return found


def _named(links: list[Any], names: dict[int, str], at: int) -> str | None:
    """The learner's name for the dataset the link at ``at`` belongs to: the nearest
    named link above it (toward the used end), else the nearest below."""
    order = [*range(at, -1, -1), *range(at + 1, len(links))]
    for i in order:
        link = links[i]
        if link is not None and id(link) in names:
            return names[id(link)]
    return None


def _note_text(
    finding: Finding, links: list[Any], names: dict[int, str], sources: list[str]
) -> str:
    name = _named(links, names, finding.at)
    called = f"`{name}`" if name else "this dataset"
    written = statement_chain(name, sources) if name else None
    statement = fixed_statement(finding, written) if written is not None else None
    kind = finding.kind
    if kind == SHUFFLED_APART:
        text = (
            f"{called} zips datasets that were shuffled each on its own: each shuffle "
            "draws its own random order, so the i-th features are paired with another "
            "row's label and the model learns from mismatched pairs, silently. Zip the "
            "unshuffled datasets first, then shuffle the pairs once"
        )
        zipped = zip_first_statement(name, sources) if name else None
        return _with_fix(text, "Dataset.zip((...)).shuffle(...)", zipped)
    if kind == SHORTER_ZIP:
        return _shorter_zip_text(finding, called, name, names, sources)
    if kind == BATCH_THEN_SHUFFLE:
        wrong = _batch_call(finding) + _shuffle_call(finding.buffer)
        size = finding.batch_size
        rows = f"{size} consecutive rows" if size is not None else "consecutive rows"
        buffer = finding.buffer
        if finding.rows is not None and (buffer is None or buffer < finding.rows):
            buffer = finding.rows
        right = _shuffle_call(buffer) + _batch_call(finding)
        text = (
            f"{called} shuffles after it batches (`{wrong}`): shuffle then reorders whole "
            f"batches, and each batch still holds {rows} in their original order (rows "
            "sorted by label give batches of a single label), silently. Shuffle the rows "
            "first, then batch"
        )
        return _with_fix(text, right, statement)
    if kind == SHUFFLE_THEN_CACHE:
        wrong = _shuffle_call(finding.buffer) + ".cache()"
        right = ".cache()" + _shuffle_call(finding.buffer)
        text = (
            f"{called} caches after it shuffles (`{wrong}`): the cache keeps the rows in the "
            "order of the first pass and replays that order, so every epoch sees the same "
            "order and the shuffle never reshuffles. Cache first, then shuffle"
        )
        return _with_fix(text, right, statement)
    if kind == RANDOM_MAP_THEN_CACHE:
        text = (
            f"{called} caches after a map that draws random numbers (an augmentation, "
            "`.map(...).cache()`): the cache keeps the elements of the first pass, so every "
            "epoch replays the same augmented examples and the augmentation adds no "
            "variety. Cache before the random map"
        )
        return _with_fix(text, ".cache().map(...)", statement)
    if kind == BUFFER_OF_ONE:
        text = (
            f"{called} shuffles with a buffer of 1 (`.shuffle(1)`): shuffle picks each row "
            "at random from a buffer of that many rows, so a buffer of 1 returns the rows "
            "in their original order and nothing is shuffled. Use a buffer as large as "
            "the dataset"
        )
        if finding.rows is None:
            return text + "."
        return _with_fix(text, _shuffle_call(finding.rows), statement)
    if kind == UNSHUFFLED_SORTED and finding.labels is not None:
        runs = finding.labels
        batch = f".batch({finding.batch_size})" if finding.batch_size else ".batch(...)"
        text = (
            f"fit trains on {called}, which batches {finding.rows} rows whose labels are "
            f"stored sorted ({runs.classes} labels, each in one run of rows) and never "
            "shuffles them (fit does not shuffle a tf.data dataset): every epoch walks "
            "through the labels in order, most batches hold a single label, and the model "
            "follows whichever label it saw last, silently. Shuffle the rows before "
            "batching, with a buffer as large as the dataset"
        )
        fixed = _unshuffled_fixed(written, finding) if written is not None else None
        return _with_fix(text, f".shuffle({finding.rows}){batch}", fixed)
    if kind == SMALL_BUFFER_SORTED and finding.labels is not None:
        runs = finding.labels
        text = (
            f"{called} shuffles {finding.rows} rows whose labels are stored sorted "
            f"({runs.classes} labels, each in one run of {runs.shortest} rows or more) with "
            f"a buffer of {finding.buffer} (`.shuffle({finding.buffer})`): shuffle draws "
            f"each row from the next {finding.buffer} rows only, so nearly every batch holds "
            "a single label and each epoch walks through the labels in order; the model "
            "follows whichever label it saw last, silently. Use a buffer as large as the "
            "dataset"
        )
        return _with_fix(text, _shuffle_call(finding.rows), statement)
    # The learner's name for the split: the take/skip itself or a dataset built on it
    # (``holdout = pairs.take(4).batch(2)`` names the batch above the take).
    split = next(
        (
            names[id(link)]
            for link in links[finding.other :: -1]
            if link is not None and id(link) in names
        ),
        None,
    )
    splits = f"`{split}`" if split else "one split"
    partner = f"`{finding.partner}`" if finding.partner else "the other split"
    text = (
        f"{splits} and {partner} split {called} with `.take()`/`.skip()`, but its "
        "`.shuffle()` reshuffles on every pass (`reshuffle_each_iteration=True`, the "
        "default): each split, each epoch, draws from a different permutation, so the "
        "splits overlap (rows of one also appear in the other) and some rows are in "
        "neither. Shuffle once, in a fixed order"
    )
    right = ".shuffle(..., reshuffle_each_iteration=False)"
    return _with_fix(text, right, statement)


def _shorter_zip_text(
    finding: Finding, called: str, name: str | None, names: dict[int, str], sources: list[str]
) -> str:
    parts: list[tuple[str | None, int, str]] = []
    for reference, length in finding.parts or []:
        component = reference() if reference is not None else None
        label = names.get(id(component)) if component is not None else None
        unit = "batches" if component is not None and is_batched(component) else "elements"
        parts.append((label, length, unit))
    shortest = min(length for _, length, _ in parts)
    longest = max(length for _, length, _ in parts)
    described = [
        f"`{label}` ({length} {unit})" if label else f"a dataset of {length} {unit}"
        for label, length, unit in parts
    ]
    longer = [label for label, length, _ in parts if length == longest]
    lost = f"`{longer[0]}`" if len(longer) == 1 and longer[0] else "the longest"
    text = (
        f"{called} zips {' with '.join(described)}: `Dataset.zip` stops as soon as its "
        f"shortest dataset runs out, so one pass over it yields {shortest} elements and "
        f"the other {longest - shortest} of {lost} are never read, silently. Repeat the "
        "shorter dataset so that the longest sets the length of a pass"
    )
    shorter = [label for label, length, _ in parts if length < longest]
    statement = None
    if name is not None and shorter and all(shorter):
        statement = zip_repeated_statement(name, [s for s in shorter if s], sources)
    fragment = f"{shorter[0]}.repeat()" if len(shorter) == 1 and shorter[0] else ".repeat()"
    return _with_fix(text, fragment, statement)


def zip_repeated_statement(name: str, shorter: list[str], sources: list[str]) -> str | None:
    """The last one-line ``name = ...zip(...)`` whose zip names every dataset of
    ``shorter`` as a plain argument, each written ``d.repeat()`` instead."""

    def repeated(node: ast.Assign, source: str) -> str | None:
        written = ast.get_source_segment(source, node)
        if not written or "\n" in written:
            return None
        return _repeated_in_zip(node, written, shorter)

    return _last_rewritten(name, sources, repeated)


def _repeated_in_zip(statement: ast.Assign, written: str, shorter: list[str]) -> str | None:
    start = statement.col_offset
    for call in ast.walk(statement.value):
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "zip"
            and call.args
        ):
            continue
        single = len(call.args) == 1 and isinstance(call.args[0], (ast.Tuple, ast.List))
        elements = call.args[0].elts if single else call.args  # type: ignore[attr-defined]
        targets = [e for e in elements if isinstance(e, ast.Name) and e.id in shorter]
        if len({e.id for e in targets}) != len(set(shorter)) or len(targets) != len(shorter):
            continue
        fixed = written
        for element in sorted(targets, key=lambda e: e.col_offset, reverse=True):
            begin = element.col_offset - start
            end = (element.end_col_offset or 0) - start
            if begin < 0 or fixed[begin:end] != element.id:
                return None
            fixed = f"{fixed[:end]}.repeat(){fixed[end:]}"
        return fixed
    return None


def _with_fix(text: str, fragment: str, statement: str | None) -> str:
    if statement is not None:
        return f"{text}: `{statement}`."
    return f"{text} (`{fragment}`)."


# ``overlapping_splits.py`` reads a take/skip count the same way.
scalar = _scalar


# ------------------------------------------------------------- steps shuffled, then windowed
def _chain_methods(node: ast.AST) -> list[str]:
    """The dataset methods a statement's value calls, outermost last (``a.shuffle(k)
    .window(n)`` -> ``["shuffle", "window"]``)."""
    calls: list[str] = []
    value = node.value if isinstance(node, ast.Assign) else None
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        calls.append(value.func.attr)
        value = value.func.value
    return list(reversed(calls))


def _target(node: ast.stmt) -> str | None:
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        return target.id if isinstance(target, ast.Name) else None
    return None


@dataclass
class _Move:
    """Lines ``first``-``last`` (a shuffle statement, or the ``if`` holding only it) to
    move below line ``below`` (the statement that turns the windows into tensors)."""

    first: int
    last: int
    below: int
    moved: list[str]
    below_text: str
    where: str
    function: str | None = None  # the def the statements are in


def _blocks(tree: ast.Module) -> list[list[ast.stmt]]:
    found: list[list[ast.stmt]] = [tree.body]
    for node in ast.walk(tree):
        for field_name in ("body", "orelse"):
            body = getattr(node, field_name, None)
            if node is not tree and type(body) is list and body and isinstance(body[0], ast.stmt):
                found.append(body)
    return found


def _moved_shuffle(labelled: list[tuple[str, str]]) -> _Move | tuple[str, str, str] | None:
    """Where the learner wrote the shuffle under the window: a move of its statement below
    the one that flattens the windows, or ``(statement fixed, where, line)`` when one
    chain statement holds both."""
    for source, where in labelled:
        if ".window(" not in source or ".shuffle(" not in source or len(source) > MAX_SOURCE:
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError):
            continue
        lines = source.splitlines()
        for block in _blocks(tree):
            for index, statement in enumerate(block):
                unit: ast.stmt = statement
                shuffle = statement
                if (
                    isinstance(statement, ast.If)
                    and len(statement.body) == 1
                    and not statement.orelse
                ):
                    shuffle = statement.body[0]
                methods = _chain_methods(shuffle)
                if "shuffle" not in methods:
                    continue
                name = _target(shuffle)
                if "window" in methods[methods.index("shuffle") :]:
                    fixed = _one_chain_fixed(shuffle, source)
                    if fixed is not None:
                        return fixed, where, str(shuffle.lineno)
                    continue
                for later in block[index + 1 :]:
                    kinds = _chain_methods(later)
                    if _target(later) != name:
                        continue
                    if "window" in kinds and "flat_map" not in kinds:
                        continue
                    if "flat_map" in kinds or "interleave" in kinds:
                        end = unit.end_lineno or unit.lineno
                        enclosing = [
                            f
                            for f in ast.walk(tree)
                            if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
                            and f.lineno <= unit.lineno <= (f.end_lineno or f.lineno)
                        ]
                        return _Move(
                            unit.lineno,
                            end,
                            later.end_lineno or later.lineno,
                            lines[unit.lineno - 1 : end],
                            ast.get_source_segment(source, later) or "",
                            where,
                            max(enclosing, key=lambda f: f.lineno).name if enclosing else None,
                        )
                    if "window" not in kinds and kinds:
                        continue
                    break
    return None


def _one_chain_fixed(statement: ast.stmt, source: str) -> str | None:
    """``ds = src.shuffle(k).window(n).flat_map(f)`` written as ``ds = src.window(n)
    .flat_map(f).shuffle(k)``: the shuffle after the link that flattens the windows."""
    written = ast.get_source_segment(source, statement)
    name = _target(statement)
    if not written or "\n" in written or name is None:
        return None
    calls: list[tuple[str, str]] = []
    value = statement.value  # type: ignore[attr-defined]
    while (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in _CHAIN_METHODS | {"window"}
    ):
        calls.append((value.func.attr, _arguments(value, source)))
        value = value.func.value
    calls.reverse()
    methods = [m for m, _ in calls]
    if "shuffle" not in methods or "flat_map" not in methods:
        return None
    flat = max(i for i, m in enumerate(methods) if m == "flat_map")
    shuffle = methods.index("shuffle")
    if shuffle > flat:
        return None
    moved = calls.pop(shuffle)
    calls.insert(flat, moved)
    base = ast.get_source_segment(source, value) or ast.unparse(value)
    return Chain(name, base, calls).text(calls)


def _shuffled_steps_text(
    finding: Finding, links: list[Any], names: dict[int, str], labelled: list[tuple[str, str]]
) -> str:
    name = _named(links, names, finding.at)
    called = f"`{name}`" if name else "this dataset"
    size = finding.window_size
    shift = finding.window_shift
    cut = f"windows of {size} steps" if size is not None else "its windows"
    if shift is not None:
        cut += f" (shift {shift})"
    buffer = f" with a buffer of {finding.buffer}" if finding.buffer is not None else ""
    text = (
        f"{called} shuffles single time steps{buffer} before `window` cuts them into "
        f"{cut}: each window is then a bag of steps drawn from far-apart times in a random "
        "order, not a stretch of the series, so the model learns from sequences that never "
        "happened and its targets no longer follow its inputs. Nothing raises. Cut the "
        "windows first, then shuffle whole windows"
    )
    found = _moved_shuffle(labelled)
    if isinstance(found, tuple):
        fixed, where, line = found
        return f"{text}: `{fixed}` (line {line} of {where})."
    if isinstance(found, _Move):
        lines = (
            f"line {found.first}"
            if found.first == found.last
            else (f"lines {found.first}-{found.last}")
        )
        moved = " / ".join(f"`{line.strip()}`" for line in found.moved)
        inside = f"in `{found.function}`: " if found.function else ""
        return (
            f"{text}. Fix: move {lines} of {found.where} ({inside}{moved}) to just below line "
            f"{found.below} (`{found.below_text.strip()}`), at the same indentation."
        )
    return f"{text} (`.window(...).flat_map(...).shuffle(...)`)."
