"""Precision: correct TensorFlow code, written the ways people write it, gets no finding.

The corpus under ``data/rules/correct_corpus`` is realistic, correct TF 2 / Keras 3 code
(training loops, layers, tf.data, tapes, signatures, notebooks) plus look-alikes that
resemble each pitfall closely. Every file must stay silent; a probe appended to each one
proves the file really was analysed, and the near-miss cases at the bottom prove the rules
still fire just past the edge of what the corpus does.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from jupyterlab_tfcoach.analysis import Config, analyze_cells, analyze_path, analyze_source

CORPUS = Path(__file__).parents[1] / "data" / "rules" / "correct_corpus"
FILES = sorted(p for p in CORPUS.iterdir() if p.suffix in (".py", ".ipynb"))
ALL_RULES = Config()  # every rule, whatever the repository's pyproject.toml says

# Appended to a corpus file: a real TFC001 on the probe's last line.
PROBE = "\n_probe = tf.Variable(1.0)\n_probe = _probe - 1\n"


def _describe(findings: list) -> str:
    return "\n".join(f"{f.line}:{f.column} {f.code} {f.message}" for f in findings)


def test_corpus_is_there():
    assert {p.suffix for p in FILES} == {".py", ".ipynb"}
    assert len(FILES) >= 10
    for path in FILES:  # a noqa comment would hide the very findings this checks for
        assert "noqa" not in path.read_text(encoding="utf-8"), path.name


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_correct_code_has_no_findings(path: Path):
    findings = analyze_path(path, ALL_RULES)
    assert findings == [], _describe(findings)


@pytest.mark.parametrize("path", [p for p in FILES if p.suffix == ".py"], ids=lambda p: p.name)
def test_each_file_is_really_analysed(path: Path):
    source = path.read_text(encoding="utf-8") + PROBE
    findings = analyze_source(source, ALL_RULES)
    assert [(f.code, f.line) for f in findings] == [("TFC001", len(source.splitlines()))]


def test_notebook_is_really_analysed():
    [notebook] = [p for p in FILES if p.suffix == ".ipynb"]
    cells = [
        "".join(cell["source"])
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        if cell["cell_type"] == "code"
    ]
    findings = analyze_cells([*cells, "b = b - 0.1"], ALL_RULES)
    assert [(f.code, f.cell, f.line) for f in findings] == [("TFC001", len(cells), 1)]


# Each snippet sits just past a look-alike in the corpus and must still be reported.
NEAR_MISSES = {
    "augmented assignment on an alias still raises": (
        """\
        import tensorflow as tf

        class Masked(tf.keras.layers.Layer):
            def build(self, shape):
                self.kernel = self.add_weight(shape=shape)

            def call(self, x):
                kernel = self.kernel
                kernel *= 2
                return x @ kernel
        """,
        "TFC001",
    ),
    "watching one tensor does not watch another": (
        """\
        import tensorflow as tf
        a = tf.constant(1.0)
        b = tf.constant(2.0)
        with tf.GradientTape() as tape:
            tape.watch(a)
            loss = a * b
        grads = tape.gradient(loss, [a, b])
        """,
        "TFC008",
    ),
    "positional int dtype against a float tensor": (
        """\
        import tensorflow as tf
        noise = tf.random.uniform([3], 0, 10, tf.int32)
        mixed = noise * tf.constant([0.5, 0.5, 0.5])
        """,
        "TFC009",
    ),
    "the same function re-created on every iteration": (
        """\
        import tensorflow as tf
        for m in models:
            step = tf.function(train_step)
            step(m)
        """,
        "TFC005",
    ),
    "a tape made before the loop is reused across iterations": (
        """\
        import tensorflow as tf

        def train(model, batches, x):
            with tf.GradientTape() as tape:
                loss = model(x)
            for batch in batches:
                if batch is None:
                    tape.gradient(loss, model.trainable_variables)
                    continue
                tape.gradient(2 * loss, model.trainable_variables)
        """,
        "TFC006",
    ),
    "print outside the eager-only branch": (
        """\
        import tensorflow as tf

        @tf.function
        def step(x):
            if tf.executing_eagerly():
                tf.print(x)
            else:
                print(x)
            return x
        """,
        "TFC002",
    ),
    "appending a tensor to an outer list": (
        """\
        import tensorflow as tf
        seen = []

        @tf.function
        def step(x):
            seen.append(tf.Variable(x).read_value())
            return x
        """,
        "TFC003",
    ),
}


@pytest.mark.parametrize("case", sorted(NEAR_MISSES))
def test_near_misses_still_fire(case: str):
    source, code = NEAR_MISSES[case]
    codes = [f.code for f in analyze_source(textwrap.dedent(source), ALL_RULES)]
    assert code in codes
