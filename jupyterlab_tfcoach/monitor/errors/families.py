"""Every TensorFlow/Keras error raised through the user's code gets an entry (issue #25).

``explain_failing_line`` is the last of ``_EXPLAINERS``: when no specific explainer took
the error and it is TensorFlow's or Keras's (its traceback passes through them, or it
was raised inside a ``tf.function``, or a family below recognises it from its message),
the entry reads the failing line (``failing_line.py``) and says

    Line N of this cell: `<call>` raised <Type>. `a` is a (8, 3) float32 tensor; `b` is
    a (8, 1) float32 tensor. <the rule that was broken>. <the fix, in the user's names>.

The rule and the fix come from the first *family* of the catalogue ``FAMILIES`` that
recognises the error. A family is one record (``family_record.ErrorFamily``): its name,
the exception type and messages TensorFlow or Keras raise for it (and the op named in
them), the function that reads the operands it needs from the failing line and writes
the rule and the fix, and its course section. The records live beside their reading
code, by theme: ``families_shapes.py``, ``families_keras.py``, ``families_tensors.py``,
``families_data.py``, ``families_data_ops.py``, ``families_ops.py``, ``families_keras_api.py``,
``families_keras_lifecycle.py``, ``families_keras_calls.py``, ``families_overrides.py``,
``families_keras_usage.py``,
``families_model_data.py``, ``families_results.py`` (a Keras call's result used as another kind),
``families_missing_keys.py`` (a key a dict of tensors or compile's dict does not have),
``families_library_values.py`` (a tensor, shape, weight or dataset used as another kind),
``families_text_to_ids.py`` (raw text given to a model whose Embedding reads ids),
``families_positional_inputs.py`` (a layer or model given inputs as several arguments,
a number by position where its call takes a tensor),
``families_bytes_argument.py`` (a string tensor where Python wants bytes),
``families_lookup_key.py`` (a string missing from the learner's own lookup dict),
``families_container_index.py`` (a Python list indexed by a tensor of positions),
``families_while_loop_shape.py`` (a tf.while_loop variable whose shape changes),
``families_segment_ids.py`` (unsorted segment ids given to a sorted segment reduction),
``families_tensor_array.py`` (a TensorArray written past the size it was made with),
``families_saved_model_folder.py`` (a SavedModel folder given to Keras 3's load_model),
``families_tflite.py`` (a TFLite input given another shape, dtype or name than it has),
``families_scan_axis.py`` (tf.scan walking the batch axis where time was meant),
``families_norm_axes.py`` (tf.norm asked for one norm over three or more axes),
``families_reduction_axes.py`` (a reduction over an axis its input does not have),
``families_uneven_batch.py`` (a dataset batch meeting an element of another length: a
``window`` without ``drop_remainder``),
``families_loss_order.py`` (a Keras loss given the predictions first, the labels second),
``families_selected_rows.py`` (rows selected by a mask or indices on one side of a call
that pairs rows),
``families_size_entries.py`` (a size list with fewer entries than the value has axes),
``families_feature_lists.py`` (a tf.train Int64List/FloatList/BytesList given another kind),
``families_joined_arrays.py`` (``+`` between NumPy arrays written to join them, as for lists),
``families_numpy_broadcast.py`` (NumPy arrays that cannot broadcast, in the user's line),
``families_quantile_level.py`` (a NumPy quantile or percentile level outside its range),
``families_integer_indices.py`` (a float array given where NumPy reads integer indices),
``families_declared_structure.py`` (a generator's nesting, strings into a float Input),
``families_keras_tensors.py`` (a TensorFlow function given a functional model's KerasTensors),
``families_single_pair.py`` (one gradient and one variable zipped as if lists),
``families_unbuilt_sequential.py`` (a Sequential's inputs or layer outputs read before it
was built),
``families_gradient_sources.py`` (gradients applied to other variables than they were
taken for),
``families_tape_values.py`` (a NumPy value given to tape.gradient as its target, tensors
given to an optimizer as its variables),
``families_sampling.py`` (a categorical sampler given one row of scores),
``families_refused_dtype.py`` (a value of a dtype an op has no kernel for, cast in the call),
``families_image_ops.py`` (an image op's window larger than the images, depth_to_space
given channels its block size does not divide),
``families_spectrum_bins.py`` (a spectrogram's N // 2 + 1 bins met by a matrix made for
another number),
``families_einsum.py`` (an einsum operand of another rank than its letters in the equation),
``families_container_attribute.py`` (an attribute read on a tuple, list or dict whose
library items have it),
``families_keyword_binding.py`` (a text given by position where the signature's parameter
holds a size or a shape),
``families_dtype_contract.py`` (a where condition that is not bool, integer samples given
to a tf.signal transform),
``families_layer_as_tensor.py`` (a layer given where its `.output` is needed),
``families_absent_mask.py`` (a layer's call reading a mask its plain input lacks),
``families_return_order.py`` (results unpacked in another order than documented),
``families_vector_as_matrix.py`` (a vector where the callee documents a matrix),
``families_ragged_rows.py`` (a ragged tensor's values reshaped into equal rows),
``families_ragged_inputs.py`` (a tf.RaggedTensor given to a Keras 3 layer or model),
``families_header_line.py`` (a CSV file's header line parsed as data),
``families_sparse_duplicates.py`` (a sparse tensor holding a position twice, made dense),
``families_string_join.py`` (Python's ``str.join`` given tensors),
``families_unknown_weight_size.py`` (a layer's weights sized by an input axis of unknown
size: ``Flatten`` after an open axis),
``families_argmax_axis.py`` (classes taken with argmax over the examples' axis),
``families_reduced_whole.py`` (a statistic taken over every axis where one was meant),
``families_weight_lists.py`` (several models' weight lists averaged as one array),
``families_metric_kind.py`` (class scores given to the plain Accuracy metric),
``families_numpy_random.py`` (NumPy's random draws inside a traced function),
``families_lookup_vocabulary.py`` (a value a lookup layer never saw, no OOV index),
``families_repeated_vocabulary.py`` (a lookup's vocabulary given a column, values repeated),
``families_summary_step.py`` (a TensorBoard summary written without a step),
``families_distribute.py`` (a custom loop mixing one replica's values with the strategy's),
``families_lambda_loading.py`` (a saved Lambda layer refused by load_model),
``families_parse_example.py`` (an Example feature declared with too few values),
``families_skipped_embedding.py`` (token ids given to a layer built on embedded vectors),
``families_api_names.py`` (a name TensorFlow or Keras does not have), ``families_callables.py``
(a function called where the function was wanted), ``families_pair_results.py`` (two
results kept in one name),
``families_custom_gradient.py`` (a @tf.custom_gradient function that does not return
(result, gradient function)),
``families_attribute_values.py`` (a tensor where an op takes a Python number),
``families_arguments.py`` (the last family: an argument
value the library refused); adding a family is adding a record there and listing it here.
``docs/report.md`` lists the same families in the same order (a test keeps them equal).
With no family, the entry still names the line, the call and the operands, and the cause
as the library states it when it can be read: its own failing test with the learner's
values (``library_checks.py``), the callee's documented requirement of the argument the
error is about (``documented_arguments.py``, shapes checked by ``documented_shapes.py``),
the message's parameter names as the learner's arguments; else it links the section that
teaches reading shapes and dtypes.

An error raised inside NumPy by a function the failing line called (``np.quantile``,
``np.linalg.solve``) gets the same entry (the line, the call, its values, and NumPy's
message to read against them) when no family knows it. An error in the user's own code
that never reached TensorFlow, Keras or NumPy (``1 / 0``, a ``None`` in plain
arithmetic) is not claimed, unless a family recognises TensorFlow's part in it (item
assignment on an ``EagerTensor``, unpacking an empty gradient list).
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import replace
from typing import Any

from jupyterlab_tfcoach.monitor.errors import (
    families_absent_mask,
    families_api_names,
    families_argmax_axis,
    families_arguments,
    families_attribute_values,
    families_bool_values,
    families_bytes_argument,
    families_callables,
    families_checkpoint_folder,
    families_compile,
    families_container_attribute,
    families_container_index,
    families_custom_gradient,
    families_data,
    families_data_ops,
    families_declared_structure,
    families_distribute,
    families_dtype_contract,
    families_einsum,
    families_feature_lists,
    families_gradient_sources,
    families_header_line,
    families_image_ops,
    families_integer_indices,
    families_joined_arrays,
    families_keras,
    families_keras_api,
    families_keras_arguments,
    families_keras_calls,
    families_keras_lifecycle,
    families_keras_tensors,
    families_keras_usage,
    families_keyword_binding,
    families_lambda_loading,
    families_layer_as_tensor,
    families_layer_chains,
    families_library_values,
    families_list_lengths,
    families_lookup_key,
    families_lookup_vocabulary,
    families_loss_order,
    families_lost_batch_axis,
    families_metric_kind,
    families_missing_keys,
    families_model_data,
    families_norm_axes,
    families_numpy_broadcast,
    families_numpy_random,
    families_operand_dtypes,
    families_ops,
    families_output_structure,
    families_overrides,
    families_pair_results,
    families_parse_example,
    families_positional_inputs,
    families_quantile_level,
    families_ragged_inputs,
    families_ragged_rows,
    families_reduced_whole,
    families_reduction_axes,
    families_refused_dtype,
    families_repeated_vocabulary,
    families_results,
    families_return_order,
    families_sampling,
    families_saved_model_folder,
    families_scan_axis,
    families_schedule_rate,
    families_scores_as_classes,
    families_segment_ids,
    families_selected_rows,
    families_shapes,
    families_signatures,
    families_single_pair,
    families_size_entries,
    families_skipped_embedding,
    families_sparse_duplicates,
    families_spectrum_bins,
    families_string_join,
    families_summary_step,
    families_tape_values,
    families_tensor_array,
    families_tensor_assign,
    families_tensors,
    families_text_to_ids,
    families_tflite,
    families_time_major,
    families_unbuilt_sequential,
    families_uneven_batch,
    families_unknown_weight_size,
    families_unpacking,
    families_vector_as_matrix,
    families_weight_lists,
    families_while_loop_shape,
)
from jupyterlab_tfcoach.monitor.errors.context import (
    CellFrame,
    ErrorContext,
    ParsedError,
    code,
)
from jupyterlab_tfcoach.monitor.errors.documented_arguments import documented_arguments
from jupyterlab_tfcoach.monitor.errors.failing_line import (
    FailingLine,
    Operand,
    read_failing_line,
)
from jupyterlab_tfcoach.monitor.errors.family_record import (
    GENERAL_SECTION,
    ErrorFamily,
    Finding,
    called_numpy,
    raised_by_keras,
    raised_through_library,
    raised_through_numpy,
)
from jupyterlab_tfcoach.monitor.errors.library_checks import library_check

# The catalogue, in the order families are tried: the first that recognises an error
# explains it (matmul's graph message is told apart from element-wise ones by its op).
FAMILIES: tuple[ErrorFamily, ...] = (
    # A custom loop under tf.distribute: per-replica values met by an op, a model or
    # `.numpy()`, strategy.run's arguments not a tuple, a distributed unbatched dataset.
    families_distribute.UNBATCHED_DISTRIBUTED,
    families_distribute.RUN_ARGUMENTS,
    families_distribute.PER_REPLICA_ATTRIBUTE,
    families_distribute.PER_REPLICA_OPERAND,
    # A @tf.custom_gradient function returning its result alone: TensorFlow unpacks the
    # result as the pair, and the message (which depends on its shape) names neither.
    families_custom_gradient.CUSTOM_GRADIENT_RETURN,
    # A tensor given where an op takes a Python number fixed when the op is made.
    families_attribute_values.ATTRIBUTE_VALUE,
    # One example given to a model built on batches, failing inside the learner's call:
    # the cause is the running cell's argument, not the op that met it.
    families_lost_batch_axis.LOST_BATCH_AXIS,
    # Sequence scores in the other layout than a CTC op reads (its shapes fail inside).
    families_time_major.TIME_MAJOR,
    families_time_major.SPARSE_LABELS_BLANK,
    # A ragged tensor given to a Keras layer or model (fails in its first layer).
    families_ragged_inputs.RAGGED_INPUTS,
    # NumPy's random draws in a traced function (a TypeError about None while tracing).
    families_numpy_random.NUMPY_RANDOM_TRACED,
    # What a model's fit/predict or a layer's adapt was given, read from the call.
    families_model_data.FEATURE_COUNT,
    families_text_to_ids.TEXT_TO_IDS,
    families_model_data.MODEL_DATA,
    families_model_data.LOOKUP_DATA,
    families_lookup_vocabulary.NO_OOV_INDEX,
    families_repeated_vocabulary.REPEATED_VOCABULARY,
    families_model_data.UNKNOWN_RANK,
    families_model_data.LABEL_STRUCTURE,
    families_model_data.VALIDATION_DATA,
    families_model_data.ADAPT_PAIRS,
    families_model_data.MODEL_INPUTS,
    families_model_data.NAMED_CLASSES,
    # A Keras call's result used as another kind (Python raises it, in the line).
    families_results.RESULT_MISUSED,
    # A key a dict of tensors (predict's outputs, a dataset element) does not have.
    families_missing_keys.DICT_KEY,
    families_lookup_key.LOOKUP_KEY,
    families_container_index.CONTAINER_INDEX,
    # A tf. function given a functional model's KerasTensors.
    families_keras_tensors.KERAS_TENSOR_IN_TF,
    families_layer_as_tensor.LAYER_AS_TENSOR,
    families_absent_mask.ABSENT_MASK,
    # Class scores given to the plain Accuracy metric (its `equal` meets the shapes).
    families_metric_kind.ACCURACY_OF_SCORES,
    # One gradient and one variable zipped, or one pair, where a list of pairs goes
    # (whatever Keras then meets: a tensor slice, a scalar, a symbolic tensor).
    families_single_pair.SINGLE_PAIR,
    # Gradients applied to other variables than they were taken for (before the shape
    # families: the shapes clash because the pairs are wrong).
    families_gradient_sources.OTHER_VARIABLES,
    # A scan walking the batch axis: its step meets shapes that cannot line up.
    families_scan_axis.SCAN_AXIS,
    # A Keras loss called (predictions, labels): the shapes it then refuses are swapped.
    families_loss_order.LOSS_ORDER,
    # Rows selected on one side of a loss, metric or element-wise op only: the shapes
    # refused differ because the other side was never selected.
    families_selected_rows.SELECTED_ROWS,
    families_return_order.RETURN_ORDER,
    families_vector_as_matrix.VECTOR_AS_MATRIX,
    # Image ops refused by a window or a block size read from the signature and shapes.
    families_image_ops.WINDOW_SIZE,
    families_image_ops.DEPTH_TO_SPACE_CHANNELS,
    # A spectrogram's N // 2 + 1 bins met by a matrix made for N // 2 or N.
    families_spectrum_bins.SPECTRUM_BINS,
    families_einsum.EINSUM_RANK,
    families_shapes.MATMUL,
    families_size_entries.SIZE_ENTRIES,
    families_shapes.BROADCAST,
    families_layer_chains.LAYER_CHAIN,
    families_unknown_weight_size.UNKNOWN_WEIGHT_SIZE,
    families_skipped_embedding.SKIPPED_EMBEDDING,
    families_keras.LAYER_INPUT,
    families_keras.SHAPE_IN_SHAPE,
    families_keras.LABELS,
    families_tensors.ITEM_ASSIGNMENT,
    families_tensor_assign.TENSOR_ASSIGN,
    families_tensors.EMPTY_UNPACK,
    families_shapes.NEGATIVE_SIZE,
    families_tensors.TAPE_WATCH,
    families_tensors.NUMBER_SOURCE,
    families_shapes.UNKNOWN_DIMENSION,
    families_ragged_rows.RAGGED_ROWS,
    families_shapes.RESHAPE,
    families_shapes.SIGNATURE,
    families_signatures.FUNCTION_INPUT_DTYPE,
    families_signatures.SIGNATURE_KEYWORDS,
    families_signatures.SIGNATURE_NAMES,
    families_tflite.TFLITE_INPUT_SHAPE,
    families_tflite.TFLITE_INPUT_DTYPE,
    families_tflite.TFLITE_RUNNER_INPUTS,
    families_shapes.SHAPE_ASSERTION,
    families_tensors.PYTHON_NUMBER,
    families_tensors.CONVERSION_DTYPE,
    families_tensors.MIXED_TYPES,
    families_tensors.ASSIGN_SHAPE,
    families_ops.JOIN,
    families_ops.INDEX_RANGE,
    families_ops.ONE_HOT,
    families_bool_values.BOOL_REDUCTION,
    families_refused_dtype.REFUSED_DTYPE,
    families_dtype_contract.DTYPE_CONTRACT,
    families_operand_dtypes.OPERAND_DTYPES,
    families_ops.TOP_K,
    families_list_lengths.LIST_LENGTHS,
    families_ops.TRANSPOSE,
    families_ops.CROSS_ENTROPY,
    families_ops.CAST_STRING,
    families_declared_structure.STRING_INPUT,
    families_ops.TENSOR_INDEX,
    families_sampling.CATEGORICAL_ROW,
    families_string_join.STRING_JOIN,
    families_data.UNEVEN_XY,
    families_weight_lists.WEIGHT_LISTS,
    families_data.RAGGED_LISTS,
    families_declared_structure.GENERATOR_NESTING,
    families_data.DATASET_AS_LIST,
    families_keras.APPLY_PAIRS,
    families_tape_values.TENSOR_VARIABLES,
    families_tape_values.NUMPY_TARGET,
    families_keras.DISCONNECTED,
    # Short windows at the end of the data (window without drop_remainder) before the
    # reading that pads sequences of different lengths.
    families_uneven_batch.UNEVEN_ELEMENTS,
    families_data.UNEVEN_BATCH,
    families_data.LOOP_SHAPE,
    families_while_loop_shape.WHILE_LOOP_SHAPE,
    families_data.LOOP_DTYPE,
    families_tensor_array.TENSOR_ARRAY_SIZE,
    families_data.CALL_ARGUMENTS,
    families_parse_example.FEATURE_SHAPE,
    # Ops that cut, pack and parse data: their numbers read from the message.
    families_data_ops.UNEVEN_SPLIT,
    families_data_ops.ROW_SPLITS,
    families_data_ops.FILTER_RESULT,
    families_data_ops.NOT_A_NUMBER,
    families_header_line.HEADER_LINE,
    families_sparse_duplicates.SPARSE_REPEATS,
    families_keras_api.INPUT_COUNTS_EXAMPLES,
    # What compile was given, and what fit needs from it.
    families_compile.COMPILE_ARGUMENT_KIND,
    families_compile.NO_LOSS,
    families_compile.CALLBACK_MONITOR,
    families_compile.LOSS_SIGNATURE,
    families_missing_keys.OUTPUT_KEYS,
    families_output_structure.FLAT_METRICS,
    families_output_structure.LABEL_KEYS,
    families_overrides.OVERRIDE_SIGNATURE,
    families_compile.NO_LABELS,
    families_compile.NO_BATCHES,
    # Keras's model API used in the wrong order or with the wrong values.
    families_keras_api.FORGOT_SUPER,
    families_keras_api.NOT_COMPILED,
    families_keras_calls.DATASET_WITH_Y,
    families_keras_calls.CLASS_WEIGHT_OUTPUTS,
    families_keras_calls.NO_CALL,
    families_positional_inputs.POSITIONAL_INPUTS,
    families_positional_inputs.POSITIONAL_NUMBER,
    families_keras_calls.DICT_OF_VALUES,
    families_keras_calls.UNRESOLVED_CHECKPOINT,
    families_checkpoint_folder.CHECKPOINT_FOLDER,
    families_keras_api.VALIDATION_SPLIT,
    families_keras_api.READ_ONLY_PROPERTY,
    families_keras_api.NO_SUCH_LAYER,
    families_keras_api.STEP_RESULT,
    families_keras_api.SAVE_PATH,
    families_saved_model_folder.SAVED_MODEL_FOLDER,
    families_keras_api.UNKNOWN_IDENTIFIER,
    # A tensor, array, shape or dataset used in the user's line as another kind.
    families_library_values.INDEX_PAST_END,
    families_library_values.TENSOR_SLICE_PAST_END,
    families_reduced_whole.REDUCED_WHOLE,
    # A reduction over an axis its input does not have: which written axis is missing
    # (before the model-result reading, which knows no list of axes).
    families_reduction_axes.REDUCTION_AXES,
    families_library_values.AXIS_PAST_RANK,
    families_library_values.VALUE_CALLED,
    families_library_values.NOT_ITERABLE,
    families_library_values.TENSOR_ATTRIBUTE,
    # A tuple, list or dict of library objects read as one of them (after the dataset
    # elements above, which say how to unpack them).
    families_container_attribute.CONTAINER_ATTRIBUTE,
    families_library_values.INFINITE_LENGTH,
    # `+` meant as list concatenation (before the broadcast reading, whose pairing of
    # rows would run and compute something else).
    families_joined_arrays.JOINED_ARRAYS,
    families_numpy_broadcast.NUMPY_BROADCAST,
    # A float array given where NumPy reads indices (np.bincount, an array index).
    families_integer_indices.INTEGER_INDICES,
    families_quantile_level.QUANTILE_LEVEL,
    families_bytes_argument.BYTES_ARGUMENT,
    families_segment_ids.SEGMENT_IDS_ORDER,
    families_feature_lists.FEATURE_LIST_VALUES,
    # Keras 3 used as older tutorials wrote it.
    families_keras_usage.CALLBACK_CLASS,
    families_schedule_rate.SCHEDULE_RATE,
    families_keras_usage.REMOVED_METHOD,
    families_keras_usage.WEIGHTS_AS_MODEL,
    families_keras_usage.TF1_NAME,
    # Any other TensorFlow or Keras name Python could not find: renamed, or mistyped.
    families_api_names.MISSING_NAME,
    families_api_names.KERAS2_ARGUMENT_ORDER,
    # A function called (f(x)) where the API wanted the function (f) to call later.
    families_callables.CALLED_FUNCTION,
    # A Keras object's life: built before its weights are read, known by name when loaded.
    families_keras_lifecycle.NOT_BUILT,
    families_unbuilt_sequential.UNBUILT_SEQUENTIAL,
    families_keras_lifecycle.UNKNOWN_CLASS,
    families_lambda_loading.LAMBDA_LOADING,
    families_keras_lifecycle.NOT_DESERIALIZED,
    families_keras_lifecycle.CONFIG_KEYWORD,
    families_keras_lifecycle.OTHER_WEIGHTS,
    families_keras_lifecycle.LOAD_UNBUILT,
    families_keras_lifecycle.NO_CONFIG,
    # tf.norm over more axes than a pair: the reduction that computes that norm.
    families_norm_axes.NORM_AXES,
    # Classes taken with argmax over the examples, met by another op than a broadcast
    # (which the broadcast family explains): a confusion matrix, a gather.
    families_argmax_axis.ARGMAX_AXIS,
    families_scores_as_classes.SCORES_AS_CLASSES,
    # A result unpacked into the wrong number of names (Python raises it, in the line).
    families_unpacking.UNPACKED_RESULT,
    families_unpacking.SINGLE_LOSS,
    # Two results kept in one name (grads = tf.clip_by_global_norm(...)), used as one.
    families_pair_results.PAIR_KEPT_WHOLE,
    # Arguments of a Keras call that break a rule its message names (exclusive, a shape).
    families_keras_arguments.ARGUMENT_RULE,
    families_keras_arguments.MISSING_REQUIRED,
    # A TensorBoard summary written without a step.
    families_summary_step.NO_SUMMARY_STEP,
    # Last: an argument value refused, recognised by the message naming the argument.
    families_keyword_binding.KEYWORD_BINDING,
    families_arguments.ARGUMENT_VALUE,
)


def explain_failing_line(parsed: ParsedError, context: ErrorContext) -> tuple[str, str] | None:
    """The generic entry: line, call, operands; the family's rule and fix when one matches."""
    line = read_failing_line(context)
    if line is None:
        return None
    through_library = raised_through_library(context, parsed)
    # Families search the whole text: TF puts the key phrase after long node listings.
    whole = replace(parsed, message=parsed.full_message or parsed.message)
    found = _first_finding(whole, line, context, through_library)
    through_numpy = (
        found is None
        and not through_library
        and (
            raised_through_numpy(context)
            # A NumPy function written in C leaves no frame of its own: its error is
            # claimed only in a notebook that uses TensorFlow or Keras (a plain NumPy
            # notebook's refusals are not this coach's to explain).
            or (_tensorflow_or_keras_loaded() and called_numpy(line, context))
        )
    )
    if found is None and not through_library and not through_numpy:
        return None
    if found is not None:
        family, finding = found
        said = finding.rule + (f" Fix: {finding.fix}." if finding.fix else "")
        section = finding.section or family.section
        return f"{line_facts(parsed, context, line, said)} {said}", section
    links = _message_links(whole, line)
    if through_numpy:
        # A NumPy function the line called refused a value (an array from predict or
        # .numpy(), a level, an axis): the line, the call and its values, and NumPy's
        # message to read against them; TensorFlow's documentation says nothing of it.
        said = (
            f"The {parsed.type} above is NumPy's: the NumPy function called on this line "
            "refused one of the values listed here; its message says which rule it broke."
        )
        if links:
            said = f"{links} {said}"
        return f"{line_facts(parsed, context, line, said)} {said}", GENERAL_SECTION
    # What the call expects, from the library's own documentation of its arguments: said
    # in place of "compare with what the call expects" when it states a requirement.
    documented = documented_arguments(whole, line, context)
    # The library's own test that refused the argument, read from its source.
    check = library_check(whole, line, context)
    if documented is not None or check is not None:
        said = " ".join(part for part in (links, check, documented) if part)
        section = (
            GENERAL_SECTION
            if _about_shapes_or_dtypes(parsed)
            else _section_for_part(context, parsed)
        )
        return f"{line_facts(parsed, context, line, said)} {said}", section
    if _about_shapes_or_dtypes(parsed):
        said = (
            f"{links} Compare them with what the call expects."
            if links
            else (
                "Compare these shapes and dtypes with what the call expects (TensorFlow's "
                "message above names the op and the values it got)."
            )
        )
        return f"{line_facts(parsed, context, line, said)} {said}", GENERAL_SECTION
    # No family knows this error and its message is not about shapes or dtypes: say what
    # is known (the line, the call, the values) without blaming shapes, and link the
    # section about the part of the library that refused.
    said = (
        f"The {parsed.type} above says what {_refusing_part(context, parsed)} refused and "
        "why; check it against the values listed here."
    )
    if links:
        said = f"{links} {said}"
    return f"{line_facts(parsed, context, line, said)} {said}", _section_for_part(context, parsed)


_MESSAGE_SHAPE = re.compile(
    r"\((?:None|\d+)(?:, ?(?:None|\d+))*,?\)|\[(?:None|\d+)(?:, ?(?:None|\d+))*\]"
)
_MESSAGE_DTYPE = re.compile(
    r"\b(float16|bfloat16|float32|float64|int8|int16|int32|int64|uint8|bool|string)\b"
)
_MAX_LINKS = 4


def _dims_of(text: str) -> tuple[int | None, ...]:
    inner = text.strip("()[]").replace(" ", "")
    return tuple(None if part == "None" else int(part) for part in inner.split(",") if part)


_WANTS_INTEGER = re.compile(r"must be an? integer|integer type|expected an int", re.IGNORECASE)


def _converted_numbers(text: str, dtype: str, line: FailingLine) -> str | None:
    """A message asking for an integer that names float32, on a line passing Python
    floats: TensorFlow turned those floats into float32 tensors, so the float32 of the
    message is one of them, not a float32 tensor beside them. Names the arguments they
    were passed as (``frame_length=FRAME_LEN``)."""
    if dtype != "float32" or not _WANTS_INTEGER.search(text) or line.call is None:
        return None
    floats = {o.source for o in line.operands if type(o.value) is float}
    if not floats:
        return None
    passed: list[str] = []
    call = line.call if isinstance(line.call, ast.Call) else None
    for keyword in call.keywords if call is not None else ():
        written = line.frame.segment(keyword.value) if keyword.arg else None
        if written in floats and len(passed) < 3:
            passed.append(f"{code(f'{keyword.arg}={written}')} (use {code(f'int({written})')})")
    if not passed:
        return None
    return (
        f"float32 is what TensorFlow made of the Python float passed as "
        f"{' and '.join(passed)}: a Python float becomes a float32 tensor, and an "
        "argument that counts whole things (samples, steps, items) must be an integer"
    )


def _message_links(parsed: ParsedError, line: FailingLine) -> str | None:
    """Which of the line's values the message's shapes and dtypes are: "In the message,
    (None, 6) is `feats`'s shape (10, 6) with its batch size left open; float64 is the
    dtype of `y`." None when the message names none of them."""
    text = (parsed.full_message or parsed.message or "")[:_MESSAGE_CHARS_READ]
    links: list[str] = []
    seen: set[str] = set()
    for found in _MESSAGE_SHAPE.finditer(text):
        written = found.group(0)
        if written in seen or len(links) >= _MAX_LINKS:
            continue
        seen.add(written)
        dims = _dims_of(written)
        if len(dims) < 1:
            continue
        for operand in line.operands:
            shape = operand.shape
            if not shape or operand.kind == "shape":
                continue
            if tuple(shape) == dims:
                links.append(f"{written} is the shape of {code(operand.source)}")
                break
            if (
                len(shape) == len(dims)
                and dims[0] is None
                and len(dims) > 1
                and tuple(shape[1:]) == dims[1:]
            ):
                links.append(
                    f"{written} is the shape of {code(operand.source)} with the batch size "
                    "left open"
                )
                break
    for found in _MESSAGE_DTYPE.finditer(text):
        dtype = found.group(1)
        if dtype in seen or len(links) >= _MAX_LINKS:
            continue
        seen.add(dtype)
        converted = _converted_numbers(text, dtype, line)
        if converted:
            links.append(converted)
            continue
        holders = [
            code(o.source) for o in line.operands if o.dtype == dtype and o.shape is not None
        ]
        if holders:
            links.append(f"{dtype} is the dtype of {', '.join(holders[:3])}")
    return f"In the message, {'; '.join(links)}." if links else None


# Words of the messages TensorFlow and Keras raise about shapes, ranks and dtypes.
_SHAPE_OR_DTYPE_WORDS = (
    "shape",
    "rank",
    "ndim",
    "dimension",
    "dtype",
    "incompatible",
    "size",
    "broadcast",
    "float",
    "int32",
    "int64",
    "must have the same type",
)


def _about_shapes_or_dtypes(parsed: ParsedError) -> bool:
    text = (parsed.full_message or parsed.message or "")[:_MESSAGE_CHARS_READ].lower()
    return any(word in text for word in _SHAPE_OR_DTYPE_WORDS)


_MESSAGE_CHARS_READ = 4000


def _refusing_part(context: ErrorContext, parsed: ParsedError) -> str:
    if raised_by_keras(context):
        return "Keras"
    return "the traced function" if parsed.inside_tf_function else "TensorFlow"


def _section_for_part(context: ErrorContext, parsed: ParsedError) -> str:
    if raised_by_keras(context):
        return KERAS_SECTION
    return TRACING_SECTION if parsed.inside_tf_function else GENERAL_SECTION


KERAS_SECTION = "keras-model-api"
TRACING_SECTION = "tracing"


def _tensorflow_or_keras_loaded() -> bool:
    return "tensorflow" in sys.modules or "keras" in sys.modules


def _first_finding(
    whole: ParsedError, line: FailingLine, context: ErrorContext, through_library: bool
) -> tuple[ErrorFamily, Finding] | None:
    """The first family of ``FAMILIES`` that explains the error, with its finding."""
    for family in FAMILIES:
        if not (through_library or family.without_library):
            continue
        try:
            finding = family.explain(whole, line, context)
        except Exception:
            finding = None
        if finding is not None:
            return family, finding
    return None


def line_facts(parsed: ParsedError, context: ErrorContext, line: FailingLine, said: str) -> str:
    """What every error entry starts with: where it failed (the function, a user class's
    method), the call and the names it was computing, the running cell's call that led
    there, and what each value named there holds; whatever ``said`` (the rule and fix that
    follow) already names is left out, so nothing is said twice."""
    where = line.where[0].upper() + line.where[1:]
    call = line.call_source
    if call and code(call) not in said:
        result = line.result_names()
        fresh = result is not None and f"`{result}" not in said
        computing = f" while computing {code(result)}" if fresh else ""
        parts = [f"{where}: {code(call)} raised {parsed.type}{computing}."]
    else:
        parts = [f"{where} raised {parsed.type}."]
    outer = _call_site(line, context, said)
    if outer:
        parts.append(outer)
    operands = [operand for operand in line.operands if not _described(operand, said)]
    if operands:
        parts.append("; ".join(operand.sentence() for operand in operands) + ".")
    return " ".join(parts)


def _described(operand: Operand, said: str) -> bool:
    """Whether the rule already says what the operand holds (```g`` is None`, ```x`` (the
    left side of `-`) is float64`): naming it alone is not describing it."""
    name = code(operand.source)
    return (
        operand.sentence() in said
        or f"{name} (the " in said
        or (operand.kind == "none" and f"{name} is None" in said)
    )


def _call_site(line: FailingLine, context: ErrorContext, said: str = "") -> str | None:
    """``Called from line 3 of this cell: `reg(one_sample)`; `one_sample` is ...``: the
    running cell's line, when the error happened in a function it called."""
    frames = context.frames()
    if len(frames) < 2:
        return None
    outer = frames[-1]
    if outer is line.frame:
        return None
    outer_line = read_failing_line(_Outermost(context, outer))  # type: ignore[arg-type]
    if outer_line is None or not outer_line.call_source:
        return None
    said_here = f"It was called from {outer_line.where}: {code(outer_line.call_source)}"
    known = {operand.source for operand in line.operands}
    extra = [
        operand
        for operand in outer_line.operands
        if operand.source not in known and not _described(operand, said)
    ]
    if extra:
        said_here += "; " + "; ".join(operand.sentence() for operand in extra[:4])
    return said_here + "."


class _Outermost:
    """An ``ErrorContext`` seen from its outermost cell frame (the running cell's line)."""

    def __init__(self, context: ErrorContext, frame: CellFrame) -> None:
        self._context = context
        self._frame = frame

    def frames(self) -> list[CellFrame]:
        return [self._frame]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)
