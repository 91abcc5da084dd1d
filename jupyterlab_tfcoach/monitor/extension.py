"""The IPython extension: hooks, the per-cell report and the ``%tfcoach`` magic.

Rules every hook here follows: catch everything (a callback that raises makes
IPython print "Error in callback" into the user's cell), print nothing, hold
no strong reference to user objects, and never import TensorFlow: until the
user imports it, a cell costs one ``sys.modules`` lookup and one small message.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from jupyterlab_tfcoach.monitor import errors, inline
from jupyterlab_tfcoach.monitor import report as reports
from jupyterlab_tfcoach.monitor.course_links import course_link
from jupyterlab_tfcoach.monitor.errors.failing_line import describing_once, done_describing
from jupyterlab_tfcoach.monitor.locations import CellLocator
from jupyterlab_tfcoach.monitor.report import ErrorEntry, Note, Report, TraceEntry, VariableChange
from jupyterlab_tfcoach.monitor.symptoms import (
    adapt_leaks,
    aliased_arrays,
    answer_inputs,
    batch_minmax,
    case_order,
    class_weights,
    compiled_axis,
    complex_casts,
    copied_targets,
    ctc_blanks,
    diagonal_products,
    distribution_axes,
    dtype_names,
    episode_resets,
    evaluation_pipelines,
    exact_accuracy,
    exclusive_bounds,
    fixed_batches,
    float16_overflow,
    float16_results,
    forced_decoding,
    generator_reuse,
    gradient_lists,
    hits_cutoffs,
    ignored_element,
    inverse_scaling,
    label_masks,
    layer_axis,
    layer_config,
    logits_parameters,
    lookup_tables,
    loss_weight_order,
    mask_polarity,
    masked_means,
    metric_order,
    metric_reuse,
    metric_state,
    mixed_precision_policy,
    multiplied_masks,
    normalization_variance,
    one_hot_metrics,
    operand_meaning,
    output_targets,
    overlapping_splits,
    padded_accuracy,
    padded_means,
    padding_sides,
    padding_zeros,
    paired_randomness,
    pairwise_axis,
    partial_vocabulary,
    per_item_reductions,
    position_ids,
    positive_weight,
    rank_counts,
    rank_discounts,
    ranking_direction,
    reordered_pairs,
    rescaled_again,
    reshuffled_passes,
    restandardised_statistics,
    retrieval_metrics,
    reverse_recurrence,
    reversed_shift,
    sampling_noise,
    self_retrieval,
    separate_shuffles,
    shuffled_predictions,
    sorted_splits,
    spectral_order,
    split_names,
    tensor_equality,
    test_selection,
    token_units,
    trained_test_rows,
    unapplied_preprocessing,
    uncentred_pca,
    unit_axis_ops,
    unit_rows,
    unknown_ids,
    unreachable_targets,
    unshifted_targets,
    vectorizer_length,
    whitening_axis,
    whole_data_statistics,
)
from jupyterlab_tfcoach.monitor.symptoms.broadcast import BroadcastFinder
from jupyterlab_tfcoach.monitor.symptoms.call_broadcast import CallBroadcastWatch
from jupyterlab_tfcoach.monitor.symptoms.custom_loops import CustomLoopChecker
from jupyterlab_tfcoach.monitor.symptoms.datasets import DatasetWatcher
from jupyterlab_tfcoach.monitor.symptoms.float16_updates import Float16UpdateWatcher
from jupyterlab_tfcoach.monitor.symptoms.floor_division import (
    floor_division_notes,
    fraction_notes,
)
from jupyterlab_tfcoach.monitor.symptoms.hand_metrics import HandMetricChecker
from jupyterlab_tfcoach.monitor.symptoms.logits_losses import SECTION as LOGITS_SECTION
from jupyterlab_tfcoach.monitor.symptoms.logits_losses import notes as logits_loss_notes
from jupyterlab_tfcoach.monitor.symptoms.reshape_transpose import ReshapeChecker
from jupyterlab_tfcoach.monitor.symptoms.summary_writes import notes as summary_write_notes
from jupyterlab_tfcoach.monitor.symptoms.truncation import truncation_notes
from jupyterlab_tfcoach.monitor.symptoms.whole_array_scaling import WholeArrayScalingCheck
from jupyterlab_tfcoach.monitor.tftypes import TfTypes, tensorflow_module
from jupyterlab_tfcoach.monitor.traces.definitions import DefinitionChecker
from jupyterlab_tfcoach.monitor.traces.registry import TraceRegistry
from jupyterlab_tfcoach.monitor.training import run_outcomes
from jupyterlab_tfcoach.monitor.training.accumulator_resets import notes as accumulator_notes
from jupyterlab_tfcoach.monitor.training.callback_keys import CallbackKeyCheck
from jupyterlab_tfcoach.monitor.training.checkpoint_restores import CheckpointRestoreWatcher
from jupyterlab_tfcoach.monitor.training.detached_restores import notes as detached_restore_notes
from jupyterlab_tfcoach.monitor.training.empty_freezes import notes as empty_freeze_notes
from jupyterlab_tfcoach.monitor.training.fit_symptoms import fit_entries
from jupyterlab_tfcoach.monitor.training.fit_watch import CellFits, FitWatcher
from jupyterlab_tfcoach.monitor.training.forced_training import ForcedTrainingCheck
from jupyterlab_tfcoach.monitor.training.frozen_parameters import FrozenParameterCheck
from jupyterlab_tfcoach.monitor.training.history_reads import notes as history_read_notes
from jupyterlab_tfcoach.monitor.training.loss_model_checks import CHECKS as LOSS_MODEL_CHECKS
from jupyterlab_tfcoach.monitor.training.loss_parameters import swapped_loss_class_notes
from jupyterlab_tfcoach.monitor.training.loss_scaling_steps import notes as loss_scaling_notes
from jupyterlab_tfcoach.monitor.training.multilabel_heads import notes as multilabel_head_notes
from jupyterlab_tfcoach.monitor.training.optimizer_attributes import (
    notes as optimizer_attribute_notes,
)
from jupyterlab_tfcoach.monitor.training.schedule_calls import notes as schedule_call_notes
from jupyterlab_tfcoach.monitor.training.split_after_scaling import (
    notes as split_after_scaling_notes,
)
from jupyterlab_tfcoach.monitor.training.step_definitions import notes as step_definition_notes
from jupyterlab_tfcoach.monitor.training.unit_softmax_layers import notes as unit_softmax_notes
from jupyterlab_tfcoach.monitor.training.unprocessed_test_data import (
    notes as unprocessed_test_notes,
)
from jupyterlab_tfcoach.monitor.variables.attribute_hook import AttributeWatcher
from jupyterlab_tfcoach.monitor.variables.kinds import TENSOR, VARIABLE_KINDS
from jupyterlab_tfcoach.monitor.variables.left_out_sources import (
    left_out_optimizer,
    optimizer_remake,
)
from jupyterlab_tfcoach.monitor.variables.namespace_diff import VariableWatcher
from jupyterlab_tfcoach.monitor.variables.rebind_entries import ReboundReporter
from jupyterlab_tfcoach.monitor.variables.rebind_statements import cell_rebinds
from jupyterlab_tfcoach.monitor.variables.reference_snapshots import reference_notes
from jupyterlab_tfcoach.monitor.variables.stopped_learning import CellTraining, LearningWatcher
from jupyterlab_tfcoach.monitor.variables.tape_gradients import NOT_CONNECTED, GradientWatcher
from jupyterlab_tfcoach.monitor.variables.zero_matrices import notes as zero_matrix_notes

MAGIC_NAME = "tfcoach"
MAX_NAMED = 20_000
# TensorFlow's C++ start-up lines (CPU features, absl) are INFO messages; level 1 hides
# INFO and keeps warnings and errors. TF 2.21's oneDNN line is logged before the level is
# read and shows at every level.
TF_LOG_VARIABLE = "TF_CPP_MIN_LOG_LEVEL"
TF_LOG_QUIET_LEVEL = "1"
_INLINE_MODES = {"on": True, "off": False, "auto": None}
# Set in the kernel's environment by the server extension: a tfcoach panel shows this
# kernel's reports (also when its user loads the monitor by hand).
PANEL_ENV = "TFCOACH_PANEL"
# Entries that already explain a variable a training loop replaced by a tensor.
_REBINDING_CHANGES = ("rebound_to_tensor", "attribute_rebound")


def _fitted_models(cell_fits: CellFits | None) -> frozenset[int]:
    """Ids of the models this cell's fit trained with Keras's own train step."""
    if cell_fits is None:
        return frozenset()
    return frozenset(run.model_id for run in cell_fits.fits if not run.custom_train_step)


def _explains_none_gradient(error: ErrorEntry | None) -> bool:
    """Whether the cell's error entry is a None gradient (``g * lr`` on the None that
    tape.gradient returned) explained with its cause: the note about that tape.gradient
    call would tell the same None gradient again, less precisely."""
    if error is None:
        return False
    return (
        error["type"] == "TypeError"
        and "NoneType" in error["message"]
        and " is None" in error["explanation"]
        and ".gradient" in error["explanation"]
    )


def _tells_loop_name(notes: list[Note], name: str) -> bool:
    """Whether a training-symptom note already says that the loop name ``name`` was only
    rebound (the variables it went through never changed)."""
    marker = f"only rebinds the loop name `{name}`"
    return any(marker in str(n.get("text", "")) for n in notes)


class Monitor:
    """Everything the extension keeps for one shell."""

    def __init__(self, shell: Any, quiet_tensorflow_logs: bool = True) -> None:
        self.shell = shell
        self.quiet_tensorflow_logs = quiet_tensorflow_logs
        self.quieted_logs = False  # whether this monitor set TF_CPP_MIN_LOG_LEVEL
        # Reports are shown under the cell (``inline``) unless a tfcoach panel shows them.
        self.inline: bool | None = None  # None: automatic, on unless panel_managed
        self.locator = CellLocator(shell)
        self.types: TfTypes | None = None
        self.traces: TraceRegistry | None = None
        self.variables: VariableWatcher | None = None
        self.gradients: GradientWatcher | None = None
        self.attributes: AttributeWatcher | None = None
        self.rebound: ReboundReporter | None = None
        self.learning: LearningWatcher | None = None
        self.broadcasts: BroadcastFinder | None = None
        self.datasets: DatasetWatcher | None = None
        self.reshapes = ReshapeChecker()
        self.hand_metrics = HandMetricChecker()
        self.custom_loops = CustomLoopChecker()
        self.call_broadcasts = CallBroadcastWatch(self.locator)
        self.forced_training = ForcedTrainingCheck()
        self.frozen_parameters = FrozenParameterCheck()
        self.restores = CheckpointRestoreWatcher()
        self.float16_updates = Float16UpdateWatcher(self.locator)
        self.callback_keys = CallbackKeyCheck()
        self._call_broadcast_notes: list[Note] = []
        self.whole_array_scaling = WholeArrayScalingCheck()
        self.definitions = DefinitionChecker()
        self._count_now: int | None = None
        self._learning_hooked = False
        self.fits: FitWatcher | None = None
        self._fits_hooked = False
        self._attributes_hooked = False
        self._setup_notes: list[Note] = []
        self._cell_source = ""
        self._names_by_id: dict[int, str] | None = None
        # What the optimizers saw and the sources tape.gradient differentiated, this cell.
        self._cell_training: tuple[Any, set[int]] = (None, set())
        # Plain names this cell rebinds as a for-loop name (see ``_tells_loop_name``).
        self._loop_rebinds: set[str] = set()

    # ------------------------------------------------------------- lifecycle
    def start(self) -> None:
        self._quiet_tensorflow_start_up()
        self.shell.events.register("pre_run_cell", self.pre_run_cell)
        self.shell.events.register("post_run_cell", self.post_run_cell)
        self._attach_tensorflow(imported_during_cell=False)

    def _quiet_tensorflow_start_up(self) -> None:
        """Hide TensorFlow's C++ start-up log lines, which learners read as errors: only
        before TensorFlow is imported (it reads the variable once) and only when the
        user has not chosen a level."""
        if (
            not self.quiet_tensorflow_logs
            or "tensorflow" in sys.modules
            or TF_LOG_VARIABLE in os.environ
        ):
            return
        os.environ[TF_LOG_VARIABLE] = TF_LOG_QUIET_LEVEL
        self.quieted_logs = True
        self._setup_notes.append(
            reports.note(
                f"tfcoach set {TF_LOG_VARIABLE}={TF_LOG_QUIET_LEVEL} before TensorFlow "
                "loaded, so its start-up messages (CPU features) are not printed; "
                "warnings and errors still are (a line saying oneDNN is on may remain: "
                "TensorFlow prints it before reading the variable). To see them, set the "
                "variable yourself "
                "before loading tfcoach (or c.TfCoach.quiet_tensorflow_logs = False)."
            )
        )

    @property
    def panel_managed(self) -> bool:
        """Whether the tfcoach server extension collects this kernel's reports."""
        return os.environ.get(PANEL_ENV) == "1"

    def shows_inline(self) -> bool:
        return self.inline if self.inline is not None else not self.panel_managed

    def stop(self) -> None:
        for event, callback in (
            ("pre_run_cell", self.pre_run_cell),
            ("post_run_cell", self.post_run_cell),
        ):
            try:
                self.shell.events.unregister(event, callback)
            except Exception:
                pass
        self.call_broadcasts.end_cell()
        if self.traces is not None:
            self.traces.uninstall()
        if self.gradients is not None:
            self.gradients.uninstall()
        if self.attributes is not None:
            self.attributes.uninstall()
        if self.learning is not None:
            self.learning.uninstall()
        if self.datasets is not None:
            self.datasets.uninstall()
        self.restores.uninstall()
        self.float16_updates.uninstall()
        if self.fits is not None:
            self.fits.uninstall()

    def _attach_tensorflow(self, imported_during_cell: bool) -> None:
        """Hook TensorFlow once the user has imported it (never import it here)."""
        if self.traces is not None or tensorflow_module() is None:
            return
        self.types = TfTypes.resolve()
        self.traces = TraceRegistry(self.locator)
        self.variables = VariableWatcher(self.types)
        self.variables.stale_training_steps = self.traces.stale_training_steps
        self.gradients = GradientWatcher(self.locator, self.variables.classifier)
        self._setup_notes.extend(self.traces.install(report_existing_traces=imported_during_cell))
        self._setup_notes.extend(self.gradients.install())
        self.attributes = AttributeWatcher(self._kind_of, VARIABLE_KINDS, TENSOR)
        self._attributes_hooked = self.attributes.install()
        self.rebound = ReboundReporter(self.locator, self._kind_of)
        self.learning = LearningWatcher(self._kind_of)
        self._learning_hooked = self.learning.install()
        self.broadcasts = BroadcastFinder(self.locator)
        self.traces.on_new_traces = self.broadcasts.scan_concrete
        self.definitions.mark_told = self.traces.mark_effect_told
        self.definitions.already_told = self.traces.effect_told_now
        self.broadcasts.already_told = self.call_broadcasts.told
        self.datasets = DatasetWatcher(self.locator, self.broadcasts.scan_graph)
        self.datasets.install()
        self.fits = FitWatcher()
        self._fits_hooked = self.fits.install()
        # Load the course index now, with the other one-time costs, rather than in the
        # report of the first cell that has something to say (~12 ms).
        course_link("tracing")
        self.traces.begin_cell(self.locator.cell_token())
        if not imported_during_cell:
            # The namespace as it is now is the baseline for the next cell.
            self.variables.scan(self._namespace(), self._hidden())

    def _refresh_types(self) -> None:
        if self.types is None or self.types.complete or self.variables is None:
            return
        types = TfTypes.resolve()
        if types.missing == self.types.missing:
            # Nothing new was found: keep the classifier's cache and the namespace
            # baseline instead of classifying every name again on every cell.
            return
        self.types = types
        self.variables.refresh_types(self.types)
        if self.gradients is not None:
            self.gradients.classifier = self.variables.classifier

    def _kind_of(self, value: Any) -> str | None:
        # Through the watcher: its classifier is replaced when more TF types appear.
        return self.variables.classifier.kind_of(value) if self.variables is not None else None

    def _name_of(self, value: Any) -> str | None:
        """The user's name for a variable or tensor, for notes (built once per cell, and
        only when a note needs it)."""
        if self._names_by_id is None:
            names: dict[int, str] = {}
            wanted = (*VARIABLE_KINDS, TENSOR)
            for name, candidate in list(self._namespace().items())[:MAX_NAMED]:
                if type(name) is str and not name.startswith("_"):
                    if self._kind_of(candidate) in wanted:
                        names.setdefault(id(candidate), name)
            self._names_by_id = names
        return self._names_by_id.get(id(value))

    def _namespace(self) -> dict[str, Any]:
        namespace = getattr(self.shell, "user_ns", None)
        return namespace if isinstance(namespace, dict) else {}

    def _hidden(self) -> dict[str, Any]:
        hidden = getattr(self.shell, "user_ns_hidden", None)
        return hidden if isinstance(hidden, dict) else {}

    # ----------------------------------------------------------------- hooks
    def pre_run_cell(self, info: Any = None) -> None:
        try:
            self.locator.begin_cell()
            raw_cell = getattr(info, "raw_cell", "")
            self._cell_source = raw_cell if type(raw_cell) is str else ""
            self._attach_tensorflow(imported_during_cell=False)
            if self.traces is not None:
                self.traces.begin_cell(self.locator.cell_token())
            self._names_by_id = None
            if self.gradients is not None:
                self.gradients.begin_cell()
                self.gradients.cell_source = self._cell_source
                self.gradients.name_of = self._name_of
                self.gradients.symptoms.namespace = self._namespace
            if self.attributes is not None:
                self.attributes.take()
            if self.learning is not None:
                if not self._learning_hooked:
                    # Keras' optimizers may be imported after TensorFlow (tf.keras is lazy).
                    self._learning_hooked = self.learning.install()
                self.learning.begin_cell()
            if self.broadcasts is not None:
                self.broadcasts.begin_cell()
            if self.datasets is not None:
                # tf.data's modules load with TensorFlow; retried until they are there.
                self.datasets.install()
                self.datasets.begin_cell()
            if self.fits is not None:
                if not self._fits_hooked:
                    # Keras's trainer module loads with the first keras model, maybe later.
                    self._fits_hooked = self.fits.install()
                self.fits.begin_cell()
            # Checkpoint's module loads with TensorFlow: retried until it is there.
            self.restores.install()
            self.restores.begin_cell()
            # The variables' module loads with TensorFlow: retried until it is there.
            self.float16_updates.install()
            self.float16_updates.begin_cell()
            # Last: its trace function (if the cell calls a watched loss) runs from here.
            self.call_broadcasts.begin_cell(self._cell_source, self._namespace())
        except BaseException:
            pass

    def post_run_cell(self, result: Any = None) -> None:
        try:
            # A cell that raised may not have reached its calls: the names its arguments
            # read could hold an earlier cell's values, so they are not read then.
            completed = getattr(result, "error_in_exec", None) is None
            self._call_broadcast_notes = self.call_broadcasts.end_cell(
                self._namespace() if completed else None
            )
        except BaseException:
            self._call_broadcast_notes = []
        try:
            report = self.build_report(result)
        except BaseException:
            return
        try:
            reports.keep(report)
            # Only a tfcoach panel reads this message type; other frontends (nbclient,
            # VS Code) would log each one as an unknown message.
            if self.panel_managed:
                reports.publish(self.shell, report)
        except BaseException:
            pass
        try:
            if self.shows_inline():
                inline.show(report)
        except BaseException:
            pass

    def build_report(self, result: Any) -> Report:
        started = time.perf_counter()
        info = getattr(result, "info", None)
        execution_count, cell_id = self._execution_count(result), getattr(info, "cell_id", None)
        self._count_now = execution_count
        traces: list[TraceEntry] = []
        variables: list[VariableChange] = []
        error: ErrorEntry | None = None
        notes: list[Note] = []
        describing_once()  # the checks read the same values: each is described once
        try:
            self._attach_tensorflow(imported_during_cell=True)
            self._refresh_types()
            if self._setup_notes:
                notes.extend(self._setup_notes)
                self._setup_notes = []
            if self.traces is not None:
                traces, trace_notes = self.traces.collect()
                notes.extend(trace_notes)
            explained: set[int] = set()
            cell_fits = self.fits.take() if self.fits is not None else None
            if cell_fits is not None and cell_fits.config is not None:
                # Weights a fit left alone because its train step predates their unfreezing
                # are told by ``stale_unfreezes.py``, not as gradients never applied.
                for unfrozen in cell_fits.config.unfrozen:
                    explained |= unfrozen.variable_ids
            if self.variables is not None:
                failed = getattr(result, "error_in_exec", None) is not None
                variables, variable_notes = self._variable_entries(
                    explained, failed, _fitted_models(cell_fits)
                )
                notes.extend(variable_notes)
            if cell_fits is not None:
                fit_variables, fit_notes = fit_entries(
                    cell_fits, self._namespace(), self._cell_source, explained, execution_count
                )
                variables.extend(fit_variables)
                notes.extend(fit_notes)
            notes.extend(
                reference_notes(
                    *self._cell_training, cell_fits, self._namespace(), self._cell_source
                )
            )
            training = self._cell_training[0]
            self._cell_training = (None, set())
            rebinds = [v["name"] for v in variables if v["change"] in _REBINDING_CHANGES]
            error = errors.explain(getattr(result, "error_in_exec", None), self.shell, rebinds)
            if self.gradients is not None:
                if getattr(result, "error_in_exec", None) is None:
                    # A loop name rebound (``for v, g in zip(...): v = v - lr * g``) is told
                    # best by the nothing-trained symptom, which shows the variables did not
                    # move: then that note replaces the name's variable entry.
                    loop_names = self._loop_rebinds & set(rebinds)
                    symptoms = self.gradients.take_symptom_notes(bool(set(rebinds) - loop_names))
                    told = {n for n in loop_names if _tells_loop_name(symptoms, n)}
                    if told:
                        variables = [v for v in variables if v.get("name") not in told]
                    notes.extend(symptoms)
                gradient_notes = self.gradients.take_notes(explained)
                if _explains_none_gradient(error):
                    # The error already tells this None gradient: keep only a note whose
                    # cause is more precise than "not connected" (NumPy in a helper, a
                    # no-gradient op, an untrainable or integer variable).
                    gradient_notes = [n for n in gradient_notes if NOT_CONNECTED not in n["text"]]
                notes.extend(gradient_notes)
            notes.extend(self._symptom_notes(getattr(result, "error_in_exec", None) is None))
            notes = self.float16_updates.without_uncaused_stalls(notes)
            if getattr(result, "error_in_exec", None) is not None and cell_fits is not None:
                try:
                    # A cell that raised after its fit ran: the fit is still known to the
                    # later checks of scores on its arrays (``trained_test_rows.py``).
                    trained_test_rows.remember_ran_fits(
                        self._cell_source, self._namespace(), [f.model() for f in cell_fits.fits]
                    )
                except Exception:
                    pass
            notes.extend(self._logits_loss_notes(result, notes))
            if error is None and not variables:
                notes.extend(self._outcome_notes(cell_fits, training, notes))
        except Exception:
            notes.append(reports.note("tfcoach could not finish this report (internal error)."))
        finally:
            done_describing()
        monitor_ms = round((time.perf_counter() - started) * 1000.0, 3)
        return reports.assemble_report(
            execution_count, cell_id, monitor_ms, traces, variables, error, notes
        )

    def _logits_loss_notes(self, result: Any, notes: list[Note]) -> list[Note]:
        """A probability loss given raw scores (``symptoms/logits_losses.py``), unless a
        note about training that did not move already named that cause."""
        if getattr(result, "error_in_exec", None) is not None:
            return []
        if any((n.get("course") or {}).get("section") == LOGITS_SECTION for n in notes):
            return []
        try:
            return logits_loss_notes(self._cell_source, self._namespace())
        except Exception:
            return []

    def _outcome_notes(
        self, cell_fits: CellFits | None, training: CellTraining | None, notes: list[Note]
    ) -> list[Note]:
        """A training run whose outcome shows it failed (``training/run_outcomes.py``),
        when nothing else in the report explains the cell: only after a fit, a predict or
        a custom loop ran."""
        loops = self.gradients.symptoms.finished if self.gradients is not None else []
        fitted = cell_fits is not None and (cell_fits.fits or cell_fits.predictions)
        stepped = training is not None and bool(training.optimizer_ids)
        if not fitted and not loops and not stepped:
            return []
        if any(n.get("kind") == reports.COACHING for n in notes):
            return []
        try:
            namespace = self._namespace()
            found: list[Note] = []
            if fitted and cell_fits is not None and self.fits is not None:
                found.extend(
                    run_outcomes.fit_notes(
                        cell_fits, namespace, self._cell_source, self.fits.ranges.trained_on
                    )
                )
            if cell_fits is not None and cell_fits.fits:
                return found  # fit's own optimizer steps: learning_rate_decay.py
            held = training.optimizers if training is not None else []
            optimizers = [o for ref in held if (o := ref()) is not None]
            collapsed = run_outcomes.schedule_notes(optimizers, namespace, self._cell_source)
            if collapsed:
                return [*found, *collapsed]
            if loops:
                found.extend(
                    run_outcomes.loop_notes(loops, optimizers, namespace, self._cell_source)
                )
            elif stepped:
                found.extend(
                    run_outcomes.recorded_loss_notes(optimizers, namespace, self._cell_source)
                )
            return found
        except Exception:
            return []

    def _symptom_notes(self, cell_completed: bool) -> list[Note]:
        """Silent bugs found by their symptoms (``symptoms/``): broadcasts in this cell's
        graphs and expressions, reshapes meant as transposes, predictions and metrics
        computed by hand, custom loops' epoch figures and training flags, used-up dataset
        iterators, Python work in dataset functions. A cell that raised may not have reached
        its expressions: the names there could still hold an earlier cell's values, so they
        are not read."""
        notes: list[Note] = []
        # One read of the shell's namespace for every check (the dict itself, never copied).
        namespace = self._namespace()
        try:
            if self.broadcasts is not None:
                if cell_completed:
                    self.broadcasts.scan_cell(self._cell_source, namespace)
                notes.extend(self.broadcasts.take_notes(namespace if cell_completed else None))
            notes.extend(self._call_broadcast_notes)
            self._call_broadcast_notes = []
        except Exception:
            pass
        try:
            if cell_completed:
                notes.extend(self.reshapes.notes(self._cell_source, namespace))
        except Exception:
            pass
        try:
            if cell_completed:
                notes.extend(self.hand_metrics.notes(self._cell_source, namespace))
        except Exception:
            pass
        try:
            if cell_completed:
                notes.extend(self.whole_array_scaling.notes(self._cell_source, namespace))
        except Exception:
            pass
        try:
            if cell_completed:
                notes.extend(truncation_notes(self._cell_source, namespace))
        except Exception:
            pass
        try:
            if cell_completed and self.variables is not None:
                notes.extend(self.custom_loops.notes(self._cell_source, namespace))
        except Exception:
            pass
        try:
            if self.datasets is not None:
                notes.extend(self.datasets.take_notes(namespace, self._cell_source))
        except Exception:
            pass
        try:
            if cell_completed and self.traces is not None:
                notes.extend(self._definition_notes())
        except Exception:
            pass
        for check in (
            separate_shuffles.notes,
            reordered_pairs.notes,
            sorted_splits.notes,
            evaluation_pipelines.notes,
            padded_means.notes,
            masked_means.notes,
            padded_accuracy.notes,
            generator_reuse.notes,
            padding_zeros.notes,
            ctc_blanks.notes,
            ctc_blanks.beam_search_notes,
            padding_sides.notes,
            unapplied_preprocessing.notes,
            class_weights.notes,
            vectorizer_length.notes,
            normalization_variance.notes,
            reshuffled_passes.notes,
            shuffled_predictions.notes,
            layer_config.notes,
            floor_division_notes,
            fraction_notes,
            gradient_lists.notes,
            ignored_element.notes,
            metric_state.notes,
            tensor_equality.notes,
            swapped_loss_class_notes,
            history_read_notes,
            self.forced_training.notes,
            self.frozen_parameters.notes,
            self.restores.notes,
            self.callback_keys.notes,
            empty_freeze_notes,
            summary_write_notes,
            *LOSS_MODEL_CHECKS,
            trained_test_rows.notes,
            overlapping_splits.notes,
            test_selection.notes,
            answer_inputs.notes,
            forced_decoding.notes,
            partial_vocabulary.notes,
            unshifted_targets.notes,
            reversed_shift.notes,
            unit_rows.notes,
            aliased_arrays.notes,
            lookup_tables.notes,
            layer_axis.notes,
            self_retrieval.notes,
            dtype_names.notes,
            spectral_order.notes,
            multiplied_masks.notes,
            complex_casts.notes,
            case_order.notes,
            uncentred_pca.notes,
            batch_minmax.notes,
            whitening_axis.notes,
            token_units.notes,
            label_masks.notes,
            whole_data_statistics.notes,
            rescaled_again.notes,
            restandardised_statistics.notes,
            fixed_batches.notes,
            split_after_scaling_notes,
            unprocessed_test_notes,
            sampling_noise.notes,
            paired_randomness.notes,
            inverse_scaling.notes,
            output_targets.notes,
            copied_targets.notes,
            positive_weight.notes,
            unit_axis_ops.notes,
            distribution_axes.notes,
            float16_overflow.notes,
            float16_results.notes,
            self.float16_updates.notes,
            mixed_precision_policy.notes,
            pairwise_axis.notes,
            unit_softmax_notes,
            multilabel_head_notes,
            metric_reuse.notes,
            exact_accuracy.notes,
            one_hot_metrics.notes,
            loss_weight_order.notes,
            metric_order.notes,
            step_definition_notes,
            accumulator_notes,
            loss_scaling_notes,
            schedule_call_notes,
            optimizer_attribute_notes,
            detached_restore_notes,
            zero_matrix_notes,
            mask_polarity.notes,
            logits_parameters.notes,
            ranking_direction.notes,
            rank_counts.notes,
            hits_cutoffs.notes,
            rank_discounts.notes,
            retrieval_metrics.notes,
            reverse_recurrence.notes,
            exclusive_bounds.notes,
            diagonal_products.notes,
            episode_resets.notes,
            per_item_reductions.reduction_notes,
            split_names.notes,
            position_ids.notes,
            operand_meaning.notes,
            compiled_axis.notes,
            unknown_ids.notes,
            unreachable_targets.notes,
        ):
            try:
                if cell_completed:
                    notes.extend(check(self._cell_source, namespace))
            except Exception:
                pass
        try:
            if cell_completed:
                used = self.fits.preprocessing.used_before if self.fits is not None else None
                notes.extend(adapt_leaks.notes(self._cell_source, namespace, used))
        except Exception:
            pass
        return notes

    def _definition_notes(self) -> list[Note]:
        """What the functions and Keras classes this cell defines will do when traced
        (``traces/definitions.py``): only for a cell that holds ``def`` or ``class``."""
        source = self._cell_source
        if "def " not in source and "class " not in source:
            return []
        files = self.locator.cell_files()
        # The running cell was compiled last: its file has the highest number.
        cell_file = max(files, key=lambda name: files[name]) if files else None
        return self.definitions.notes(source, self._namespace(), cell_file, self._count_now)

    def _variable_entries(
        self,
        explained: set[int],
        cell_failed: bool = False,
        fitted_models: frozenset[int] = frozenset(),
    ) -> tuple[list[VariableChange], list[Note]]:
        """Variables that left training: from the setattr hook, the cell's source and
        the namespace diff, each cause once. ``explained`` gets the ids of the
        tensors that replaced variables (gradient notes about them say the same)."""
        assert self.variables is not None
        namespace = self._namespace()
        cell = cell_rebinds(self._cell_source)
        self._loop_rebinds = {
            r.target for r in cell.rebinds if r.loop_iterable is not None and r.in_function is None
        }
        rebound = self.rebound
        hooked: set[int] = set()
        entries: list[VariableChange] = []
        previous_kinds = {
            r.target: self.variables.known_kind(r.target)
            for r in cell.rebinds
            if "." not in r.target
        }
        if rebound is not None:
            rebound.learn(cell)
            if self.attributes is not None:
                entries, hooked, replaced = rebound.from_attribute_events(self.attributes.take())
                explained |= replaced
        changes, notes = self.variables.scan(
            namespace, self._hidden(), self._attributes_hooked, hooked
        )
        already: set[str] = set()
        for change in changes:
            if change["change"] == "rebound_to_tensor":
                already.add(change["name"])
                explained.add(id(namespace.get(change["name"])))
                if rebound is not None:
                    rebound.improve(change, cell, namespace)
        if rebound is not None:
            from_source, tensor_ids = rebound.from_cell_source(
                cell, namespace, previous_kinds, already, hooked, self._attributes_hooked
            )
            entries.extend(from_source)
            explained |= tensor_ids
        with_gradient = self.gradients.take_sources_with_gradient() if self.gradients else set()
        training = self.learning.take() if self.learning is not None else None
        self._cell_training = (training, with_gradient)
        if self.learning is not None and training is not None and training.calls:
            # Only after a cell in which an optimizer ran: no cost on every other cell.
            entries.extend(
                self.learning.entries(
                    training,
                    namespace,
                    self.variables.holders(namespace, self._hidden()),
                    explained,
                    with_gradient,
                    cell_failed,
                    self.variables.trainable_count,
                    fitted_models,
                )
            )
            if self.gradients is not None:
                # Variables the tape's loss read but no tape.gradient was given.
                optimizer = left_out_optimizer(namespace, training.optimizer_ids)
                entries.extend(
                    self.gradients.left_out.entries(
                        training.with_gradient | set(training.without_gradient),
                        optimizer,
                        explained,
                        optimizer_remake(namespace, optimizer),
                    )
                )
        return entries + changes, notes

    def _execution_count(self, result: Any) -> int | None:
        count = getattr(result, "execution_count", None)
        if type(count) is int:
            return count
        # When IPython's own error display fails (an exception whose __str__ raises),
        # ipykernel passes a result without a count; the cell's number is the
        # shell counter minus one, as in ipykernel's execute_reply.
        shell_count = getattr(self.shell, "execution_count", None)
        return shell_count - 1 if type(shell_count) is int and shell_count > 1 else None

    # ----------------------------------------------------------------- magic
    def magic(self, line: str = "") -> None:
        argument = line.strip()
        if argument == "json":
            import json

            print(json.dumps(reports.last_report(), indent=2))
            return
        words = argument.split()
        if words[:1] == ["inline"]:
            if len(words) != 2 or words[1] not in _INLINE_MODES:
                print("usage: %tfcoach inline on|off|auto")
                return
            self.inline = _INLINE_MODES[words[1]]
            print(self.inline_status())
            return
        if argument:
            print("usage: %tfcoach [json | inline on|off|auto]")
            return
        print(reports.format_report(reports.last_report()))
        print(self.status())
        print(self.inline_status())
        print(self.logs_status())

    def inline_status(self) -> str:
        where = (
            "a tfcoach panel shows them"
            if self.panel_managed
            else "no tfcoach panel listens to this kernel"
        )
        if self.inline is None:
            mode = "on" if self.shows_inline() else "off"
            return f"tfcoach: reports under cells {mode} (automatic: {where})."
        mode = "on" if self.inline else "off"
        return f"tfcoach: reports under cells {mode} (set by %tfcoach inline)."

    def logs_status(self) -> str:
        level = os.environ.get(TF_LOG_VARIABLE)
        if self.quieted_logs:
            return f"tfcoach: set {TF_LOG_VARIABLE}={level} to hide TensorFlow's start-up messages."
        setting = "on" if self.quiet_tensorflow_logs else "off"
        return (
            f"tfcoach: quiet TensorFlow start-up logs {setting}; {TF_LOG_VARIABLE} is "
            f"{level if level is not None else 'not set'}."
        )

    def status(self) -> str:
        if self.traces is None:
            return "tfcoach: waiting for `import tensorflow` (nothing is watched until then)."
        tf = tensorflow_module()
        version = getattr(tf, "__version__", "?") if tf is not None else "?"
        return (
            f"tfcoach: TensorFlow {version}; watching "
            f"{self.traces.live_function_count()} tf.function objects."
        )


_monitor: Monitor | None = None


def current_monitor() -> Monitor | None:
    return _monitor


_quiet_tensorflow_logs = True  # what the next load does (``load_for_panel`` sets it)


def load_ipython_extension(shell: Any) -> None:
    """``%load_ext jupyterlab_tfcoach``; loading again is a no-op."""
    global _monitor
    if _monitor is not None:
        if _monitor.shell is shell:
            return
        unload_ipython_extension(_monitor.shell)
    monitor = Monitor(shell, quiet_tensorflow_logs=_quiet_tensorflow_logs)
    monitor.start()
    try:
        shell.register_magic_function(monitor.magic, magic_kind="line", magic_name=MAGIC_NAME)
    except Exception:
        pass
    _monitor = monitor


def load_for_panel(shell: Any, quiet_tensorflow_logs: bool = True) -> str:
    """What the server extension runs in each kernel it starts: load the monitor through
    IPython's extension manager (so ``%unload_ext`` knows it) and record that the tfcoach
    panel shows its reports, so none are printed under cells. "loaded" or "already
    loaded"."""
    global _quiet_tensorflow_logs
    os.environ[PANEL_ENV] = "1"
    _quiet_tensorflow_logs = quiet_tensorflow_logs
    try:
        result = shell.extension_manager.load_extension("jupyterlab_tfcoach")
    finally:
        _quiet_tensorflow_logs = True
    return result if result == "already loaded" else "loaded"


def unload_ipython_extension(shell: Any) -> None:
    global _monitor
    if _monitor is None or _monitor.shell is not shell:
        return
    _monitor.stop()
    try:
        del shell.magics_manager.magics["line"][MAGIC_NAME]
    except Exception:
        pass
    _monitor = None
