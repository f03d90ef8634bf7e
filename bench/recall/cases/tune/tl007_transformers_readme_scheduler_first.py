# The README's optimizer/schedule usage the issue quotes (pytorch-transformers 1.0,
# August 2019), completed into a runnable fine-tuning loop (reconstructed: the model, the
# data and the epoch loop around the quoted lines).
import torch
from torch.utils.data import DataLoader, TensorDataset
from pytorch_transformers import AdamW, WarmupLinearSchedule, BertForSequenceClassification

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

lr = 2e-5
max_grad_norm = 1.0
num_total_steps = 1000
num_warmup_steps = 100
warmup_proportion = float(num_warmup_steps) / float(num_total_steps)  # 0.1

model = BertForSequenceClassification.from_pretrained('bert-base-uncased', num_labels=2).to(device)

input_ids = torch.randint(0, 30522, (3200, 128))
labels = torch.randint(0, 2, (3200,))
train_data = DataLoader(TensorDataset(input_ids, labels), batch_size=32, shuffle=True)

### In PyTorch-Transformers, optimizer and schedules are splitted and instantiated like this:
optimizer = AdamW(model.parameters(), lr=lr, correct_bias=False)  # To reproduce BertAdam specific behavior set correct_bias=False
scheduler = WarmupLinearSchedule(optimizer, warmup_steps=num_warmup_steps, t_total=num_total_steps)  # PyTorch scheduler

model.train()
for epoch in range(10):
    ### and used like this:
    for batch in train_data:
        batch = tuple(t.to(device) for t in batch)
        loss = model(batch[0], labels=batch[1])[0]
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)  # Gradient clipping is not in AdamW anymore (so you can use amp without issue)
        scheduler.step()
        optimizer.step()
        optimizer.zero_grad()
