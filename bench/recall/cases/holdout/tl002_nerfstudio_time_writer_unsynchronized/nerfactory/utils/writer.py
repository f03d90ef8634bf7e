import enum
import time

EVENT_WRITERS = []
EVENT_STORAGE = []


class EventName(enum.Enum):
    TOTAL_TRAIN_TIME = "Train Total (time)"
    ITER_LOAD_TIME = "Data Load (time)"
    ITER_TRAIN_TIME = "Train Iter (time)"
    RAYS_PER_SEC = "Rays Per Sec (1/s)"


def put_time(name, duration, step, avg_over_steps=True, update_eta=False):
    EVENT_STORAGE.append({"name": name.value, "write_type": "scalar", "event": duration, "step": step})


class TimeWriter:
    """Timer context manager that calculates duration around wrapped functions"""

    def __init__(self, writer, name, step=None, write=True):
        self.writer = writer
        self.name = name
        self.step = step
        self.write = write
        self.start = None
        self.duration = None

    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *args):
        self.duration = time.perf_counter() - self.start
        update_step = self.step is not None
        if self.write:
            self.writer.put_time(name=self.name, duration=self.duration,
                                 step=self.step if update_step else 0,
                                 avg_over_steps=update_step,
                                 update_eta=self.name == EventName.ITER_TRAIN_TIME)


def put_scalar(name, scalar, step):
    EVENT_STORAGE.append({"name": name.value, "write_type": "scalar", "event": scalar, "step": step})
