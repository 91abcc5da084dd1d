"""What a Keras 3 ``fit``/``evaluate`` logged, against what the learner expected of it.

Keras only warns (``warnings.warn``, easily missed under a progress bar) in two cases
that leave a cell running but doing nothing of what was asked:

- a monitoring callback (``EarlyStopping``, ``ModelCheckpoint(save_best_only=True)``,
  ``ReduceLROnPlateau``) whose ``monitor`` key the logs never had ("Early stopping
  conditioned on metric `val_loss` which is not available"): it never stops, saves or
  lowers the learning rate. When Keras cannot tell the key's direction it raises
  instead, and the error family ``errors/families_compile.CALLBACK_MONITOR`` tells that;
- data with no batches (``ds.take(0)``, a filter that keeps nothing, windows of
  ``timeseries_dataset_from_array`` longer than the series, empty arrays): "Your input
  ran out of data", ``fit`` runs no epoch and ``evaluate`` returns an empty list.

``read_logs`` runs once after each call (``fit_config.FitConfigWatcher.after``): a few
dict reads of what Keras stored (``History.history``, the callback's ``monitor``); the
learner's names and fixes are found by ``logs_notes`` in the cells' source (``ast``),
after the cell. Nothing here imports TensorFlow, runs user code or prints.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.names import name_bound_to
from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.stored_state import contained_values, stored

CALLBACK_SECTION = "callback-mode"
DATA_SECTION = "tf-data"
MONITOR_CALLBACKS = ("EarlyStopping", "ModelCheckpoint", "ReduceLROnPlateau")
MAX_CALLBACKS = 20
MAX_KEYS = 50
MAX_HISTORY_CELLS = 50
_EFFECT = {
    "EarlyStopping": "never stops training",
    "ModelCheckpoint": "never saves a best model",
    "ReduceLROnPlateau": "never lowers the learning rate",
}


@dataclass
class UnseenMonitor:
    """A monitoring callback whose key the logs of its fit never had."""

    callback_id: int
    class_name: str
    monitor: str
    keys: list[str]


@dataclass
class EmptyRun:
    """A fit or evaluate that ran on data with no batches."""

    method: str
    data_id: int | None


_type_mro = type.__dict__["__mro__"].__get__
_type_name = type.__dict__["__name__"].__get__
_type_dict = type.__dict__["__dict__"].__get__


def _keras_class(obj: Any) -> str | None:
    """The monitoring callback class of Keras that ``obj`` is or extends (read through
    ``type``'s own slots: a user's metaclass runs nothing)."""
    for cls in _type_mro(type(obj)):
        module = _type_dict(cls).get("__module__", "")
        name = _type_name(cls)
        if type(module) is str and module.startswith("keras") and name in MONITOR_CALLBACKS:
            return name
    return None


def _given(args: tuple[Any, ...], kwargs: dict[str, Any], name: str, position: int) -> Any:
    if name in kwargs:
        return kwargs[name]
    return args[position] if len(args) > position else None


def read_logs(
    method: str, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any
) -> list[UnseenMonitor | EmptyRun]:
    """The records of one returned ``fit``/``evaluate`` call."""
    records: list[UnseenMonitor | EmptyRun] = []
    data = _given(args, kwargs, "x", 0)
    if method == "evaluate":
        if type(result) is list and not result:
            records.append(EmptyRun(method, id(data) if data is not None else None))
        return records
    history = stored(result, "history") if result is not None else None
    epochs = stored(result, "epoch") if result is not None else None
    if type(history) is not dict or type(epochs) is not list:
        return records
    if not epochs:
        return records  # no epoch asked for (epochs=0, or initial_epoch past it)
    if not history:
        # Keras counts the epochs it looped over even when no batch came: no key logged.
        records.append(EmptyRun(method, id(data) if data is not None else None))
        return records
    keys = [key for key in list(history)[:MAX_KEYS] if type(key) is str]
    given = _given(args, kwargs, "callbacks", 5)
    callbacks = contained_values(given, sequences_only=True) if given is not None else None
    for callback in (callbacks or [])[:MAX_CALLBACKS]:
        class_name = _keras_class(callback)
        monitor = stored(callback, "monitor")
        if class_name is None or type(monitor) is not str or monitor in keys:
            continue
        if class_name == "ModelCheckpoint" and stored(callback, "save_best_only") is not True:
            continue  # it saves every epoch: the monitor is not used
        records.append(UnseenMonitor(id(callback), class_name, monitor, keys))
    return records


# ------------------------------------------------------------------ notes
def cell_sources(namespace: Mapping[str, Any], cell_source: str) -> list[str]:
    """The running cell's source, then the cell history ``In`` newest first."""
    sources = [cell_source]
    history = namespace.get("In")
    if type(history) is list:
        for text in history[::-1][:MAX_HISTORY_CELLS]:
            if type(text) is str and text not in sources:
                sources.append(text)
    return sources


def _monitor_statement(sources: list[str], monitor: str, closest: str) -> tuple[str, bool] | None:
    """The statement that wrote ``monitor="..."`` (newest first), with ``closest`` in its
    place, and whether it is in the running cell."""
    for index, source in enumerate(sources):
        if monitor not in source:
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        for statement in reversed(tree.body):
            for node in ast.walk(statement):
                if not (
                    isinstance(node, ast.keyword)
                    and node.arg == "monitor"
                    and isinstance(node.value, ast.Constant)
                    and node.value.value == monitor
                ):
                    continue
                written = ast.get_source_segment(source, statement)
                literal = ast.get_source_segment(source, node.value)
                if not written or not literal or "\n" in written:
                    return None
                quote = "'" if literal.startswith("'") else '"'
                return written.replace(literal, f"{quote}{closest}{quote}", 1), index == 0
    return None


def _unseen_monitor_note(
    record: UnseenMonitor, namespace: Mapping[str, Any], sources: list[str]
) -> Note:
    name = name_bound_to(record.callback_id, namespace)
    who = f"`{name}` ({record.class_name})" if name else f"The {record.class_name} given to fit"
    listed = ", ".join(f'"{key}"' for key in record.keys)
    text = (
        f'{who} watched monitor="{record.monitor}", a key fit\'s logs never had (they have '
        f"{listed}): Keras only warned, and the callback {_EFFECT[record.class_name]}."
    )
    if record.monitor.startswith("val_") and not any(k.startswith("val_") for k in record.keys):
        text += (
            " The `val_` keys exist only when fit gets validation data "
            "(`validation_split=0.2` for arrays, `validation_data=` for a dataset)."
        )
    close = difflib.get_close_matches(record.monitor, record.keys, n=1, cutoff=0.5)
    if not close and record.monitor.startswith("val_"):
        close = difflib.get_close_matches(record.monitor[4:], record.keys, n=1, cutoff=0.5)
    fixed = _monitor_statement(sources, record.monitor, close[0]) if close else None
    if fixed is not None:
        statement, here = fixed
        again = "" if here else ", then run the fit again"
        lead = " Or watch" if "validation data" in text else " Watch"
        text += f'{lead} a key the logs have, "{close[0]}": `{statement}`{again}.'
    return reports.note(text, CALLBACK_SECTION)


def _empty_run_note(record: EmptyRun, namespace: Mapping[str, Any], sources: list[str]) -> Note:
    data = name_bound_to(record.data_id, namespace)
    what = f"`{data}`" if data else "the data it was given"
    did = (
        "trained on nothing: no loss was logged and the weights did not change"
        if record.method == "fit"
        else "returned an empty list: no loss or metric was computed"
    )
    text = (
        f"{record.method} got no batch from {what}, so it {did} (Keras only warned that "
        f'"your input ran out of data").'
    )
    window = window_shortfall(data, sources, namespace) if data else None
    if window is not None:
        series, length, steps = window
        text += (
            f" `{data}` comes from `timeseries_dataset_from_array` with sequence_length="
            f"{length}, and `{series}` has {steps} steps: no window of {length} fits in it. "
            f"Use a sequence_length of at most {steps}, or a longer series."
        )
    else:
        text += (
            " Check what made it empty: a `take(0)`, a `filter` that keeps nothing, an "
            "empty array, or a `batch(n, drop_remainder=True)` with fewer than n elements."
        )
    return reports.note(text, DATA_SECTION)


def window_shortfall(
    data: str, sources: list[str], namespace: Mapping[str, Any]
) -> tuple[str, int, int] | None:
    """(the series' name, sequence_length, its length) when ``data`` was assigned from
    ``timeseries_dataset_from_array(series, ..., sequence_length=N)`` with a series
    shorter than N."""
    for source in sources:
        if "timeseries_dataset_from_array" not in source or data not in source:
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        for statement in reversed(tree.body):
            if not (
                isinstance(statement, ast.Assign)
                and [getattr(t, "id", None) for t in statement.targets] == [data]
                and isinstance(statement.value, ast.Call)
            ):
                continue
            call = statement.value
            func = call.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called != "timeseries_dataset_from_array" or not call.args:
                return None
            length = next(
                (k.value for k in call.keywords if k.arg == "sequence_length"),
                call.args[2] if len(call.args) > 2 else None,
            )
            series = call.args[0]
            if not (
                isinstance(length, ast.Constant)
                and type(length.value) is int
                and isinstance(series, ast.Name)
            ):
                return None
            value = namespace.get(series.id)
            shape = getattr(value, "shape", None) if type(value).__module__ == "numpy" else None
            steps = shape[0] if type(shape) is tuple and shape else None
            if type(steps) is not int or steps >= length.value:
                return None
            return series.id, length.value, steps
    return None


def logs_notes(
    records: list[UnseenMonitor | EmptyRun], namespace: Mapping[str, Any], cell_source: str
) -> list[Note]:
    """The notes of one cell's records, each callback and each data once."""
    notes: list[Note] = []
    sources = cell_sources(namespace, cell_source)
    told: set[tuple[str, int | None]] = set()
    for record in records:
        key = (
            ("monitor", record.callback_id)
            if isinstance(record, UnseenMonitor)
            else ("empty", record.data_id)
        )
        if key in told:
            continue
        told.add(key)
        try:
            if isinstance(record, UnseenMonitor):
                notes.append(_unseen_monitor_note(record, namespace, sources))
            else:
                notes.append(_empty_run_note(record, namespace, sources))
        except Exception:
            continue
    return notes
