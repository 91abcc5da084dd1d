"""tf.data symptoms (issue #25, silent bugs): a one-shot dataset iterator looped over again
after it ran out (epochs 2+ run 0 steps), and Python randomness, ``print`` or list appends
in a function ``Dataset.map``/``filter`` traces (they run once, so every element gets the
same value). Each entry names the user's iterator, dataset, function and line, and a fix
that is run in the kernel and gets no entry; correct look-alikes stay silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import random\nimport numpy as np\nimport tensorflow as tf\nimport keras\n",
    after_load="",
)

TABLE = """cols = np.arange(120, dtype="float32").reshape(40, 3)
flags = (cols[:, 0] % 2).astype("float32")
table = tf.data.Dataset.from_tensor_slices((cols, flags)).shuffle(40, seed=1).batch(8)
"""


def notes_in(report: dict[str, Any], section: str) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == section
    ]


def last_code(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


def test_one_shot_iterator_looped_over_every_epoch(kernel: KernelSession) -> None:
    run(kernel, TABLE)
    cell = """rows = iter(table)
for ep in range(4):
    seen = 0
    for feats, marks in rows:
        seen += 1
    print(ep, seen)
"""
    execution = run(kernel, cell)
    assert execution.stdout.split() == ["0", "5", "1", "0", "2", "0", "3", "0"]
    notes = notes_in(checked_report(execution), "tf-data")
    assert len(notes) == 1, notes
    text = notes[0]
    assert text.startswith(
        "`for feats, marks in rows:` (line 4 of this cell) ran 0 steps 3 times in this cell: "
        "`rows` (`iter(table)`) is a one-shot iterator"
    )
    assert "`seen` stays 0" in text
    fix = last_code(text)
    assert fix == "for feats, marks in table:"
    fixed = run(kernel, cell.replace("for feats, marks in rows:", fix))
    assert fixed.stdout.split() == ["0", "5", "1", "5", "2", "5", "3", "5"]
    assert notes_in(checked_report(fixed), "tf-data") == []


def test_iterator_used_up_in_an_earlier_cell(kernel: KernelSession) -> None:
    run(kernel, TABLE + "stream = iter(table)\nfirst_pass = [b for b in stream]\n")
    report = checked_report(run(kernel, "for chunk in stream:\n    pass\n"))
    notes = notes_in(report, "tf-data")
    assert len(notes) == 1 and "`stream` (`iter(table)`)" in notes[0], notes
    assert last_code(notes[0]) == "for chunk in table:"


def test_iterator_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, TABLE)
    cell = """for ep in range(3):
    fresh = iter(table)
    for feats, marks in fresh:
        pass
    for batch in table:
        pass
probe = next(iter(table))
again = next(iter(table))
once = iter(table)
everything = list(once)
"""
    assert notes_in(checked_report(run(kernel, cell)), "tf-data") == []


def test_numpy_randomness_in_map_is_drawn_once(kernel: KernelSession) -> None:
    cell = """def wiggle(feats, marks):
    bump = np.random.uniform(-0.5, 0.5, size=3).astype("float32")
    return feats + bump, marks

blank = tf.data.Dataset.from_tensor_slices((np.zeros((6, 3), "float32"), np.zeros(6, "float32")))
wiggled = blank.map(wiggle)
firsts = [float(f[0]) for f, _ in wiggled]
"""
    report = checked_report(run(kernel, cell))
    assert len(set(value_of(kernel, "firsts"))) == 1  # the symptom: one value for all
    notes = notes_in(report, "tf-data")
    assert len(notes) == 1, report["notes"]
    text = notes[0]
    assert text.startswith(
        "`np.random.uniform(...)` in `wiggle` (line 2 of this cell: "
        '`bump = np.random.uniform(-0.5, 0.5, size=3).astype("float32")`)'
    )
    assert "Dataset.map() runs `wiggle` (`wiggled = blank.map(wiggle)`) once" in text
    assert "`bump` is drawn once" in text
    fix = last_code(text)
    assert fix == "bump = tf.random.uniform([3], -0.5, 0.5)"
    fixed = cell.replace('bump = np.random.uniform(-0.5, 0.5, size=3).astype("float32")', fix)
    report = checked_report(run(kernel, fixed))
    assert notes_in(report, "tf-data") == []
    # The fix draws per element now.
    assert len(set(value_of(kernel, "firsts"))) > 1


def test_numpy_randomness_with_a_named_size_gets_a_shape_list(kernel: KernelSession) -> None:
    # ``size=width`` (an int): TensorFlow reads a bare number as a shape of the wrong rank,
    # so the printed draw wraps it, ``[width]``; a tuple size stays as written.
    cell = """width = 3
def jolt(feats, marks):
    shake = np.random.normal(0.0, 0.2, size=width).astype("float32")
    return feats + shake, marks

calm = tf.data.Dataset.from_tensor_slices((np.zeros((6, 3), "float32"), np.zeros(6, "float32")))
jolted = calm.map(jolt)
firsts = [float(f[0]) for f, _ in jolted]
"""
    text = notes_in(checked_report(run(kernel, cell)), "tf-data")[0]
    fix = last_code(text)
    assert fix == "shake = tf.random.normal([width], 0.0, 0.2)"
    fixed = cell.replace('shake = np.random.normal(0.0, 0.2, size=width).astype("float32")', fix)
    assert notes_in(checked_report(run(kernel, fixed)), "tf-data") == []
    assert len(set(value_of(kernel, "firsts"))) > 1
    shaped = cell.replace("width = 3", "width = (3,)")
    assert last_code(notes_in(checked_report(run(kernel, shaped)), "tf-data")[0]) == (
        "shake = tf.random.normal(width, 0.0, 0.2)"
    )


def test_scalar_conversion_around_a_draw_goes_with_the_draw(kernel: KernelSession) -> None:
    # ``np.float32(np.random.normal(...))`` / ``float(...)``: kept around a TensorFlow draw,
    # the conversion would turn a symbolic tensor into a NumPy or Python number and fail
    # while map traces, so the printed statement drops it (its dtype goes to the draw).
    cell = """def tilt(vals, tag):
    gain = np.float64(np.random.normal(1.0, 0.3))
    return tf.cast(vals, tf.float64) * gain, tag

flat = tf.data.Dataset.from_tensor_slices((np.ones((5, 2), "float32"), np.arange(5)))
tilted = flat.map(tilt)
gains = [float(v[0]) for v, _ in tilted]
"""
    text = notes_in(checked_report(run(kernel, cell)), "tf-data")[0]
    assert "`gain` is drawn once" in text
    fix = last_code(text)
    assert fix == "gain = tf.random.normal([], 1.0, 0.3, dtype=tf.float64)"
    fixed = cell.replace("gain = np.float64(np.random.normal(1.0, 0.3))", fix)
    report = checked_report(run(kernel, fixed))
    assert notes_in(report, "tf-data") == [] and notes_in(report, "side-effects") == []
    run(kernel, "again = [float(v[0]) for v, _ in tilted]")
    first, second = value_of(kernel, "gains"), value_of(kernel, "again")
    assert len(set(first)) > 1 and first != second  # a new draw per element and per pass
    plain = cell.replace(
        "np.float64(np.random.normal(1.0, 0.3))", "float(np.random.uniform(0.5, 2))"
    )
    plain = plain.replace("tf.cast(vals, tf.float64) * gain", "vals * gain")
    fix = last_code(notes_in(checked_report(run(kernel, plain)), "tf-data")[0])
    assert fix == "gain = tf.random.uniform([], 0.5, 2)"
    fixed = plain.replace("gain = float(np.random.uniform(0.5, 2))", fix)
    report = checked_report(run(kernel, fixed))
    assert notes_in(report, "tf-data") == [] and notes_in(report, "side-effects") == []
    assert len(set(value_of(kernel, "gains"))) > 1


def test_python_random_and_print_in_dataset_functions(kernel: KernelSession) -> None:
    run(kernel, TABLE)
    cell = """def keep_some(feats, marks):
    print("checking", feats)
    return random.random() < 0.5

kept = table.unbatch().filter(keep_some)
"""
    report = checked_report(run(kernel, cell))
    # The print links the tracing rules; the draw, the map example that shows one frozen.
    [printed] = notes_in(report, "side-effects")
    assert printed.startswith("`print(...)` in `keep_some`"), report["notes"]
    assert "Dataset.filter()" in printed and "`tf.print(...)`" in printed
    [drawn] = notes_in(report, "tf-data")
    assert drawn.startswith("`random.random(...)` in `keep_some`"), report["notes"]
    fix = last_code(drawn)
    assert fix == "return tf.random.uniform([]) < 0.5"
    fixed = cell.replace('print("checking", feats)', 'tf.print("checking", feats)').replace(
        "return random.random() < 0.5", fix
    )
    report = checked_report(run(kernel, fixed))
    assert notes_in(report, "side-effects") == notes_in(report, "tf-data") == []


def test_append_to_an_outer_list_in_map(kernel: KernelSession) -> None:
    run(kernel, TABLE)
    cell = """sightings = []

def note_row(feats, marks):
    sightings.append(feats)
    return feats * 0.5, marks

halved = table.unbatch().map(note_row)
"""
    report = checked_report(run(kernel, cell))
    notes = notes_in(report, "side-effects")
    assert len(notes) == 1, report["notes"]
    assert notes[0].startswith("`sightings.append(...)` in `note_row` runs only while tracing")
    fix = last_code(notes[0])
    assert fix == "for item in halved.as_numpy_iterator(): sightings.append(item)"
    fixed = cell.replace("    sightings.append(feats)\n", "") + fix + "\n"
    report = checked_report(run(kernel, fixed))
    assert notes_in(report, "side-effects") == []
    assert value_of(kernel, "len(sightings)") == 40


def test_outer_number_changed_after_map_traced(kernel: KernelSession) -> None:
    run(kernel, TABLE)
    define = """strength = 0.25

def soften(feats, marks):
    return feats * strength, marks

softened = table.unbatch().map(soften)
"""
    report = checked_report(run(kernel, define))
    assert notes_in(report, "frozen-python-values") == []
    change = "strength = 0.75\nfirst = float(next(iter(softened))[0][0])\n"
    report = checked_report(run(kernel, change))
    notes = notes_in(report, "frozen-python-values")
    assert len(notes) == 1, report["notes"]
    text = notes[0]
    assert text.startswith(
        "`soften` read `strength` = 0.25 when Dataset.map() traced it "
        "(`softened = table.unbatch().map(soften)`); `strength` is now 0.75"
    )
    declare, update = re.findall(r"`([^`]+)`", text)[-2:]
    assert (declare, update) == ("strength = tf.Variable(0.25)", "strength.assign(0.75)")
    # Said once, not again on every later cell.
    assert notes_in(checked_report(run(kernel, "pass")), "frozen-python-values") == []
    report = checked_report(run(kernel, define.replace("strength = 0.25", declare)))
    assert notes_in(report, "frozen-python-values") == []
    report = checked_report(run(kernel, change.replace("strength = 0.75", update)))
    assert notes_in(report, "frozen-python-values") == []
    # The graph reads the variable: the new strength reaches every element now.
    assert value_of(kernel, "first") in {
        0.75 * v for v in value_of(kernel, "cols.ravel().tolist()")
    }


def test_map_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, TABLE)
    cell = """def jiggle(feats, marks):
    return feats + tf.random.normal(tf.shape(feats), stddev=0.1), marks

def numpy_inside(feats):
    return feats + np.random.normal(size=feats.shape).astype("float32")

def per_element(feats, marks):
    return tf.py_function(numpy_inside, [feats], tf.float32), marks

a = table.map(jiggle)
b = table.map(per_element)
c = table.map(lambda feats, marks: (feats * 2.0, marks))
"""
    report = checked_report(run(kernel, cell))
    assert notes_in(report, "side-effects") == notes_in(report, "tf-data") == []
