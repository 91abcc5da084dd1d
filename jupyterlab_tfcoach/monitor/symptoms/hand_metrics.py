"""Predictions and metrics computed by hand, checked after each completed cell.

Runs the checks that read a cell's own expressions and the values their names hold
(``cell_reading``): a probability threshold on raw scores (``threshold_scores``), a
class picked over the wrong axis or labels in the wrong format (``class_axis``), an
accuracy averaged in an integer dtype (``integer_mean``), a loss or metric given the
model's output and the labels the wrong way round (``swapped_arguments``), category codes
outside a one-hot depth or a layer's range (``category_codes``), probabilities compared
with labels by equality (``probability_equality``) and data normalised over the wrong
axis (``normalisation_axis``), an AUC given thresholded 0/1 predictions
(``ranking_scores``), a Keras probability metric given values outside [0, 1]
(``probability_metrics``) and a percentile asked for with a fraction
(``quantile_scale``); and, each behind its own regular expression (their words are not
the others'), repeated passes of a model with random layers that came out identical
(``repeated_draws``), two views of one input made from one random draw
(``identical_draws``), a between-bounds test joined with the wrong logical operator
(``range_operators``), a variance used as a standard deviation or the reverse
(``spread_statistics``), an argument passed to the learner's own function that its
body never reads (``unused_arguments``) and ``evaluate`` results averaged with losses
and metrics mixed (``evaluation_columns``), and a value the cell made that holds NaN or
infinity, with the op that made it (``nan_sources``), a per-example gather without
``batch_dims`` (``gather_batch``), a learner's layer whose dot product is summed over the
whole batch (``batch_totals``), and ``tape.gradient`` of a target with several entries
used as a Jacobian or a Hessian-vector product (``summed_targets``), and a least-squares
fit by hand without a column of ones on data with an offset (``missing_intercept``), an
R^2 whose total sum of squares is not centred (``uncentred_r2``), a squared distance
divided by a length scale that is not squared in an ``exp`` (``length_scales``). A
cell without the words they look for costs one regular-expression search; a cell seen
before, one dictionary lookup for its parsed source, then a few namespace reads per
candidate expression.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jupyterlab_tfcoach.monitor.report import Note
from jupyterlab_tfcoach.monitor.symptoms.batch_totals import WANTED as LAYER_CALL_WORDS
from jupyterlab_tfcoach.monitor.symptoms.batch_totals import batch_total_notes
from jupyterlab_tfcoach.monitor.symptoms.category_codes import category_code_notes
from jupyterlab_tfcoach.monitor.symptoms.cell_reading import CellCode, CellReader
from jupyterlab_tfcoach.monitor.symptoms.censored_rows import WANTED as SURVIVAL_WORDS
from jupyterlab_tfcoach.monitor.symptoms.censored_rows import censored_row_notes
from jupyterlab_tfcoach.monitor.symptoms.class_axis import class_axis_notes
from jupyterlab_tfcoach.monitor.symptoms.concordance_direction import (
    WANTED as CONCORDANCE_WORDS,
)
from jupyterlab_tfcoach.monitor.symptoms.concordance_direction import concordance_notes
from jupyterlab_tfcoach.monitor.symptoms.constant_seeds import (
    VIEW_WANTED,
    constant_seed_notes,
    equal_seed_view_notes,
)
from jupyterlab_tfcoach.monitor.symptoms.constant_seeds import WANTED as MAP_WORDS
from jupyterlab_tfcoach.monitor.symptoms.dropped_offsets import WANTED as SUM_WORDS
from jupyterlab_tfcoach.monitor.symptoms.dropped_offsets import dropped_offset_notes
from jupyterlab_tfcoach.monitor.symptoms.evaluation_columns import WANTED as MEAN_WORDS
from jupyterlab_tfcoach.monitor.symptoms.evaluation_columns import evaluation_column_notes
from jupyterlab_tfcoach.monitor.symptoms.gather_batch import WANTED as GATHER_WORDS
from jupyterlab_tfcoach.monitor.symptoms.gather_batch import gather_batch_notes
from jupyterlab_tfcoach.monitor.symptoms.identical_draws import WANTED as VIEW_WORDS
from jupyterlab_tfcoach.monitor.symptoms.identical_draws import shared_draw_notes
from jupyterlab_tfcoach.monitor.symptoms.integer_mean import integer_mean_notes
from jupyterlab_tfcoach.monitor.symptoms.integral_length import WANTED as INTEGRAL_WORDS
from jupyterlab_tfcoach.monitor.symptoms.integral_length import integral_notes
from jupyterlab_tfcoach.monitor.symptoms.length_scales import WANTED as SCALE_WORDS
from jupyterlab_tfcoach.monitor.symptoms.length_scales import length_scale_notes
from jupyterlab_tfcoach.monitor.symptoms.log_parameters import WANTED as EXP_WORDS
from jupyterlab_tfcoach.monitor.symptoms.log_parameters import log_parameter_notes
from jupyterlab_tfcoach.monitor.symptoms.missing_intercept import WANTED as FIT_WORDS
from jupyterlab_tfcoach.monitor.symptoms.missing_intercept import missing_intercept_notes
from jupyterlab_tfcoach.monitor.symptoms.nan_sources import WANTED as NAN_WORDS
from jupyterlab_tfcoach.monitor.symptoms.nan_sources import nan_source_notes
from jupyterlab_tfcoach.monitor.symptoms.normalisation_axis import NormalisationAxisCheck
from jupyterlab_tfcoach.monitor.symptoms.probability_equality import probability_equality_notes
from jupyterlab_tfcoach.monitor.symptoms.probability_metrics import probability_metric_notes
from jupyterlab_tfcoach.monitor.symptoms.probability_names import WANTED as PROBABILITY_WORDS
from jupyterlab_tfcoach.monitor.symptoms.probability_names import probability_name_notes
from jupyterlab_tfcoach.monitor.symptoms.quantile_scale import quantile_scale_notes
from jupyterlab_tfcoach.monitor.symptoms.range_operators import (
    WANTED as RANGE_WORDS,
)
from jupyterlab_tfcoach.monitor.symptoms.range_operators import range_operator_notes
from jupyterlab_tfcoach.monitor.symptoms.ranking_scores import ranking_score_notes
from jupyterlab_tfcoach.monitor.symptoms.repeated_draws import WANTED as DRAW_WORDS
from jupyterlab_tfcoach.monitor.symptoms.repeated_draws import repeated_draw_notes
from jupyterlab_tfcoach.monitor.symptoms.reseeded_loops import WANTED as SEED_WORDS
from jupyterlab_tfcoach.monitor.symptoms.reseeded_loops import reseeded_loop_notes
from jupyterlab_tfcoach.monitor.symptoms.spread_statistics import WANTED as SPREAD_WORDS
from jupyterlab_tfcoach.monitor.symptoms.spread_statistics import spread_statistic_notes
from jupyterlab_tfcoach.monitor.symptoms.summed_targets import WANTED as TAPE_WORDS
from jupyterlab_tfcoach.monitor.symptoms.summed_targets import summed_target_notes
from jupyterlab_tfcoach.monitor.symptoms.swapped_arguments import swapped_argument_notes
from jupyterlab_tfcoach.monitor.symptoms.threshold_scores import (
    squashed_cut_notes,
    threshold_notes,
)
from jupyterlab_tfcoach.monitor.symptoms.uncentred_r2 import WANTED as R2_WORDS
from jupyterlab_tfcoach.monitor.symptoms.uncentred_r2 import uncentred_r2_notes
from jupyterlab_tfcoach.monitor.symptoms.unused_arguments import WANTED as CALL_WORDS
from jupyterlab_tfcoach.monitor.symptoms.unused_arguments import unused_argument_notes
from jupyterlab_tfcoach.monitor.symptoms.zero_log_terms import WANTED as LOG_WORDS
from jupyterlab_tfcoach.monitor.symptoms.zero_log_terms import zero_log_notes
from jupyterlab_tfcoach.monitor.word_gates import WordGate, word_gate

_CHECKS: tuple[Callable[[CellCode, dict[str, Any]], list[Note]], ...] = (
    threshold_notes,
    squashed_cut_notes,
    class_axis_notes,
    integer_mean_notes,
    swapped_argument_notes,
    category_code_notes,
    probability_equality_notes,
    ranking_score_notes,
    probability_metric_notes,
    quantile_scale_notes,
)
# Checks whose words are not in ``cell_reading.WANTED``: each runs on a cell holding its own.
_OWN_WORDS: tuple[tuple[WordGate, Callable[[CellCode, dict[str, Any]], list[Note]]], ...] = (
    (word_gate(DRAW_WORDS), repeated_draw_notes),
    (word_gate(VIEW_WORDS), shared_draw_notes),
    (word_gate(RANGE_WORDS), range_operator_notes),
    (word_gate(SPREAD_WORDS), spread_statistic_notes),
    (word_gate(CALL_WORDS), unused_argument_notes),
    (word_gate(MEAN_WORDS), evaluation_column_notes),
    (word_gate(LOG_WORDS), zero_log_notes),
    (word_gate(NAN_WORDS), nan_source_notes),
    (word_gate(GATHER_WORDS), gather_batch_notes),
    (word_gate(LAYER_CALL_WORDS), batch_total_notes),
    (word_gate(CONCORDANCE_WORDS), concordance_notes),
    (word_gate(PROBABILITY_WORDS), probability_name_notes),
    (word_gate(MAP_WORDS), constant_seed_notes),
    (word_gate(VIEW_WANTED), equal_seed_view_notes),
    (word_gate(SEED_WORDS), reseeded_loop_notes),
    (word_gate(EXP_WORDS), log_parameter_notes),
    (word_gate(INTEGRAL_WORDS), integral_notes),
    (word_gate(SUM_WORDS), dropped_offset_notes),
    (word_gate(SURVIVAL_WORDS), censored_row_notes),
    (word_gate(TAPE_WORDS), summed_target_notes),
    (word_gate(FIT_WORDS), missing_intercept_notes),
    (word_gate(R2_WORDS), uncentred_r2_notes),
    (word_gate(SCALE_WORDS), length_scale_notes),
)


class HandMetricChecker:
    """The cell's hand-written predictions and metrics, read after the cell."""

    def __init__(self) -> None:
        self._reader = CellReader()
        self._normalisations = NormalisationAxisCheck()

    def notes(self, source: str, namespace: dict[str, Any]) -> list[Note]:
        # A normalisation waiting for a model is looked for in every later cell.
        code = self._reader.read(source, always=self._normalisations.pending)
        notes: list[Note] = []
        if code is not None:
            for check in (*_CHECKS, self._normalisations):
                try:
                    notes.extend(check(code, namespace))
                except Exception:
                    continue
        own = [check for words, check in _OWN_WORDS if source and words.search(source)]
        if own:
            code = code or self._reader.read(source, always=True)
            for check in own if code is not None else ():
                try:
                    notes.extend(check(code, namespace))
                except Exception:
                    continue
        return notes
