from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import FixCase, check, check_cells, fixed, span

CODE = "TFC025"

# Runnable: a converted function doubling and summing a row; without invoke() the output
# buffer is never written and every row reads the same stale numbers.
ROWS = """\
import numpy as np
import tensorflow as tf

@tf.function(input_signature=[tf.TensorSpec([1, 3], tf.float32)])
def double_sum(x):
    return tf.reduce_sum(2.0 * x, axis=1, keepdims=True)

converter = tf.lite.TFLiteConverter.from_concrete_functions(
    [double_sum.get_concrete_function()], double_sum
)
runner = tf.lite.Interpreter(model_content=converter.convert())
runner.allocate_tensors()
source = runner.get_input_details()[0]["index"]
target = runner.get_output_details()[0]["index"]
results = []
for row in np.arange(6, dtype=np.float32).reshape(2, 3):
    runner.set_tensor(source, row[None, :])
    results.append(float(runner.get_tensor(target)[0, 0]))
print(results)
"""
FIX_CASES = (
    FixCase(
        CODE,
        ROWS,
        ROWS.replace("    results.append(", "    runner.invoke()\n    results.append("),
        "a loop over rows",
    ),
)


def test_an_output_read_in_a_method_without_running_the_model():
    source = """\
        import tensorflow as tf

        class EdgeModel:
            def __init__(self, blob):
                self.engine = tf.lite.Interpreter(model_content=blob)
                self.engine.allocate_tensors()

            def score(self, batch, slot_in, slot_out):
                self.engine.set_tensor(slot_in, batch)
                scores = self.engine.get_tensor(slot_out)
                return scores
        """
    [finding] = check(source, CODE)
    assert span(finding) == (10, 18, 10, 50)
    assert finding.message == (
        "`self.engine.get_tensor(slot_out)` reads the output after "
        "`self.engine.set_tensor(slot_in, batch)` with no `self.engine.invoke()` in between: "
        "set_tensor only copies the input, so the model has not run on it and what `scores` "
        "receives is stale (zeros, or the previous run's result). Call "
        "`self.engine.invoke()` before `get_tensor`"
    )
    assert fixed(source, finding).splitlines()[8:11] == [
        "        self.engine.set_tensor(slot_in, batch)",
        "        self.engine.invoke()",
        "        scores = self.engine.get_tensor(slot_out)",
    ]


def test_notebook_cells_with_the_interpreter_made_in_an_earlier_cell():
    cells = [
        "from ai_edge_litert.interpreter import Interpreter\n"
        "lite = Interpreter(model_path='m.tflite')\n"
        "import tensorflow as tf",
        "answers = [None] * 4\n"
        "for k in range(4):\n"
        "    lite.set_tensor(0, samples[k:k + 1])\n"
        "    answers[k] = lite.get_tensor(7)",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, finding.line) == (1, 4)
    assert finding.fix is not None
    assert [edit.new_text for edit in finding.fix.edits] == ["    lite.invoke()\n"]
    assert "what `answers` receives is stale" in finding.message


def test_invoked_or_handed_on_interpreters_and_other_objects_stay_quiet():
    source = """\
        import tensorflow as tf

        interp = tf.lite.Interpreter(model_path="m.tflite")
        interp.allocate_tensors()

        def run_all(rows):
            out = []
            for r in rows:
                interp.set_tensor(0, r)
                interp.invoke()
                out.append(interp.get_tensor(1))
            return out

        def run_elsewhere(r):
            interp.set_tensor(0, r)
            execute(interp)
            return interp.get_tensor(1)

        def read_then_set(r):
            previous = interp.get_tensor(1)
            interp.set_tensor(0, r)
            return previous

        def not_an_interpreter(store, value):
            store.set_tensor("w", value)
            return store.get_tensor("w")
        """
    assert check(source, CODE) == []
