"""Values a lookup layer never saw (issue #25, ``symptoms/unknown_ids.py``): positions given
to an ``IntegerLookup`` adapted on raw ids, ids turned into float text for a
``StringLookup``, another column's values; through ``fit``/``predict`` of a model whose
lookup reads an input, and a direct call. In a real kernel; each fix, run as printed,
makes the layer tell the values apart; correct look-alikes stay quiet."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n",
    after_load="import warnings\nwarnings.simplefilter('ignore')\n",
)
SECTION = "preprocessing-adapt"


def notes_of(report: dict[str, Any], section: str = SECTION) -> list[str]:
    return [
        note["text"]
        for note in report["notes"]
        if (note.get("course") or {}).get("section") == section and "vocabulary" in note["text"]
    ]


def last_code(text: str) -> str:
    return re.findall(r"`([^`]+)`", text)[-1]


RECOMMENDER = """rng = np.random.default_rng(3)
customer_ids = rng.choice(np.arange(5000, 5080), 600)
clicked = (customer_ids % 3 == 0).astype("float32")
customer_index = np.unique(customer_ids, return_inverse=True)[1]
to_slot = keras.layers.IntegerLookup()
to_slot.adapt(customer_ids)
who = keras.Input((1,), dtype="int64", name="customer")
vec = keras.layers.Embedding(to_slot.vocabulary_size(), 8)(to_slot(who))
score = keras.layers.Dense(1, activation="sigmoid")(keras.layers.Flatten()(vec))
ctr = keras.Model(who, score)
ctr.compile("adam", "binary_crossentropy")
"""


def test_positions_given_to_a_lookup_of_raw_ids_in_fit(kernel: KernelSession) -> None:
    run(kernel, RECOMMENDER)
    cell = "ctr.fit(customer_index, clicked, epochs=2, verbose=0)\n"
    [text] = notes_of(checked_report(run(kernel, cell)))
    assert text.startswith(
        "`ctr.fit(...)` gives `to_slot` (an `IntegerLookup` of 80 tokens) the values of "
        "`customer_index`, and 100% of them (600 of 600 sampled) are not in its vocabulary"
    ), text
    assert "these look like positions" in text and "raw ids" in text, text
    # The symptom, measured: every example reaches the Embedding as the same id.
    assert value_of(kernel, "len(np.unique(to_slot(customer_index).numpy()))") == 1
    # The fix as told: the raw ids of the column it was adapted on.
    fixed = "ctr.fit(customer_ids, clicked, epochs=2, verbose=0)\n"
    assert notes_of(checked_report(run(kernel, fixed))) == []
    assert value_of(kernel, "len(np.unique(to_slot(customer_ids).numpy()))") == 80


def test_float_text_ids_in_a_dict_input_told_and_fixed(kernel: KernelSession) -> None:
    setup = """rng = np.random.default_rng(5)
sku_numbers = rng.choice(np.arange(200, 260), 400)
sku_text = np.array([str(n) for n in sku_numbers])
price = rng.random(400).astype("float32")
sold = (sku_numbers % 2).astype("float32") + price
sku_vocab = keras.layers.StringLookup()
sku_vocab.adapt(sku_text)
sku_in = keras.Input((1,), dtype="string", name="sku")
price_in = keras.Input((1,), dtype="float32", name="price")
sku_vec = keras.layers.Embedding(sku_vocab.vocabulary_size(), 4)(sku_vocab(sku_in))
emb = keras.layers.Flatten()(sku_vec)
demand = keras.Model({"sku": sku_in, "price": price_in},
                     keras.layers.Dense(1)(keras.layers.Concatenate()([emb, price_in])))
demand.compile("adam", "mse")
table_rows = {"sku": sku_numbers.astype("float64"), "price": price}
sku_cells = table_rows["sku"].astype(str).astype(object)
"""
    run(kernel, setup)
    cell = 'demand.fit({"sku": sku_cells, "price": price}, sold, epochs=1, verbose=0)\n'
    [text] = notes_of(checked_report(run(kernel, cell)))
    assert text.startswith(
        "`demand.fit(...)` gives `sku_vocab` (a `StringLookup` of 60 tokens) the values of "
        "`sku_cells`, and 100% of them"
    ), text
    assert "float text" in text, text
    fix = last_code(text)
    assert fix == 'sku_cells = sku_cells.astype(float).astype("int64").astype(str).astype(object)'
    run(kernel, fix)
    assert notes_of(checked_report(run(kernel, cell))) == []
    assert value_of(kernel, "len(np.unique(sku_vocab(sku_cells).numpy()))") == 60


def test_another_column_in_a_direct_call_and_a_sequential_fit(kernel: KernelSession) -> None:
    setup = """cities = np.array(["oslo", "lima", "pune", "kyiv", "baku"] * 40)
countries = np.array(["norway", "peru", "india", "ukraine", "azerbaijan"] * 40)
place_ids = keras.layers.StringLookup()
place_ids.adapt(countries)
"""
    run(kernel, setup)
    [text] = notes_of(checked_report(run(kernel, "encoded = place_ids(cities)\n")))
    assert text.startswith(
        "`place_ids(cities)` gives `place_ids` (a `StringLookup` of 5 tokens) the values of "
        "`cities`, and 100% of them (200 of 200 sampled)"
    ), text
    assert "another space" in text, text
    # A Sequential model whose first layer is the lookup, fit on ids it never learned.
    seq = """store_ids = np.arange(300, 340).repeat(5)
old_ids = np.arange(10, 50).repeat(5)
store_lookup = keras.layers.IntegerLookup()
store_lookup.adapt(old_ids)
def build():
    m = keras.Sequential([keras.Input((1,), dtype="int64"), store_lookup,
                          keras.layers.Embedding(store_lookup.vocabulary_size(), 4),
                          keras.layers.Flatten(), keras.layers.Dense(1)])
    m.compile("adam", "mse")
    return m
sales_model = build()
sales = (store_ids % 7).astype("float32")
"""
    run(kernel, seq)
    cell = "sales_model.fit(store_ids, sales, epochs=1, verbose=0)\n"
    [text] = notes_of(checked_report(run(kernel, cell)))
    assert "`sales_model.fit(...)` gives `store_lookup`" in text, text
    fix = "store_lookup.adapt(store_ids)"
    assert f"`{fix}`" in text, text
    run(kernel, f"store_lookup = keras.layers.IntegerLookup()\n{fix}\nsales_model = build()\n")
    assert notes_of(checked_report(run(kernel, cell))) == []
    assert value_of(kernel, "len(np.unique(store_lookup(store_ids).numpy()))") == 40


def test_look_alikes_stay_quiet(kernel: KernelSession) -> None:
    setup = """rng = np.random.default_rng(8)
member_ids = rng.choice(np.arange(900, 960), 500)
member_lookup = keras.layers.IntegerLookup()
member_lookup.adapt(member_ids)
back_to_id = keras.layers.IntegerLookup(vocabulary=member_lookup.get_vocabulary(), invert=True)
inp = keras.Input((1,), dtype="int64", name="member")
out = keras.layers.Dense(1)(keras.layers.Flatten()(
    keras.layers.Embedding(member_lookup.vocabulary_size(), 4)(member_lookup(inp))))
churn = keras.Model(inp, out)
churn.compile("adam", "mse")
target = (member_ids % 2).astype("float32")
"""
    run(kernel, setup)
    quiet = [
        # The layer fed its own vocabulary.
        "churn.fit(member_ids, target, epochs=1, verbose=0)\n",
        "member_lookup(member_ids)\n",
        # A test set where a few members (20%) are new: cold start, not a bug.
        "new_members = np.concatenate([member_ids[:400], np.arange(2000, 2100)])\n"
        "churn.predict(new_members, verbose=0)\n",
        # An inverted lookup turns ids back into values: positions are its input.
        "back_to_id(np.arange(1, 40))\n",
        # A lambda's parameter is not the namespace's name of the same spelling.
        "x = np.arange(50)\n"
        "pairs = tf.data.Dataset.from_tensor_slices((member_ids, target))\n"
        "pairs = pairs.map(lambda x, y: (member_lookup(x), y))\n",
    ]
    for cell in quiet:
        assert notes_of(checked_report(run(kernel, cell))) == [], cell


def test_held_out_ids_cut_by_position_from_rows_grouped_by_id(kernel: KernelSession) -> None:
    setup = """patient = np.repeat(np.arange(7000, 7040), 6)
visits = np.random.default_rng(1).random(len(patient)).astype("float32")
cut = len(patient) // 5
train_patient, test_patient = patient[:-cut], patient[-cut:]
train_visits, test_visits = visits[:-cut], visits[-cut:]
patient_index = keras.layers.IntegerLookup()
patient_index.adapt(train_patient)
pin = keras.Input((1,), dtype="int64", name="patient")
clinic = keras.Model(pin, keras.layers.Dense(1)(keras.layers.Flatten()(
    keras.layers.Embedding(patient_index.vocabulary_size(), 4)(patient_index(pin)))))
clinic.compile("adam", "mse")
"""
    run(kernel, setup)
    cell = "clinic.evaluate(test_patient, test_visits, verbose=0)\n"
    [text] = notes_of(checked_report(run(kernel, cell)))
    assert text.startswith(
        "`clinic.evaluate(...)` gives `patient_index` (an `IntegerLookup` of 32 tokens) the "
        "values of `test_patient`, and 100% of them"
    ), text
    assert "`train_patient, test_patient = patient[:-cut], patient[-cut:]` (cell In[" in text, text
    assert "Shuffle the rows with one permutation for every array before the split" in text
    # The fix as told: one permutation, then the same split and adapt.
    fixed = setup.replace(
        "cut = len(patient) // 5\n",
        "cut = len(patient) // 5\norder = np.random.default_rng(0).permutation(len(patient))\n"
        "patient, visits = patient[order], visits[order]\n",
    )
    run(kernel, fixed)
    assert notes_of(checked_report(run(kernel, cell))) == []
    unknown = "float(np.mean(patient_index(test_patient).numpy() == 0))"
    assert value_of(kernel, unknown) < 0.1
