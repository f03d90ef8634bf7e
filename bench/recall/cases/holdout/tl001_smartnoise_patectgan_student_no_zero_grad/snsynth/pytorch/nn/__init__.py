from .patectgan import PATECTGAN
