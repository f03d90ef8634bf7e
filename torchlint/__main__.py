from torchlint.launch import run

run()
