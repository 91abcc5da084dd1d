"""Reading a cell's own source for variable rebinding: the statements found, the in-place fix
written in the user's names, and cells as IPython runs them (magics, shell lines)."""

from __future__ import annotations

import pytest

from jupyterlab_tfcoach.monitor.variables.rebind_statements import cell_rebinds


@pytest.mark.parametrize(
    ("statement", "fix"),
    [
        ("w = w - lr * g", "w.assign_sub(lr * g)"),
        ("w = w + 0.5", "w.assign_add(0.5)"),
        ("lin.w -= 0.1 * grad_w", "lin.w.assign_sub(0.1 * grad_w)"),
        ("self.b += db", "self.b.assign_add(db)"),
        ("w2 = w2 * (1 - 1e-3)", "w2.assign(w2 * (1 - 1e-3))"),
        ("w2 *= 0.999", "w2.assign(w2 * (0.999))"),
        ("lm.w = tf.clip_by_norm(lm.w, 3.0)", "lm.w.assign(tf.clip_by_norm(lm.w, 3.0))"),
        (
            "self.mean = 0.9 * self.mean + 0.1 * m",
            "self.mean.assign(0.9 * self.mean + 0.1 * m)",
        ),
    ],
)
def test_fix_is_the_same_update_in_place(statement: str, fix: str) -> None:
    [rebind] = cell_rebinds(statement).rebinds
    assert rebind.fix == fix
    assert rebind.statement == statement and rebind.line == 1


def test_what_is_not_a_rebinding() -> None:
    for source in ("y = w - lr * g", "x == x + 1", "total = 0\ncount = 1", "print(w - 1)"):
        assert cell_rebinds(source).rebinds == [], source
    # `w = w.numpy()` reads and rebinds `w`: whether it replaced a variable by a tensor is
    # decided from the values at run time (a NumPy array is not a tensor).
    [numpy] = cell_rebinds("w = w.numpy()").rebinds
    assert numpy.fix == "w.assign(w.numpy())"


def test_creations_and_where_statements_live() -> None:
    source = """class Model:
    def __init__(self):
        self.w = tf.Variable(1.0)

    def step(self, g):
        self.w = self.w - 0.1 * g

b = tf.Variable(0.0)
for _ in range(3):
    b = b - 0.1
"""
    found = cell_rebinds(source)
    assert found.created == {"self.w", "b"}
    assert found.created_attributes == {"w"}
    method, loop = found.rebinds
    assert (method.target, method.in_class, method.in_function, method.line) == (
        "self.w",
        "Model",
        "step",
        6,
    )
    assert (loop.target, loop.in_class, loop.in_function, loop.line) == ("b", None, None, 10)


def test_cells_as_ipython_runs_them() -> None:
    # %%time runs its body: line numbers stay the cell's.
    [rebind] = cell_rebinds("%%time\nw = tf.Variable(1.0)\nw = w - 1.0\n").rebinds
    assert rebind.line == 3
    # Other cell magics are not Python.
    assert cell_rebinds("%%bash\nw = w - 1\n").rebinds == []
    # A shell command continued with a backslash, then Python.
    colab = "!pip install --quiet \\\n    tensorflow-datasets\nv = tf.Variable(1.0)\nv = v + 1.0"
    [rebind] = cell_rebinds(colab).rebinds
    assert (rebind.line, rebind.fix) == (4, "v.assign_add(1.0)")
    # Line magics and help lines are skipped; the rest is still read.
    [rebind] = cell_rebinds("%matplotlib inline\ntf.Variable?\nu = u * 2").rebinds
    assert rebind.line == 3
    # Code IPython would not run gives nothing (and no error).
    assert cell_rebinds("w = w - (").rebinds == []
    assert cell_rebinds("w = w - 1\n" * 200_000).rebinds == []  # over the size cap
