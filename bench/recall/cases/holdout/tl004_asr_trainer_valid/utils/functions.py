import torch


def save_model(model, epoch, opt, metrics, label2id, id2label, best_model=False):
    name = "best_model.th" if best_model else "epoch_{}.th".format(epoch)
    torch.save({"model": model.state_dict(), "optimizer": opt.optimizer.state_dict(),
                "epoch": epoch, "metrics": metrics, "label2id": label2id, "id2label": id2label}, name)
