import time
from contextlib import contextmanager

import alf.summary as summary


@contextmanager
def record_time(tag, interval=1):
    """A context manager to record the execution time of its body.

    Args:
        tag (str): the summary tag for the time
        interval (int): the summary is written once every ``interval`` calls
    """
    start_time = time.time()
    yield
    if summary.should_record_summaries():
        summary.scalar(tag, time.time() - start_time)


def summarize_loss(loss_info):
    summary.scalar("loss", loss_info.loss.mean())
