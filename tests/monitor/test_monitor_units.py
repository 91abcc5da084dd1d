"""Monitor parts that need no TensorFlow: diffs, error texts, the namespace scan, plain IPython."""

from __future__ import annotations

import gc
import sys
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

from jupyterlab_tfcoach.monitor import errors, report
from jupyterlab_tfcoach.monitor.tftypes import TfTypes
from jupyterlab_tfcoach.monitor.traces.signatures import Leaf, closest_differences, differences
from jupyterlab_tfcoach.monitor.variables.namespace_diff import VariableWatcher

TENSOR_F32_3 = Leaf("tensor", dtype="float32", shape="(3,)")


# ------------------------------------------------------------------ signatures
def test_differences_name_each_kind() -> None:
    before = {
        "x": TENSOR_F32_3,
        "y": Leaf("tensor", dtype="float32", shape="(2,)"),
        "n": Leaf("python", value="1"),
        "m": Leaf("python", value="1"),
        "same": Leaf("python", value="'a'"),
    }
    after = {
        "x": Leaf("tensor", dtype="int32", shape="(3,)"),
        "y": Leaf("tensor", dtype="float32", shape="(4,)"),
        "n": Leaf("python", value="2"),
        "m": Leaf("tensor", dtype="int32", shape="()"),
        "same": Leaf("python", value="'a'"),
    }
    found = [(d.kind, d.argument, d.before, d.after) for d in differences(before, after)]
    assert found == [
        ("dtype", "x", "float32", "int32"),
        ("shape", "y", "(2,)", "(4,)"),
        ("python_value", "n", "1", "2"),
        ("kind", "m", "Python value 1", "tensor int32 ()"),
    ]


def test_structure_change_is_one_other_per_argument() -> None:
    before = {"xs[0]": Leaf("python", value="1"), "xs[1]": Leaf("python", value="2")}
    after = {**before, "xs[2]": Leaf("python", value="3")}
    [difference] = differences(before, after)
    assert (difference.kind, difference.argument, difference.before) == ("other", "xs", None)


def test_closest_trace_prefers_fewest_differences_then_most_recent() -> None:
    first = {"x": Leaf("tensor", dtype="float32", shape="(2,)"), "n": Leaf("python", value="1")}
    second = {"x": Leaf("tensor", dtype="float32", shape="(3,)"), "n": Leaf("python", value="1")}
    new = {"x": Leaf("tensor", dtype="float32", shape="(4,)"), "n": Leaf("python", value="1")}
    [difference] = closest_differences([first, second], new) or []
    assert (difference.before, difference.after) == ("(3,)", "(4,)")
    assert closest_differences([], new) is None
    assert closest_differences([first, new], dict(new)) == []


# ---------------------------------------------------------------------- errors
def test_explains_errors_from_their_messages() -> None:
    tape = errors.explain(
        RuntimeError(
            "A non-persistent GradientTape can only be used to compute one set of gradients "
            "(or jacobians)"
        )
    )
    assert tape is not None and tape["type"] == "RuntimeError"
    assert tape["course"] is not None and tape["course"]["section"] == "gradient-tape"

    wrapped = TypeError(
        'in user code:\n\n    File "<cell>", line 3, in add  *\n        return a + b\n\n'
        "    TypeError: Input 'y' of 'MatMul' Op has type float64 that does not match type "
        "float32 of argument 'a'.\n"
    )
    explained = errors.explain(wrapped)
    assert explained is not None
    assert explained["message"].startswith("Input 'y' of 'MatMul' Op has type float64")
    assert "MatMul op inside a tf.function" in explained["explanation"]
    assert "tf.cast(x, tf.float32)" in explained["explanation"]


def test_eager_dtype_names_are_tensorflow_names() -> None:
    class InvalidArgumentError(Exception):
        pass

    # A TF-module exception type, without importing TensorFlow.
    InvalidArgumentError.__module__ = "tensorflow.python.framework.errors_impl"
    explained = errors.explain(
        InvalidArgumentError(
            "cannot compute MatMul as input #1(zero-based) was expected to be a double tensor "
            "but is a float tensor [Op:MatMul] name: "
        )
    )
    assert explained is not None
    assert "is float32 but the op expected float64" in explained["explanation"]


def test_unknown_and_untrusted_errors_are_not_explained() -> None:
    assert errors.explain(None) is None
    assert errors.explain(ZeroDivisionError("division by zero")) is None

    class UserError(ValueError):
        def __str__(self) -> str:
            raise AssertionError("the monitor must not call a user exception's __str__")

    assert errors.explain(UserError()) is None


# --------------------------------------------------------------------- report
def test_format_report() -> None:
    assert "no cell has run" in report.format_report(None)
    empty = report.new_report(3, "cell-a")
    assert "nothing to report" in report.format_report(empty)
    full = report.new_report(4, None)
    full["traces"] = [
        {
            "function": "f",
            "defined_at": "Cell In[2], line 1",
            "new_traces": 1,
            "total_traces": 2,
            "reasons": [
                {
                    "kind": "shape",
                    "argument": "x",
                    "before": "(2,)",
                    "after": "(3,)",
                    "text": "Retraced: shape.",
                }
            ],
            "course": {
                "module": "module-01",
                "section": "retracing",
                "title": "Retracing",
                "url": "u",
            },
        }
    ]
    text = report.format_report(full)
    assert "f (defined at Cell In[2], line 1): 1 new, 2 in total  [course: Retracing]" in text
    assert "- shape: Retraced: shape." in text


# -------------------------------------------------------------- namespace scan
class FakeVariable:
    trainable = True


class FakeTensor:
    pass


class FakeModule:
    def __init__(self) -> None:
        self.a = FakeVariable()
        self.b = FakeVariable()

    @property
    def trainable_variables(self) -> list[Any]:
        return [v for v in vars(self).values() if type(v) is FakeVariable]


class Hostile:
    def __getattribute__(self, name: str) -> Any:
        raise RuntimeError(name)

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    def __hash__(self) -> int:
        raise RuntimeError("hash")

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        raise RuntimeError("class")


def fake_types() -> TfTypes:
    return TfTypes(variable=(FakeVariable,), tensor=(FakeTensor,), tf_module=(FakeModule,))


def test_scan_reports_rebinding_and_holds_no_references() -> None:
    watcher = VariableWatcher(fake_types())
    module = FakeModule()
    namespace: dict[str, Any] = {
        "w": FakeVariable(),
        "m": module,
        "hostile": Hostile(),
        "_private": FakeVariable(),
        **{f"plain_{i}": i for i in range(50)},
    }
    assert watcher.scan(namespace, {}) == ([], [])

    namespace["w"] = FakeTensor()
    namespace["_private"] = FakeTensor()
    module.a = FakeTensor()
    changes, notes = watcher.scan(namespace, {})
    assert [(c["name"], c["change"], c["before"], c["after"]) for c in changes] == [
        ("w", "rebound_to_tensor", "tf.Variable", "tf.Tensor"),
        ("m.a", "attribute_rebound", "tf.Variable", "tf.Tensor"),
        ("m", "trainable_count", 2, 1),
    ]
    assert notes == []
    assert watcher.scan(namespace, {}) == ([], [])

    # A deleted name bound again later to a tensor is not a rebinding.
    namespace["v"] = FakeVariable()
    watcher.scan(namespace, {})
    del namespace["v"]
    watcher.scan(namespace, {})
    namespace["v"] = FakeTensor()
    assert watcher.scan(namespace, {}) == ([], [])

    module_ref = weakref.ref(module)
    del namespace["m"], module
    gc.collect()
    assert module_ref() is None


# --------------------------------------------------------- plain IPython shell
@pytest.fixture
def plain_shell() -> Iterator[Any]:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        yield shell
    finally:
        shell.run_line_magic("unload_ext", "jupyterlab_tfcoach")


@pytest.mark.skipif("tensorflow" in sys.modules, reason="needs a process without TensorFlow")
def test_plain_ipython_without_kernel_or_tensorflow(plain_shell: Any, capsys: Any) -> None:
    plain_shell.run_line_magic("load_ext", "jupyterlab_tfcoach")
    plain_shell.run_cell("x = 1", store_history=True)
    kept = report.last_report()
    assert kept is not None and kept["schema"] == "tfcoach.report/1"
    assert kept["traces"] == [] and kept["error"] is None
    plain_shell.run_cell("1 / 0", store_history=True)
    assert report.last_report()["error"] is None  # type: ignore[index]
    assert "tensorflow" not in sys.modules
    capsys.readouterr()
    plain_shell.run_line_magic("tfcoach", "")
    assert "waiting for `import tensorflow`" in capsys.readouterr().out


@pytest.mark.skipif("tensorflow" in sys.modules, reason="needs a process without TensorFlow")
def test_missing_tensorflow_internals_degrade_to_a_note() -> None:
    from jupyterlab_tfcoach.monitor.locations import CellLocator
    from jupyterlab_tfcoach.monitor.traces.registry import TraceRegistry
    from jupyterlab_tfcoach.monitor.variables.kinds import KindClassifier
    from jupyterlab_tfcoach.monitor.variables.tape_gradients import GradientWatcher

    registry = TraceRegistry(CellLocator(None))
    [note] = registry.install(report_existing_traces=False)
    assert "trace reports are off" in note["text"] and not registry.installed
    assert registry.collect() == ([], [])
    watcher = GradientWatcher(CellLocator(None), KindClassifier(TfTypes.resolve()))
    [note] = watcher.install()
    assert "no gradient notes" in note["text"]
    assert TfTypes.resolve().missing == [
        "tf.Variable",
        "tf.Tensor",
        "tf.Module",
        "keras.Variable",
        "keras.Layer",
        "keras.Model",
    ]
