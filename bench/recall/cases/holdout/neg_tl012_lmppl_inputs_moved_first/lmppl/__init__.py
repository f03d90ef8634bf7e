from .ppl_recurrent_lm import LM
