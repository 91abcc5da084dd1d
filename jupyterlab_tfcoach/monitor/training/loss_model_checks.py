"""The after-cell checks of silent loss, model and training bugs read from a cell's source
and what its names hold (issue #25), listed once so the extension runs them in one place:
each is a module of its own, ``notes(source, namespace)``, catching nothing itself (the
extension runs each under its own ``try``)."""

from __future__ import annotations

from jupyterlab_tfcoach.monitor.symptoms import (
    accumulated_means,
    batch_log_dets,
    causal_masks,
    discarded_weights,
    metric_ranges,
    output_reach,
    pretape_terms,
    squashed_logits,
    target_gradients,
    temperature_sampling,
    weighted_averages,
)
from jupyterlab_tfcoach.monitor.training import (
    ascent_updates,
    batch_axis_helpers,
    bootstrap_masks,
    checkpoint_selection,
    clip_ranges,
    clone_copies,
    custom_gradients,
    epsilon_greedy,
    interpolation_signs,
    model_aliases,
    parameter_aliases,
    pseudo_label_selection,
    schedule_arguments,
    schedule_units,
    self_bounded_clips,
    shared_metrics,
    uncentred_predictions,
    unused_loop_names,
    weight_copies,
)

CHECKS = (
    squashed_logits.notes,
    custom_gradients.notes,
    temperature_sampling.notes,
    schedule_arguments.notes,
    schedule_units.notes,
    checkpoint_selection.notes,
    shared_metrics.notes,
    output_reach.notes,
    causal_masks.notes,
    discarded_weights.notes,
    target_gradients.notes,
    pretape_terms.notes,
    accumulated_means.notes,
    batch_log_dets.notes,
    self_bounded_clips.notes,
    clip_ranges.notes,
    metric_ranges.notes,
    unused_loop_names.notes,
    uncentred_predictions.notes,
    pseudo_label_selection.notes,
    batch_axis_helpers.notes,
    model_aliases.notes,
    clone_copies.notes,
    weighted_averages.notes,
    ascent_updates.notes,
    parameter_aliases.notes,
    interpolation_signs.notes,
    weight_copies.notes,
    bootstrap_masks.notes,
    epsilon_greedy.notes,
)
