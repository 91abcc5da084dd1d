"""Section ids outlive the modules they were written in (issue #28, the second edition).

The first edition had two modules: ``module-01`` (tensors, variables, graphs) and
``module-02`` (architecture). The second split the first in three (``module-01`` tensors,
``module-02`` tf.function, ``module-03`` gradients and training) and renumbered the
architecture module to ``module-04``. Then module 3's Keras half became a module of its own,
appended as ``module-05`` (no module renumbered: every module id keeps its meaning, so a
link to a module alone, a copied notebook's name or a module's study progress stay right).
Then module 4's sections on numbers and reproducibility became ``module-06``, appended too,
and its input pipeline (``tf-data``, ``tf-data-order``) ``module-07``. Then the modules were
put in reading order, the input pipeline before the modules that feed models with it:
``module-07`` became ``module-05``, ``module-05`` ``module-06`` and ``module-06``
``module-07``. Then the Keras module, two sittings long, was split in two: models and layers
kept ``module-06``, training with ``fit`` became ``module-07`` and numerics ``module-08``
(``course.MODULES_RENUMBERED``, one entry per renumbering, which the study store follows).
Rules, hover cards, the monitor, SARIF files, reports kept by the server and learners'
bookmarks name sections by id, and links made before a move carry the old module id: every
one of them must still land on its section.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from jupyterlab_tfcoach.course import (
    MODULE_NUMBERING,
    MODULES_RENUMBERED,
    SECTIONS_MERGED,
    Course,
    DuplicateSectionError,
    Module,
    UnknownModuleError,
    UnknownSectionError,
    get_course,
    module_id_now,
)
from jupyterlab_tfcoach.course.links import CourseLinks
from jupyterlab_tfcoach.course.notebook_links import COURSE_LINK, notebook_links
from jupyterlab_tfcoach.course.terms import get_terms
from jupyterlab_tfcoach.monitor.errors import dtypes

# Every section id of the first edition, with the module that held it then (copied from
# module-01.md and module-02.md as they were before the split; never regenerate this list).
FIRST_EDITION: dict[str, tuple[str, ...]] = {
    "module-01": (
        "tensors-immutable",
        "variables",
        "variable-references",
        "parameters-are-variables",
        "rebinding-variables",
        "shape-dtype-device",
        "batch-dimension",
        "dtype-casting",
        "broadcasting",
        "joining-indexing",
        "eager-vs-graph",
        "autograph-conditions",
        "tracing",
        "side-effects",
        "frozen-python-values",
        "python-iterators",
        "escaped-tensors",
        "python-loops",
        "retracing",
        "variables-in-functions",
        "keras-weights-in-build",
        "numpy-in-graphs",
        "gradient-tape",
        "tape-watch",
        "trainable-weights",
        "stopped-learning",
        "zero-initialization",
        "custom-train-step",
        "output-activation",
        "from-logits",
        "labels-and-loss",
        "functional-api",
        "training-argument",
        "callback-mode",
        "preprocessing-adapt",
        "clone-model",
    ),
    "module-02": (
        "ops-and-graphs",
        "staging",
        "devices-placement",
        "host-device-copies",
        "mixed-precision",
        "tf-data",
        "tf-data-order",
        "reproducibility",
    ),
}
# Every section id of module-03 before its Keras half became module-05 (copied from
# module-03.md as it was then; never regenerate this list).
MODULE_03_BEFORE_THE_SPLIT = (
    "gradient-tape",
    "tape-watch",
    "parameters-are-variables",
    "keras-weights-in-build",
    "variables-in-functions",
    "rebinding-variables",
    "trainable-weights",
    "stopped-learning",
    "zero-initialization",
    "epoch-figures",
    "keras-model-api",
    "functional-api",
    "output-activation",
    "from-logits",
    "labels-and-loss",
    "training-argument",
    "callback-mode",
    "preprocessing-adapt",
    "clone-model",
    "keras-validation-data",
    "keras-saving",
    "custom-train-step",
)
MOVED_TO_MODULE_05 = MODULE_03_BEFORE_THE_SPLIT[
    MODULE_03_BEFORE_THE_SPLIT.index("keras-model-api") :
]
# Every section id of module-04 before its numerics and reproducibility sections became
# module-06 (copied from module-04.md as it was then; never regenerate this list).
MODULE_04_BEFORE_THE_SPLIT = (
    "building-blocks",
    "ops-and-graphs",
    "staging",
    "xla",
    "devices-placement",
    "placement-numerics",
    "host-device-copies",
    "mixed-precision",
    "tf-data",
    "tf-data-order",
    "tf-data-determinism",
    "reproducibility",
)
MOVED_TO_MODULE_06 = ("placement-numerics", "tf-data-determinism", "reproducibility")
# Every section id of module-04 before its input pipeline became module-07 (copied from
# module-04.md as it was then; never regenerate this list).
MODULE_04_BEFORE_THE_SECOND_SPLIT = (
    "building-blocks",
    "ops-and-graphs",
    "staging",
    "xla",
    "devices-placement",
    "host-device-copies",
    "mixed-precision",
    "tf-data",
    "tf-data-order",
)
MOVED_TO_MODULE_07 = ("tf-data", "tf-data-order")
# Then module 4 was two sittings long (review 11 of #28): its last section, on 16-bit floats,
# went to the numerics module (``module-08``), with its exercise and its review question.
MOVED_TO_MODULE_08 = ("mixed-precision",)
# Then module 2 was too dense for one sitting (review 17 of #28): its section on tf.where's
# gradients, which needs a tape, went to module 3, after the tape sections that teach it.
MOVED_TO_MODULE_03 = ("where-both-branches",)
# Then module 6's "Your own layers and models", part of the functional API section until
# then, got an id of its own (review 38 of #28), so a link about `super().__init__()` lands
# on the section that teaches it: a new section, written for module 6, not a moved one.
WRITTEN_FOR_MODULE_06 = ("custom-layers",)
OLD_LINKS = (
    [
        (module_id, section_id)
        for module_id, section_ids in FIRST_EDITION.items()
        for section_id in section_ids
    ]
    + [("module-03", section_id) for section_id in MODULE_03_BEFORE_THE_SPLIT]
    + [("module-04", section_id) for section_id in MODULE_04_BEFORE_THE_SPLIT]
    + [("module-02", section_id) for section_id in MOVED_TO_MODULE_03]
)


@pytest.mark.parametrize(
    ("old_module", "section_id"), OLD_LINKS, ids=[f"{m}-{s}" for m, s in OLD_LINKS]
)
def test_every_first_edition_section_still_resolves(old_module: str, section_id: str) -> None:
    course = get_course()
    section = course.section(section_id)
    assert section.id == section_id
    # A link of the first edition, in each form a front end wrote it, lands on the section.
    for link in (
        f"https://course.example.org/tfcoach/{old_module}#{section_id}",
        f"{old_module}.md#{section_id}",
        f"#{section_id}",
    ):
        assert course.resolve(link) == section, link
    # And a link made now names the module that holds it today.
    ref = course.ref(section_id, "https://course.example.org/tfcoach")
    assert ref["url"] == f"https://course.example.org/tfcoach/{section.module_id}#{section_id}"


def test_the_split_put_the_sections_where_a_learner_needs_them() -> None:
    course = get_course()
    assert [module.id for module in course.modules] == [
        "module-01",
        "module-02",
        "module-03",
        "module-04",
        "module-05",
        "module-06",
        "module-07",
        "module-08",
    ]
    where = {section.id: section.module_id for section in course.sections}
    # Module ids as they were before the renumbering into reading order, and as they are.
    keras, numerics, pipelines = (
        module_id_now(m, 0) for m in ("module-05", "module-06", "module-07")
    )
    assert (pipelines, keras, numerics) == ("module-05", "module-06", "module-08")
    assert where["tensors-immutable"] == where["batch-dimension"] == "module-01"
    assert where["tracing"] == where["retracing"] == where["input-signature"] == "module-02"
    assert where["gradient-tape"] == where["rebinding-variables"] == "module-03"
    assert where["host-device-copies"] == "module-04"
    assert where["mixed-precision"] == numerics
    # The Keras sections are two modules now, models and layers then training with fit.
    training = "module-07"
    assert {where[section_id] for section_id in MOVED_TO_MODULE_05} == {keras, training}
    # Module 3 kept the rest, in the same order, after a working training loop, and took
    # module 2's tf.where gradients right after the tape sections.
    kept = [s.id for s in course.module("module-03").sections if s.id not in MOVED_TO_MODULE_03]
    assert kept == ["training-loop", *MODULE_03_BEFORE_THE_SPLIT[: -len(MOVED_TO_MODULE_05)]]
    module_3 = [s.id for s in course.module("module-03").sections]
    assert module_3[module_3.index("tape-watch") + 1] == "where-both-branches"
    assert "where-both-branches" not in [s.id for s in course.module("module-02").sections]
    # And the two Keras modules hold them in the order module 3 had them, cut once.
    keras_sections = [s.id for s in course.module(keras).sections]
    training_sections = [s.id for s in course.module(training).sections]
    moved = [s for s in keras_sections if s not in WRITTEN_FOR_MODULE_06]
    assert moved + training_sections == list(MOVED_TO_MODULE_05)
    # Layers of your own come right after the functional API, before the output layer.
    custom = keras_sections.index("custom-layers")
    assert keras_sections[custom - 1 : custom + 2] == [
        "functional-api",
        "custom-layers",
        "output-activation",
    ]
    assert keras_sections[-1] == "training-argument" and training_sections[0] == "callback-mode"
    # Module 4 kept the rest, in the same order; the numerics module holds the numbers and
    # the seeds, seeds before the pipelines that rely on them.
    assert {where[section_id] for section_id in MOVED_TO_MODULE_06} == {numerics}
    kept_4 = [s.id for s in course.module("module-04").sections]
    after_the_first_split = [s for s in MODULE_04_BEFORE_THE_SPLIT if s not in MOVED_TO_MODULE_06]
    moved_on = MOVED_TO_MODULE_07 + MOVED_TO_MODULE_08
    assert kept_4 == [s for s in after_the_first_split if s not in moved_on]
    # Then the input pipeline module took the pipeline, in module 4's order (and sections of
    # its own after them), the numerics module took mixed precision, and module 4 kept the rest.
    assert kept_4 == [s for s in MODULE_04_BEFORE_THE_SECOND_SPLIT if s not in moved_on]
    pipeline_sections = [s.id for s in course.module(pipelines).sections]
    moved = [s for s in pipeline_sections if s in MOVED_TO_MODULE_07]
    assert moved == list(MOVED_TO_MODULE_07) and pipeline_sections[0] == "tf-data"
    assert [s.id for s in course.module(numerics).sections] == [
        "placement-numerics",
        "nan-inf",  # written for the numerics module: finding and preventing NaN and inf
        "mixed-precision",  # from module 4 (review 11): 16-bit floats after float64
        "reproducibility",
        "tf-data-determinism",
    ]
    # Taught before used: tracing before AutoGraph, the tape before the rebinding examples.
    order = [section.id for section in course.sections]
    assert order.index("tracing") < order.index("autograph-conditions")
    assert order.index("gradient-tape") < order.index("rebinding-variables")


def test_a_tool_is_taught_before_a_section_uses_it() -> None:
    """Module 1 makes, slices and reduces tensors before its other sections use those ops;
    module 3 opens with a training loop that works, which introduces `compile` and `fit`,
    before any section uses them; modules 6 and 7 teach the Keras model (making, compiling,
    the functional API, outputs and losses; callbacks, preprocessing, saving) before the
    custom train_step built on it."""
    order = [section.id for section in get_course().sections]
    basics = order.index("creating-slicing-reducing")
    assert order.index("tensors-immutable") < basics < order.index("variables")
    # Making, reading parts of and reducing tensors are three sections, before variables;
    # the batch axis is taught on tensors before a Keras model shows it (one section since
    # module 1 became one sitting: ``batch-axis`` was merged into ``batch-dimension``).
    slicing, reducing = order.index("indexing-slicing"), order.index("reducing-tensors")
    assert basics < slicing < reducing < order.index("variables")
    assert "batch-axis" not in order
    assert get_course().section("batch-axis") == get_course().section("batch-dimension")
    module_3 = get_course().module("module-03")
    first_fit = module_3.markdown.index(".fit(")
    assert module_3.sections[0].id == "training-loop"
    assert first_fit < module_3.markdown.index('<a id="gradient-tape">')
    assert module_3.markdown.index(".compile(") < first_fit
    introduced = module_3.sections[0].markdown
    for taught in ("`model.compile(", "`model.fit(", "`training=True`", "`from_logits=True`"):
        assert taught in introduced, taught
    keras_order = [
        "keras-model-api",
        "functional-api",
        "custom-layers",
        "output-activation",
        "from-logits",
        "labels-and-loss",
        "training-argument",
        "callback-mode",
        "preprocessing-adapt",
        "clone-model",
        "keras-validation-data",
        "keras-saving",
        "custom-train-step",
    ]
    assert order[order.index("keras-model-api") :][: len(keras_order)] == keras_order
    assert get_course().module("module-07").sections[-1].id == "custom-train-step"


def _prose_before_first_block(section_id: str) -> str:
    text = get_course().section(section_id).markdown
    return text[: text.index("```python")]


def test_a_tool_a_section_uses_is_introduced_before_its_first_example() -> None:
    """The second review of the second edition (issue #28) found tools used before any
    section taught them: each is now introduced in a line of prose above the first example
    that uses it, or the example keeps to what was taught."""
    introduced = {
        # module 1: the batch axis and the batch dimension on tensors alone
        "batch-dimension": (
            "`tf.expand_dims(",
            "`None`",
            "`tf.squeeze(",
            "`**2`",
            "`tf.reshape(t, shape)`",
            "`axis=-1`",
        ),
        # module 2: a Keras layer, before modules 3 and 6 teach it (its tf.where gradients,
        # which needed a tape taught ahead, are module 3's since review 17)
        "autograph-conditions": ("`tf.cond",),
        # module 5 (module 4's until #28): the file and image ops and the pooling layer,
        # in the section that reads files
        "tf-data-files": (
            "`tf.io.read_file(",
            "`tf.io.decode_jpeg`",
            "`tf.image.resize(",
            "`GlobalAveragePooling2D`",
        ),
    }
    for section_id, names in introduced.items():
        prose = _prose_before_first_block(section_id)
        for name in names:
            assert name in prose, (section_id, name)
    module_2 = get_course().section("autograph-conditions").markdown
    keras_layer = module_2.index("class ScaleDownByMax(keras.layers.Layer)")
    assert module_2.index("subclasses `keras.layers.Layer`") < keras_layer
    # No Keras, no tf.data in the tensor-only section; no tf.data in module 3's epoch figures
    # (module 4 teaches pipelines).
    assert "keras" not in _prose_before_first_block("batch-dimension").lower()
    # The batch dimension is taught on module 1's tensors; a Keras model comes only in its
    # last block, a look ahead whose tools the prose just above it names.
    batch_dimension = get_course().section("batch-dimension").markdown
    blocks = batch_dimension.split("```python")[1:]
    assert [("import keras" in block) for block in blocks][-1] is True
    assert not any("import keras" in block for block in blocks[:-1])
    ahead = batch_dimension[: batch_dimension.rindex("```python")]
    ahead = ahead[ahead.rindex("```") :]
    for name in ("`keras.Sequential(", "`keras.Input(", "`model.predict("):
        assert name in ahead, name
    assert "tf.data" not in get_course().section("epoch-figures").markdown
    # The numerics module's pipelines come after the seeds they rely on. tf.data is taught
    # in module 5, right after module 4 and before the modules that feed models with
    # pipelines (7 and 8): none of them sends the learner ahead to a later module first.
    order = [section.id for section in get_course().sections]
    assert order.index("reproducibility") < order.index("tf-data-determinism")
    assert get_course().section("tf-data").module_id == "module-05"
    for module_id in ("module-07", "module-08"):
        text = get_course().module(module_id).markdown
        opening = text[: text.index("<a id=")]
        assert "module 5" in opening.lower() and "read it first" not in opening, module_id
        assert "module 4 (`tf.data`" not in text, module_id
    # The exercises' ops that no section teaches are introduced in the task's own text
    # (module 4's timing task used tf.roll until review 13; it now uses taught ops only).
    for module_id, exercise, name in (
        ("module-07", "### Carrying on from a checkpoint", "`tf.train.CheckpointManager("),
    ):
        text = get_course().module(module_id).markdown
        task = text[text.index(exercise) :]
        assert name in task[: task.index("```python")], (module_id, name)


def test_a_link_without_a_section_lands_on_its_module() -> None:
    course = get_course()
    for link in ("module-04", "module-04.md", "https://course.example.org/tfcoach/module-04/"):
        landed = course.resolve(link)
        assert isinstance(landed, Module) and landed.id == "module-04", link
    for module_id, title in (
        ("module-03", "Gradients, variables and training"),
        ("module-04", "TensorFlow's architecture and execution model"),
        ("module-05", "Feeding the model: tf.data input pipelines"),
        ("module-06", "Keras models and layers"),
        ("module-07", "Training with fit: callbacks, saving and train_step"),
        ("module-08", "Numerics and reproducibility"),
    ):
        landed = course.resolve(f"https://course.example.org/tfcoach/{module_id}")
        assert isinstance(landed, Module) and landed.title == title, module_id


# Each module id a renumbering changed, by the numbering it was written in (0: before the
# reading order, 1: before the Keras module's split), with the sections its module held then,
# the first first (copied from the modules as they were; never regenerate this list).
BEFORE_EACH_RENUMBERING: dict[int, dict[str, tuple[str, ...]]] = {
    0: {
        "module-05": ("keras-model-api", "custom-train-step"),
        "module-06": ("placement-numerics", "nan-inf", "reproducibility", "tf-data-determinism"),
        "module-07": ("tf-data", "tf-data-order"),
    },
    1: {
        "module-07": ("placement-numerics", "nan-inf", "reproducibility", "tf-data-determinism"),
    },
}
OLD_MODULE_IDS = [
    (numbering, old_module)
    for numbering, modules in BEFORE_EACH_RENUMBERING.items()
    for old_module in sorted(modules)
]


@pytest.mark.parametrize(
    ("numbering", "old_module"), OLD_MODULE_IDS, ids=[f"{n}-{m}" for n, m in OLD_MODULE_IDS]
)
def test_the_renumbering_carries_each_old_module_id_to_the_same_module(
    numbering: int, old_module: str
) -> None:
    """What is kept under a module id alone (study scores, an exported progress file) is
    carried over by ``MODULES_RENUMBERED`` from the numbering it was written in: the old id
    must lead to the module that holds the first section it held (a split module's scores
    stay with its first half), never to the module that took its number."""
    course = get_course()
    assert len(MODULES_RENUMBERED) == MODULE_NUMBERING == len(BEFORE_EACH_RENUMBERING)
    assert set(MODULES_RENUMBERED[numbering].moves) == set(BEFORE_EACH_RENUMBERING[numbering])
    new_module = module_id_now(old_module, numbering)
    assert new_module != old_module
    sections = BEFORE_EACH_RENUMBERING[numbering][old_module]
    assert course.section(sections[0]).module_id == new_module
    for section_id in sections:
        # A section link written before the renumbering still lands on its section.
        assert course.resolve(f"{old_module}.md#{section_id}") == course.section(section_id)


def test_one_module_id_means_different_modules_in_different_numberings() -> None:
    """``module-07`` was the input pipeline before the reading order, numerics before the
    Keras module's split, and is training with fit now: where an id was written decides."""
    course = get_course()
    assert module_id_now("module-07", 0) == "module-05"  # tf.data
    assert module_id_now("module-07", 1) == "module-08"  # numerics
    assert module_id_now("module-07", MODULE_NUMBERING) == "module-07"  # training with fit
    assert module_id_now("module-06", 0) == "module-08"  # numerics, moved twice
    assert module_id_now("module-06", 1) == "module-06"  # Keras: its first half kept the id
    assert course.module("module-07").title.startswith("Training with fit")
    with pytest.raises(ValueError, match="no module numbering"):
        module_id_now("module-01", MODULE_NUMBERING + 1)


def test_a_merged_sections_id_lands_on_the_section_that_took_it_over(tmp_path: Path) -> None:
    """Module 1 became one sitting (issue #28): its section ``batch-axis`` was merged into
    ``batch-dimension``. A rule, report or bookmark naming the old id, in any link form,
    lands on the merged section, and a link made now names the id its anchor has."""
    course = get_course()
    for merged, kept in SECTIONS_MERGED.items():
        section = course.section(kept)
        assert section.id == kept
        for link in (
            f"https://course.example.org/tfcoach/{section.module_id}#{merged}",
            f"{section.module_id}.md#{merged}",
            f"#{merged}",
        ):
            assert course.resolve(link) == section, link
        ref = course.ref(merged, "https://course.example.org/tfcoach")
        assert ref["section"] == kept
        assert ref["url"] == f"https://course.example.org/tfcoach/{section.module_id}#{kept}"
        assert f'<a id="{kept}"></a>' in course.module(section.module_id).markdown
    assert SECTIONS_MERGED["batch-axis"] == "batch-dimension"
    # A merged id never comes back as a section of its own: it would shadow the merge.
    (tmp_path / "module-a.md").write_text(
        '# A\n\n<a id="batch-axis"></a>\n## Back\n\nText.\n', encoding="utf-8"
    )
    with pytest.raises(DuplicateSectionError, match="batch-axis"):
        Course.load(tmp_path)


def test_mixed_precision_moved_to_the_numerics_module_and_every_old_link_follows() -> None:
    """Review 11 (#28) moved module 4's "float16, bfloat16 and mixed precision" to module 8,
    with its exercise and review question. The section keeps its id (its anchor), so no
    record is needed: links written when it was in module 2 or module 4, the monitor's
    mixed-policy explanation and the study cards all land on it in module 8."""
    course = get_course()
    section = course.section("mixed-precision")
    assert section.module_id == "module-08"
    assert section.title == "float16, bfloat16 and mixed precision"
    assert "mixed-precision" not in SECTIONS_MERGED
    for link in (
        "module-04.md#mixed-precision",
        "https://course.example.org/tfcoach/module-04#mixed-precision",
        "module-02.md#mixed-precision",
        "#mixed-precision",
    ):
        assert course.resolve(link) == section, link
    ref = CourseLinks("https://course.example.org/tfcoach").ref("mixed-precision")
    assert ref is not None
    assert ref["url"] == "https://course.example.org/tfcoach/module-08#mixed-precision"
    assert ref["title"] == "float16, bfloat16 and mixed precision"
    assert '"mixed-precision"' in Path(dtypes.__file__).read_text(encoding="utf-8")
    cards = [term for term in get_terms() if term.section_id == "mixed-precision"]
    assert {term.id for term in cards} == {"mixed-precision", "bfloat16"}
    assert {term.module_id for term in cards} == {"module-08"}
    # The exercise and the review question went with it.
    numerics, architecture = course.module("module-08"), course.module("module-04")
    assert "### Mixed precision by hand" in numerics.markdown
    assert "mixed_float16" not in architecture.markdown
    assert "Under a `mixed_float16` policy" in numerics.markdown


def test_unknown_links_raise() -> None:
    course = get_course()
    with pytest.raises(UnknownSectionError):
        course.resolve("module-01#no-such-section")
    with pytest.raises(UnknownModuleError):
        course.resolve("https://course.example.org/tfcoach/module-99")


def test_resolution_follows_a_section_into_any_module(tmp_path: Path) -> None:
    """Not a list of moves: any section found in another module than the link names."""
    for module_id, section_id in (("module-a", "first"), ("module-b", "moved")):
        (tmp_path / f"{module_id}.md").write_text(
            f'# {module_id}\n\n<a id="{section_id}"></a>\n## {section_id}\n\nText.\n',
            encoding="utf-8",
        )
    course = Course.load(tmp_path)
    moved = course.resolve("https://example.org/c/module-a#moved")
    assert moved == course.section("moved") and moved.module_id == "module-b"


_FENCE = re.compile(r"^```python\n(.*?)^```\n", re.S | re.M)
_DETAILS = re.compile(r"<details><summary>.*?</details>\n", re.S)
# The cell after each exercise's task, for the learner's own version (tools/course_notebook.py).
# A comment only, so running it shows nothing (a ``...`` placeholder showed ``Ellipsis``).
_PLACEHOLDER = (
    "# Copy the task's code here, then change or complete it until it does what the task asks."
)


def _tasks(markdown: str) -> list[str]:
    """The exercises' tasks: the blocks of ``## Your turn`` outside the folded solutions."""
    start = markdown.index("\n## Your turn\n")
    end = markdown.find("\n## ", start + 1)
    turn = _DETAILS.sub("", markdown[start : end if end > 0 else len(markdown)])
    return [match.group(1).rstrip("\n") for match in _FENCE.finditer(turn)]


@pytest.mark.parametrize("module_id", [module.id for module in get_course().modules])
def test_every_modules_notebook_mirrors_it_in_full(module_id: str) -> None:
    """Every example, fix and exercise of the module is a code cell of its notebook, in the
    module's order, tagged ``raises-exception`` exactly when it says ``# raises:``, and each
    exercise's task is followed by a placeholder cell that runs as it is; every section
    heading and every folded solution and review answer is there too."""
    module = get_course().module(module_id)
    assert module.notebook is not None
    text = _DETAILS.sub("", module.markdown)
    blocks = [match.group(1).rstrip("\n") for match in _FENCE.finditer(text)]
    tasks = _tasks(module.markdown)
    assert tasks, module_id
    expected = []
    for block in blocks:
        expected.append(block)
        if block in tasks:
            expected.append(_PLACEHOLDER)
    notebook = nbformat.read(module.notebook, as_version=nbformat.NO_CONVERT)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert [cell.source for cell in code] == expected
    assert [cell.source for cell in code].count(_PLACEHOLDER) == len(tasks)
    for cell in code:
        tagged = "raises-exception" in cell.metadata.get("tags", [])
        assert tagged == cell.source.startswith("# raises: "), cell.source.splitlines()[0]
    markdown = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    for section in module.sections:
        assert f'<a id="{section.id}"></a>\n## {section.title}\n' in markdown, section.id
    for folded in _DETAILS.findall(module.markdown):
        # With its course links made to work in a notebook of its own (see the next test).
        assert notebook_links(get_course(), module_id, folded.strip()) in markdown


_COURSE_LINK = re.compile(r"\]\(((?:module-[0-9]+(?:\.md)?)?#[a-z0-9-]+)\)")


def test_every_link_between_sections_lands_on_a_section() -> None:
    """Links in the modules (``[...](module-01.md#side-effects)``, ``[...](#tracing)``), also
    those written before a section moved, land on the section they name."""
    course = get_course()
    links = [
        (module.id, link)
        for module in course.modules
        for link in _COURSE_LINK.findall(module.markdown)
    ]
    assert len(links) >= 3
    for module_id, link in links:
        landed = course.resolve(link)
        assert landed.id == link.split("#", 1)[1], (module_id, link)


# A Markdown link's destination, allowing one level of balanced parentheses as marked does.
_NOTEBOOK_LINK = re.compile(r"\]\((?P<target>(?:[^()\s]|\([^()\s]*\))+)\)")
_CODE_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_HEADING = re.compile(r"^#{1,6} (?P<text>.+?)\s*$", re.M)


def _jupyterlab_heading_ids(markdown: str) -> set[str]:
    """The ids JupyterLab 4 gives the headings it renders: the heading's text content
    (inline code and emphasis marks are elements, not text) with every space a ``-``
    (``renderMarkdown.createHeaderId`` in ``@jupyterlab/rendermime``)."""
    return {
        re.sub(r"[`*]", "", match["text"]).replace(" ", "-")
        for match in _HEADING.finditer(_CODE_FENCE.sub("", markdown))
    }


@pytest.mark.parametrize("module_id", [module.id for module in get_course().modules])
def test_every_link_in_a_notebook_works_where_the_learner_keeps_it(module_id: str) -> None:
    """A course notebook is copied into the learner's own folder, without the module
    files: each of its links is a web address or an anchor of one of its own headings,
    never ``module-04.md#...`` or one of the modules' ``<a id>`` anchors."""
    module = get_course().module(module_id)
    assert module.notebook is not None
    notebook = nbformat.read(module.notebook, as_version=nbformat.NO_CONVERT)
    markdown = "\n\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    headings = _jupyterlab_heading_ids(markdown)
    links = [match["target"] for match in _NOTEBOOK_LINK.finditer(_CODE_FENCE.sub("", markdown))]
    assert any(link.startswith("#") for link in links), module_id  # the check sees its links
    broken = [
        link
        for link in links
        if not link.startswith(("https://", "http://"))
        and not (link.startswith("#") and link[1:] in headings)
    ]
    assert broken == []
    assert "module-0" not in "".join(_NOTEBOOK_LINK.findall(markdown))


_NUMBERED_LINK = re.compile(r"\[[Mm]odule\s+(\d+)\]\((module-(\d+))(?:\.md)?(?:#[a-z0-9-]+)?\)")
_NAMED_NUMBER = re.compile(r"\b[Mm]odules?\s+(\d+)\b")


@pytest.mark.parametrize("module_id", [module.id for module in get_course().modules])
def test_the_numbers_a_module_says_are_the_places_of_the_modules_it_means(module_id: str) -> None:
    """A module's number is its place in the course (file name order is reading order), so
    "[module 5](module-05.md#tf-data)" names the fifth module and links to it; and a module
    never names a number the course does not have."""
    course = get_course()
    text = course.module(module_id).markdown
    for match in _NUMBERED_LINK.finditer(text):
        assert int(match[1]) == int(match[3]), match[0]
        assert course.modules[int(match[1]) - 1].id == match[2], match[0]
    for match in _NAMED_NUMBER.finditer(text):
        assert 1 <= int(match[1]) <= len(course.modules), match[0]
    # Where a section is named with its module ("module 7, [Placement ...](module-07.md#...)"),
    # the number is the module that holds the section.
    for match in re.finditer(r"\b[Mm]odule\s+(\d+),?\s*\n?\s*\[[^\]]+\]\((module-\d+)\.md#", text):
        assert f"module-{int(match[1]):02d}" == match[2], match[0]


_MODULE_NAMED_TWICE = re.compile(r"\b[Mm]odule (\d+) \(module \1\b")


def test_a_notebook_link_whose_text_names_its_module_names_it_once() -> None:
    """In a notebook, ``[module 1](module-01.md#x)`` reads "module 1 (*Title*)", never
    "module 1 (module 1, *Title*)"; other text still gets the module's number."""
    course = get_course()
    rewritten = {
        module.id: notebook_links(course, module.id, module.markdown) for module in course.modules
    }
    doubled = {
        module_id: match.group(0)
        for module_id, text in rewritten.items()
        for match in _MODULE_NAMED_TWICE.finditer(text)
    }
    assert doubled == {}
    section = course.section("creating-slicing-reducing")
    text = notebook_links(
        course, "module-06", "see [module 1](module-01.md#creating-slicing-reducing)"
    )
    assert text == f"see module 1 (*{section.title}*)"
    text = notebook_links(
        course, "module-06", "see [the first one](module-01.md#creating-slicing-reducing)"
    )
    assert text == f"see the first one (module 1, *{section.title}*)"
    assert notebook_links(course, "module-06", "[Module 2](module-02.md)") == "Module 2"
    # An interval before a link stays as written.
    text = notebook_links(course, "module-06", "`[0, n)` ([module 1](module-01.md))")
    assert text == "`[0, n)` (module 1)"


def _said(text: str) -> str:
    """What a reader sees of ``text``: no inline marks, one space between words, any case."""
    return " ".join(re.sub(r"[`*]", "", text).split()).lower()


def test_a_notebook_link_says_its_words_once_however_its_text_wraps() -> None:
    """Review 39 (#28): a link whose text the module wraps over two lines, such as the
    section's own title, was compared with the title line break and all, so the notebook
    said the title twice ("tf.where computes both branches (module 3, *tf.where computes
    both branches*)"). Its words are compared now, wherever the lines break: the title is
    said once, text that is a run of the title's words is followed by the module alone, and
    a link that is a whole parenthetical is not put in parentheses again."""
    course = get_course()
    title = course.section("reducing-tensors").title  # Reductions: sums, means, maxima ...
    words = title.split()
    wrapped = " ".join(words[:2]) + "\n" + " ".join(words[2:])
    link = f"[{wrapped}](module-01.md#reducing-tensors)"
    assert notebook_links(course, "module-07", f"as in {link} above") == (
        f"as in *{title}* (module 1) above"
    )
    # A run of the title's words, wrapped: the module alone, the text as the module wrote it.
    part = "[sums,\nmeans](module-01.md#reducing-tensors)"
    assert notebook_links(course, "module-07", f"the {part} of") == "the sums,\nmeans (module 1) of"
    # One word of the title says too little: the title follows it.
    text = notebook_links(course, "module-07", "[maxima](module-01.md#reducing-tensors)")
    assert text == f"maxima (module 1, *{title}*)"
    # A whole parenthetical: the module after a comma, never "(x (module 1))"; text that is
    # part of the title gives way to the title there, one word too.
    aside = notebook_links(course, "module-07", f"a mean ({link})")
    assert aside == f"a mean (*{title}*, module 1)"
    one_word = "([maxima](module-01.md#reducing-tensors))"
    assert notebook_links(course, "module-07", one_word) == f"(*{title}*, module 1)"
    other = "([the averages](module-01.md#reducing-tensors))"
    assert notebook_links(course, "module-07", other) == f"(the averages: module 1, *{title}*)"
    assert (
        notebook_links(course, "module-07", "a mean ([module\n1](module-01.md#reducing-tensors))")
        == f"a mean (module\n1, *{title}*)"
    )
    # Every link of every module: its words are said once in the notebook (one word alone
    # is followed by the title it is part of, as above).
    repeated = []
    for module in course.modules:
        for match in COURSE_LINK.finditer(module.markdown):
            said = _said(match["text"])
            if len(said.split()) < 2:
                continue
            rendered = _said(notebook_links(course, module.id, match[0]))
            if rendered.count(said) != 1:
                repeated.append((module.id, match[0], rendered))
    assert repeated == []
