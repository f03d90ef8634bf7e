from data import Char2Vec, batch_gen, get_chars, source
from model import Engadget, GruRNN

char2vec = Char2Vec(chars=get_chars(), add_unknown=True)
output_char2vec = Char2Vec(chars=" ,.", add_unknown=True)
input_size = char2vec.size
output_size = output_char2vec.size

hidden_size = input_size
layers = 1
batch_size = 64
seq_length = 100

rnn = GruRNN(input_size, hidden_size, output_size, batch_size=batch_size, layers=layers, bi=True)
egdt = Engadget(rnn, char2vec, output_char2vec)
egdt.setup_training(learning_rate=2e-3)

for epoch_num in range(24):
    for batch_ind, (max_len, input_, target_) in enumerate(batch_gen(seq_length, source)):
        egdt.init_hidden_()
        egdt.forward(input_, target_)
        egdt.descent()
