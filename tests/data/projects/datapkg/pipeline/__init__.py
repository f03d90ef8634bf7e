from .fit import Fitter
from .loaders import image_loaders
