# train.py with the solver callback that reports the precision on every task seen so far
# (the visdom plotting is replaced by a print; the generator callback, dgr.Scholar and
# the models are imported as in the repository).
import copy
from torch import optim
from torch import nn

import utils


def _solver_training_callback(
        loss_log_interval,
        eval_log_interval,
        current_task,
        total_tasks,
        total_iterations,
        test_datasets,
        test_size,
        cuda):

    def cb(solver, progress, batch_index, result):
        if batch_index % loss_log_interval == 0:
            progress.set_description((
                '<Training Solver>    '
                'task: {task}/{tasks} | '
                'loss: {loss:.4} | '
            ).format(task=current_task, tasks=total_tasks, loss=result['loss'].data[0]))

        if batch_index % eval_log_interval == 0:
            precs = [
                utils.validate(
                    solver, test_datasets[i], test_size=test_size,
                    cuda=cuda, verbose=False,
                ) if i + 1 <= current_task else 0 for i in range(len(test_datasets))
            ]
            print('task {}: precisions {}'.format(current_task, precs))

    return cb


def train(scholar, train_datasets, test_datasets, replay_mode,
          generator_iterations=2000,
          solver_iterations=1000,
          importance_of_new_task=.5,
          batch_size=32,
          test_size=1024,
          lr=1e-03, weight_decay=1e-05,
          loss_log_interval=30,
          eval_log_interval=50,
          cuda=False):
    solver_criterion = nn.CrossEntropyLoss()
    solver_optimizer = optim.Adam(scholar.solver.parameters(), lr=lr, weight_decay=weight_decay)
    generator_g_optimizer = optim.Adam(scholar.generator.generator.parameters(), lr=lr, weight_decay=weight_decay)
    generator_c_optimizer = optim.Adam(scholar.generator.critic.parameters(), lr=lr, weight_decay=weight_decay)

    scholar.solver.set_criterion(solver_criterion)
    scholar.solver.set_optimizer(solver_optimizer)
    scholar.generator.set_generator_optimizer(generator_g_optimizer)
    scholar.generator.set_critic_optimizer(generator_c_optimizer)
    scholar.train()

    previous_scholar = None
    previous_datasets = None

    for task, train_dataset in enumerate(train_datasets, 1):
        solver_training_callbacks = [_solver_training_callback(
            loss_log_interval=loss_log_interval,
            eval_log_interval=eval_log_interval,
            current_task=task,
            total_tasks=len(train_datasets),
            total_iterations=solver_iterations,
            test_datasets=test_datasets,
            test_size=test_size,
            cuda=cuda,
        )]

        scholar.train_with_replay(
            train_dataset,
            scholar=previous_scholar,
            previous_datasets=previous_datasets,
            importance_of_new_task=importance_of_new_task,
            batch_size=batch_size,
            generator_iterations=generator_iterations,
            solver_iterations=solver_iterations,
            solver_training_callbacks=solver_training_callbacks,
        )

        previous_scholar = (
            copy.deepcopy(scholar) if replay_mode == 'generative-replay' else
            None
        )
        previous_datasets = (
            train_datasets[:task-1] if replay_mode == 'exact-replay' else
            None
        )
