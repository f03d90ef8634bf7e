from ultra import learning_algorithm
from ultra import utils
