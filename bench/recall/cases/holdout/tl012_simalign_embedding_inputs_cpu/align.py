from simalign.simalign import SentenceAligner

myaligner = SentenceAligner(model="bert", token_type="bpe", matching_methods="m", device="cuda")

src_sentence = ["This", "is", "a", "test", "."]
trg_sentence = ["Das", "ist", "ein", "Test", "."]

alignments = myaligner.get_word_aligns(src_sentence, trg_sentence)
for matching_method in alignments:
    print(matching_method, ":", alignments[matching_method])
