import argparse

from pipeline.eval import eval

parser = argparse.ArgumentParser()
parser.add_argument("--task", choices=["poison", "train", "eval"], default="eval")
parser.add_argument("--model_name_or_path", default="THUDM/agentlm-7b")
parser.add_argument("--lora_path", default="")
parser.add_argument("--data_path", default="data/os_attack_test.json")

if __name__ == "__main__":
    args = parser.parse_args()
    if args.task == "eval":
        eval(args)
