"""Hypothesis-generated Python programs (hypothesmith, from Python's grammar) through
the analysis and the language server's analysis pass: nothing raises but the
documented input error (``AnalysisSyntaxError``, for programs that the grammar
allows but the compiler refuses)."""

from __future__ import annotations

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace import PositionCodec

from jupyterlab_tfcoach.analysis import AnalysisSyntaxError, analyze_source, check_cells
from jupyterlab_tfcoach.analysis.config import Config
from lsp_server.documents import Part, Snapshot
from lsp_server.runner import Analyzer

# Megabyte inputs, generated programs or timing: not in `make test-fast`.
pytestmark = pytest.mark.slow

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
PROGRAMS = hypothesmith.from_grammar(auto_target=False)
# Lines that make the rules run on the generated code (it rarely imports TensorFlow).
TF_LINES = st.sampled_from(
    [
        "import tensorflow as tf\n",
        "w = tf.Variable(1.0)\n",
        "@tf.function\ndef step(x):\n    return x\n",
        "with tf.GradientTape() as tape:\n    y = w * 2\n",
    ]
)


def _tf_program(pieces: list[str]) -> str:
    return "import tensorflow as tf\n" + "".join(pieces)


TF_PROGRAMS = st.lists(st.one_of(PROGRAMS, TF_LINES), max_size=4).map(_tf_program)


def _analyze(source: str) -> None:
    try:
        analyze_source(source)
    except AnalysisSyntaxError:
        pass


@SETTINGS
@given(PROGRAMS)
def test_generated_program(source: str) -> None:
    _analyze(source)


@SETTINGS
@given(TF_PROGRAMS)
def test_generated_program_with_tensorflow(source: str) -> None:
    _analyze(source)


@SETTINGS
@given(st.lists(TF_PROGRAMS, min_size=1, max_size=3))
def test_generated_notebook(cells: list[str]) -> None:
    result = check_cells(cells)
    assert all(0 <= error.cell < len(cells) for error in result.syntax_errors)


@SETTINGS
@given(TF_PROGRAMS)
def test_generated_program_through_the_language_server_pass(source: str) -> None:
    uri = "file:///generated.py"
    snap = Snapshot(uri, 1, (Part(uri, source),), False, None)
    codec = PositionCodec(types.PositionEncodingKind.Utf16)
    result = Analyzer().run(snap, Config(), codec, 0)
    part = result.parts[uri]
    lines = max(len(part.lines), 1)
    for diagnostic in part.diagnostics:
        assert 0 <= diagnostic.range.start.line <= diagnostic.range.end.line <= lines
