"""The analysis library that every rule queries: one semantic model of a module, organised
by concept, each concept in its own module with its own tests. Each analysis is computed at
most once per file, through `FileContext.analysis`.

- `index`: where am I? parents, source order and nodes by type.
- `names`: names and imports, string literals, mentions of a named object.
- `calls`: the parts of a call, arguments bound to parameters.
- `callgraph`: functions, methods, classes, and which local functions a call may run.
- `flow`: loops, execution order through helpers, branches, early exits.
- `dataflow`: which binding a use of a name reads; values assigned to each name.
- `vocabulary` (`rules/_vocabulary.py`, beside the package: the project summaries, which must
  not import LibCST, use it too): every word list behind a name-based guess, and the names
  of torch's API that the analyses recognise.
- `training`: backward passes, optimizer steps, gradient clears, training and epoch loops.
- `modes`: train/eval calls, gradient-free regions, what the code calls a network, where
  the code switches to eval mode.
- `networks`: what a call runs as a network, which networks training runs, whether a
  network's mode matters (its layers, here or in another module); network classes, and the
  names that hold a network whatever they are called.
- `devices`: CUDA placement, where models and a forward's tensors go.
- `loaders`: the loader a loop iterates, and whether its data is already on a device; the
  batch as the loader yielded it, and samples taken from a dataset by index; how a `DataLoader(...)` is built and what its data is;
  distributed samplers, the loaders that draw from them and where those run a pass.
- `inputs`: which moved model a call feeds (`model.generate(ids)` too), the move it made before
  the data got there (also by a caller that passed the model in); tokenizer outputs, CPU tensors,
  tensors whose move was thrown away.
- `graphs`: which values carry autograd history, what backward passes consume.
- `grad_regions`: whether a node runs with gradients off (also through its callers).
- `evaluation`: eval-mode timelines, runs of a model in eval mode, deliberate gradients.
- `accumulation`: steps every N iterations and whether the loss is divided by N.
- `amp`: autocast regions in float16, loss scalers and their updates.
- `fixes`: building blocks of autofixes.
- `timing`: wall-clock reads and the measurements they make.
- `synchronization`: which calls queue CUDA work and which wait for it; implicit host reads.
- `iterations`: what one iteration of a loop runs, through local calls, and in which order;
  the loops that train, and what gives each iteration fresh gradients.
- `training_evaluations`: evaluation code in training, layers frozen in eval mode on purpose;
  evaluation passes written in training code that leave the network in training mode.
- `phases`: one function that trains or evaluates depending on a phase argument.
- `freezing`: networks whose parameters are frozen, or kept out of training by what they are.
- `gradients`: whose gradients a clear empties, which parameters an optimizer updates.
- `totals`: running totals kept across the iterations of a loop or of a per-step method.
- `expected_warnings`: code that runs where a warning is expected (a test checking for it).
- `schedules`: learning-rate schedule steps and optimizer updates, also by project helpers.

Rules use it as `from torchlint.rules import _analysis as an` and call `an.index(ctx)`,
`an.flow(ctx)`, ...: the names imported below are the library's interface to rules.
"""

from __future__ import annotations

from torchlint.rules._analysis.index import (
    children as children,
    UNCACHED_ORDERS as UNCACHED_ORDERS,
    Index as Index,
    index as index,
    first as first,
)
from torchlint.rules._analysis.names import (
    dotted as dotted,
    last_name as last_name,
    Imports as Imports,
    imports as imports,
    calls_to as calls_to,
    string_text as string_text,
    mentions as mentions,
)
from torchlint.rules._analysis.calls import (
    method_name as method_name,
    receiver as receiver,
    callee_name as callee_name,
    keyword as keyword,
    positional as positional,
    is_false as is_false,
    first_argument as first_argument,
    same_expr as same_expr,
    bind_arguments as bind_arguments,
    binds_self as binds_self,
    positional_parameters as positional_parameters,
    parameter_names as parameter_names,
    called_module as called_module,
    call_taking as call_taking,
)
from torchlint.rules._analysis.callgraph import (
    Functions as Functions,
    functions as functions,
)
from torchlint.rules._analysis.flow import (
    LOOP_TYPES as LOOP_TYPES,
    loop_body_contains as loop_body_contains,
    enclosing_loops as enclosing_loops,
    loops_run_by as loops_run_by,
    Step as Step,
    execution_home as execution_home,
    execution_order as execution_order,
    chain_blocks as chain_blocks,
    MAX_INLINE_DEPTH as MAX_INLINE_DEPTH,
    Event as Event,
    Flow as Flow,
    flow as flow,
    running_scopes as running_scopes,
    in_exclusive_branches as in_exclusive_branches,
    loops_around_callers as loops_around_callers,
    runs_once as runs_once,
    runs_forever as runs_forever,
)
from torchlint.rules._analysis.dataflow import (
    Binding as Binding,
    target_elements as target_elements,
    target_names as target_names,
    assigned_names as assigned_names,
    assigned_values as assigned_values,
    Bindings as Bindings,
    bindings as bindings,
    bound_target as bound_target,
)
from torchlint.rules._vocabulary import (
    name_tokens as name_tokens,
    DEVICE_WORDS as DEVICE_WORDS,
    name_says_optimizer as name_says_optimizer,
    name_says_model_run as name_says_model_run,
    is_optimizer_class as is_optimizer_class,
    MODULE_UTILITY_METHODS as MODULE_UTILITY_METHODS,
    name_says_evaluation as name_says_evaluation,
    MODEL_WRAPPERS as MODEL_WRAPPERS,
    ITERABLE_WRAPPERS as ITERABLE_WRAPPERS,
    is_test_file as is_test_file,
    says_clear_helper as says_clear_helper,
    says_gradient_scaling as says_gradient_scaling,
    says_grad_free as says_grad_free,
    says_host as says_host,
    TENSOR_FACTORIES as TENSOR_FACTORIES,
    says_evaluation_data as says_evaluation_data,
    says_epoch as says_epoch,
    CLIP_NAMES as CLIP_NAMES,
)
from torchlint.rules._analysis.training import (
    Training as Training,
    training as training,
    unwrap_iterable as unwrap_iterable,
    backpropagated as backpropagated,
    FrameworkIteration as FrameworkIteration,
    framework_iterations as framework_iterations,
    counts_epochs as counts_epochs,
    epoch_loops as epoch_loops,
    graph_replays as graph_replays,
)
from torchlint.rules._analysis.modes import (
    is_grad_free_call as is_grad_free_call,
    grad_free_decorated as grad_free_decorated,
    in_grad_free_block as in_grad_free_block,
    model_key as model_key,
    wrapped_model as wrapped_model,
    ModeCall as ModeCall,
    mode_calls as mode_calls,
    runs_with_gradients as runs_with_gradients,
    EvalSwitches as EvalSwitches,
    eval_switches as eval_switches,
    grad_free_statement as grad_free_statement,
)
from torchlint.rules._analysis.networks import (
    looks_like_model as looks_like_model,
    trained_models as trained_models,
    models_run_by as models_run_by,
    mode_owned_elsewhere as mode_owned_elsewhere,
    mode_free as mode_free,
)
from torchlint.rules._analysis.devices import (
    uses_cuda as uses_cuda,
    copies_asynchronously as copies_asynchronously,
    Placements as Placements,
    placements as placements,
    ParallelWraps as ParallelWraps,
    parallel_wraps as parallel_wraps,
    process_group_inits as process_group_inits,
    ddp_wrappers as ddp_wrappers,
    backend as backend,
    gpu_selected as gpu_selected,
    Share as Share,
    ProcessDevices as ProcessDevices,
    process_devices as process_devices,
)
from torchlint.rules._analysis.inputs import (
    model_call as model_call,
    ModelMoves as ModelMoves,
    model_moves as model_moves,
    TokenizerOutput as TokenizerOutput,
    tokenizer_call as tokenizer_call,
    tokenizer_outputs as tokenizer_outputs,
    calls_on_tokenizer_output as calls_on_tokenizer_output,
    TENSOR_ONLY_METHODS as TENSOR_ONLY_METHODS,
    DiscardedMove as DiscardedMove,
    discarded_tensor_moves as discarded_tensor_moves,
    calls_after_discarded_move as calls_after_discarded_move,
    HostTensor as HostTensor,
    host_conversion as host_conversion,
    host_tensors as host_tensors,
)
from torchlint.rules._analysis.batch_parts import (
    PartLeftByBranch as PartLeftByBranch,
    parts_left_by_branches as parts_left_by_branches,
    items_left_on_host as items_left_on_host,
)
from torchlint.rules._analysis.fixes import (
    insert_statement as insert_statement,
    insert_before as insert_before,
    insert_first as insert_first,
)
from torchlint.rules._analysis.loaders import (
    LoaderData as LoaderData,
    UnmovedBatch as UnmovedBatch,
    loader_data as loader_data,
    batch_target as batch_target,
    raw_batch as raw_batch,
    calls_on_raw_batch as calls_on_raw_batch,
    calls_on_raw_data as calls_on_raw_data,
    calls_on_raw_sample as calls_on_raw_sample,
    calls_after_binding as calls_after_binding,
    DatasetSample as DatasetSample,
    dataset_samples as dataset_samples,
    discarded_moves as discarded_moves,
    batch_items as batch_items,
    TENSORS_FROM_DATA as TENSORS_FROM_DATA,
    forgotten_batch_parts as forgotten_batch_parts,
    parts_moved_by as parts_moved_by,
    part_uses_with_output as part_uses_with_output,
    forgotten_part_uses as forgotten_part_uses,
    ForgottenPartUse as ForgottenPartUse,
    sets_epoch_for as sets_epoch_for,
    loader_setting as loader_setting,
    loader_settings as loader_settings,
    LoaderSettings as LoaderSettings,
    only_first_batch as only_first_batch,
    LoaderSources as LoaderSources,
    loader_sources as loader_sources,
    places_tensor as places_tensor,
    Sampler as Sampler,
    distributed_samplers as distributed_samplers,
    one_per_binding as one_per_binding,
    loader_passes as loader_passes,
    loops_over as loops_over,
    PASS_WRAPPERS as PASS_WRAPPERS,
)
from torchlint.rules._analysis.amp import (
    Amp as Amp,
    amp as amp,
    scales_loss as scales_loss,
)
from torchlint.rules._analysis.graphs import (
    Backpropagated as Backpropagated,
    backpropagated_names as backpropagated_names,
    detached as detached,
    is_loss_call as is_loss_call,
    mentioned_names as mentioned_names,
    no_graph as no_graph,
    returns_backpropagated_loss as returns_backpropagated_loss,
    helper_backpropagated_loss as helper_backpropagated_loss,
)
from torchlint.rules._analysis.accumulation import (
    Accumulation as Accumulation,
    accumulations as accumulations,
    LoopAccumulation as LoopAccumulation,
    loop_accumulations as loop_accumulations,
    clears_between_passes as clears_between_passes,
    divides_loss as divides_loss,
    every_n as every_n,
    PeriodicClear as PeriodicClear,
    periodic_clear as periodic_clear,
    runs_every_iteration_of as runs_every_iteration_of,
    loss_divisors as loss_divisors,
    uses_framework_accumulation as uses_framework_accumulation,
    UnheldClear as UnheldClear,
    unheld_clears as unheld_clears,
)
from torchlint.rules._analysis.grad_regions import (
    GradRegions as GradRegions,
    grad_regions as grad_regions,
)
from torchlint.rules._analysis.evaluation import (
    Evaluations as Evaluations,
    ModeEvent as ModeEvent,
    evaluations as evaluations,
    forward_key as forward_key,
)
from torchlint.rules._vocabulary import (
    name_says_forward as name_says_forward,
)
from torchlint.rules._analysis.timing import (
    Measurement as Measurement,
    Clocks as Clocks,
    clocks as clocks,
    timed_blocks as timed_blocks,
    hook_measurements as hook_measurements,
    project_timer_calls as project_timer_calls,
)
from torchlint.rules._analysis.networks import (
    Networks as Networks,
    networks as networks,
    is_cpu_literal as is_cpu_literal,
)
from torchlint.rules._analysis.synchronization import (
    Effect as Effect,
    GpuWork as GpuWork,
)
from torchlint.rules._analysis.iterations import (
    Part as Part,
    Iterations as Iterations,
    iterations as iterations,
)
from torchlint.rules._analysis.freezing import (
    Freezing as Freezing,
    freezing as freezing,
)
from torchlint.rules._analysis.phases import (
    PhaseStep as PhaseStep,
    phase_steps as phase_steps,
    runs_in_train_mode as runs_in_train_mode,
)
from torchlint.rules._analysis.training_evaluations import (
    TrainingEvaluations as TrainingEvaluations,
    training_evaluations as training_evaluations,
    UnmodedEvaluation as UnmodedEvaluation,
    drawn_batch as drawn_batch,
)
from torchlint.rules._analysis.gradients import (
    cleared_object as cleared_object,
    gradient_writes as gradient_writes,
    mentioned_prefixes as mentioned_prefixes,
    OptimizedParameters as OptimizedParameters,
    optimized_parameters as optimized_parameters,
)
from torchlint.rules._analysis.totals import (
    RunningTotal as RunningTotal,
    running_totals as running_totals,
    per_step_methods as per_step_methods,
    Iteration as Iteration,
    helper_totals as helper_totals,
    running_meters as running_meters,
    added_operand as added_operand,
    summed as summed,
    container as container,
    restarted_in_iteration as restarted_in_iteration,
    LoopBinding as LoopBinding,
    binding_before as binding_before,
)
from torchlint.rules._analysis.flow import (
    never_runs as never_runs,
    skipped_by as skipped_by,
    literal_truth as literal_truth,
    literal_number as literal_number,
    shared_iteration as shared_iteration,
)
from torchlint.rules._analysis.iterations import (
    TrainingLoops as TrainingLoops,
    training_loops as training_loops,
)
from torchlint.rules._analysis.flow import (
    skips_first_iteration as skips_first_iteration,
)
from torchlint.rules._analysis.training import (
    engine_steps as engine_steps,
)
from torchlint.rules._vocabulary import (
    says_scheduler as says_scheduler,
)
from torchlint.rules._analysis.expected_warnings import (
    ExpectedWarnings as ExpectedWarnings,
    expects_warning as expects_warning,
    expected_warnings as expected_warnings,
)
from torchlint.rules._analysis.schedules import (
    Schedules as Schedules,
    schedules as schedules,
)
