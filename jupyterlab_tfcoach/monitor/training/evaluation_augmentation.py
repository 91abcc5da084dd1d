"""Random augmentation applied to the data a Keras model is evaluated on.

A ``Dataset.map`` that draws random numbers (flips, crops, noise, Keras 3's random
layers: ``symptoms/random_maps.py``) belongs to the training pipeline. Applied to the
data given to ``evaluate`` (or to fit's ``validation_data``), it measures the model on
randomly altered examples: the loss and metrics are noisier and lower than on the real
test data, change from one call to the next, and nothing raises. ``fit_watch``'s hooks
hand each ``evaluate``'s data (and fit's ``validation_data``) here, once per call: its
chain of transformations is walked (``dataset_order.chain_of``: instance ``__dict__``s
only, at most 64 links) and a random map in it is recorded, weakly. ``predict`` is not
read: averaging predictions over augmented copies (test-time augmentation) is a
technique.

A dataset already told in the cell that built it (``symptoms/evaluation_pipelines.py``)
is not told again. A dataset whose name has a word of training data (``train_ds``: the
training pipeline, evaluated on purpose) is not told. The note names the call, the
dataset and the map; fix: the learner's statement that built the dataset with that map
removed, when the statement holds exactly one map
(``test_ds = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(32)``).
Nothing here imports TensorFlow or prints; every failure of our own work is swallowed.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.dataset_order import (
    MAP,
    chain_of,
    operation,
    statement_chain,
)
from jupyterlab_tfcoach.monitor.symptoms.evaluation_loops import TRAINING_WORDS
from jupyterlab_tfcoach.monitor.symptoms.evaluation_pipelines import told_when_built
from jupyterlab_tfcoach.monitor.symptoms.random_maps import is_augmenting_map

SECTION = "tf-data"
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
MAX_RECORDS = 4
MAX_HISTORY_CELLS = 30


@dataclass
class Augmented:
    model_id: int
    method: str  # "evaluate" or "fit" (its validation_data)
    links: list[weakref.ReferenceType[Any]]  # the chain, from the data given down


@dataclass
class CellAugmentation:
    records: list[Augmented] = field(default_factory=list)


class AugmentationWatcher:
    def __init__(self) -> None:
        self._cell = CellAugmentation()

    def begin_cell(self) -> None:
        self._cell = CellAugmentation()

    def take(self) -> CellAugmentation:
        cell, self._cell = self._cell, CellAugmentation()
        return cell

    def evaluated_on(self, method: str, model: Any, data: Any) -> None:
        if data is None or operation(data) is None or len(self._cell.records) >= MAX_RECORDS:
            return
        chain = chain_of(data)
        if not any(operation(link) == MAP and is_augmenting_map(link) for link in chain):
            return
        links = []
        for link in chain:
            try:
                links.append(weakref.ref(link))
            except TypeError:
                return
        self._cell.records.append(Augmented(id(model), method, links))


def _sources(namespace: Mapping[str, Any], cell_source: str) -> list[str]:
    history = namespace.get("In")
    earlier = history[-MAX_HISTORY_CELLS:] if type(history) is list else []
    return [cell_source, *reversed([s for s in earlier if type(s) is str])]


def _note(record: Augmented, namespace: Mapping[str, Any], cell_source: str) -> Note | None:
    links = [ref() for ref in record.links]
    if links and links[0] is not None and told_when_built(links[0]):
        return None  # told in the cell that built it (symptoms/evaluation_pipelines.py)
    model = name_bound_to(record.model_id, namespace)
    name = next((n for link in links if (n := name_bound_to(id(link), namespace))), None)
    if model is None or name is None:
        return None
    if {w.lower() for w in _WORD.findall(name)} & TRAINING_WORDS:
        return None  # the training pipeline evaluated on purpose: its augmentation belongs
    how = (
        f"`{model}.evaluate` measures `{model}` on `{name}`"
        if record.method == "evaluate"
        else f"`{model}.fit` validates `{model}` on `{name}` (validation_data)"
    )
    text = (
        f"{how}, whose pipeline has a map that draws random numbers (an augmentation): "
        f"the model is scored on randomly altered examples, not on the data itself, so "
        f"the loss and metrics are noisier and usually worse than on the real test data, "
        f"and differ from one run to the next. Nothing raises. Augment the training "
        f"data only"
    )
    chain = statement_chain(name, _sources(namespace, cell_source))
    maps = [i for i, call in enumerate(chain.calls) if call[0] == "map"] if chain else []
    if chain is not None and len(maps) == 1:
        calls = [call for i, call in enumerate(chain.calls) if i != maps[0]]
        text += f": build `{name}` without the random map, `{chain.text(calls)}`."
    else:
        text += f": build `{name}` without the random map."
    return reports.note(text, SECTION)


def augmentation_notes(
    cell: CellAugmentation | None, namespace: Mapping[str, Any], cell_source: str
) -> list[Note]:
    notes: list[Note] = []
    told: set[tuple[int, int]] = set()
    for record in cell.records if cell is not None else []:
        key = (record.model_id, id(record.links[0]()))
        if key in told:
            continue
        told.add(key)
        try:
            note = _note(record, namespace, cell_source)
        except Exception:
            note = None
        if note is not None:
            notes.append(note)
    return notes
