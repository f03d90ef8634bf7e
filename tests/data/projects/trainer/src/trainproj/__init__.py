from .helpers import begin_step as begin_training_step
