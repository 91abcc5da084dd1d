from __future__ import annotations

from jupyterlab_tfcoach.analysis.findings import Severity
from jupyterlab_tfcoach.analysis.testing import check, check_cells, span

CODE = "TFC007"


def test_module_level_persistent_tape_never_deleted():
    source = """\
        import tensorflow as tf
        with tf.GradientTape(persistent=True) as tape:
            y = x * x
        a = tape.gradient(y, x)
        """
    [finding] = check(source, CODE)
    assert finding.severity is Severity.HINT
    assert span(finding) == (2, 6, 2, 46)
    assert "`tape`" in finding.message and "del tape" in finding.message


def test_assignment_form_under_alias_and_positional_flag():
    source = """\
        from tensorflow import GradientTape
        recorder = GradientTape(True)
        with recorder:
            y = x * x
        """
    [finding] = check(source, CODE)
    assert span(finding) == (2, 1, 2, 30)


def test_notebook_cells():
    cells = [
        "import tensorflow as t",
        "with t.GradientTape(persistent=True) as g:\n    y = x * x",
        "g.gradient(y, x)",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (1, 1, 6, 1, 42)


def test_released_or_function_level_tapes_are_silent():
    source = """\
        import tensorflow as tf
        with tf.GradientTape(persistent=True) as tape:
            y = x * x
        tape.gradient(y, x)
        del tape

        with tf.GradientTape(persistent=True) as other:
            y = x * x
        other = None

        def inside(x):
            with tf.GradientTape(persistent=True) as tape:
                y = x * x
            return tape.gradient(y, x)

        with tf.GradientTape() as plain:
            y = x * x

        with tf.GradientTape(persistent=True):
            y = x * x
        """
    assert check(source, CODE) == []
