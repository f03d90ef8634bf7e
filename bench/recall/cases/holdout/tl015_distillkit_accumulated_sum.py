import torch
import torch.nn.functional as F
from tqdm import tqdm


def distillation_loss(student_logits, teacher_logits, labels, temperature=2.0, alpha=0.5):
    soft = F.kl_div(F.log_softmax(student_logits / temperature, dim=-1),
                    F.softmax(teacher_logits / temperature, dim=-1), reduction="batchmean") * temperature ** 2
    hard = F.cross_entropy(student_logits.view(-1, student_logits.size(-1)), labels.view(-1), ignore_index=-100)
    return alpha * soft + (1 - alpha) * hard


def train(student, teacher, dataloader, optimizer, scheduler, config, device):
    student.train()
    teacher.eval()
    accumulation_steps = config["training"]["gradient_accumulation_steps"]
    total_loss = 0.0
    for step, batch in enumerate(tqdm(dataloader)):
        batch = {k: v.to(device) for k, v in batch.items()}
        with torch.no_grad():
            teacher_logits = teacher(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        student_logits = student(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        loss = distillation_loss(student_logits, teacher_logits, batch["labels"],
                                 config["distillation"]["temperature"], config["distillation"]["alpha"])
        loss.backward()
        total_loss += loss.item()
        if (step + 1) % accumulation_steps == 0:
            torch.nn.utils.clip_grad_norm_(student.parameters(), config["training"]["max_grad_norm"])
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            print(f"step {(step + 1) // accumulation_steps}: loss {total_loss:.4f}")
            total_loss = 0.0
