"""A tabular binary classifier as in the "entity embeddings" tutorials: one nn.Embedding per
categorical column (in an nn.ModuleList), a sparse nn.EmbeddingBag(mode="mean") over a
variable-length multi-hot column stepped by plain SGD, BatchNorm1d on the continuous columns, an
MLP with BatchNorm1d, Dropout(0) and ReLU, BCEWithLogitsLoss(pos_weight=...), AdamW with
ReduceLROnPlateau for the dense parameters, a DataLoader over a TensorDataset with persistent
workers (still alive when the program ends), early stopping on the validation loss keeping a
deepcopy of the best state_dict, and a checkpoint (model + optimizer + epoch) saved with
torch.save and loaded back into a fresh model and optimizer, whose predictions and next step
must equal the original's."""

import copy
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

CARDINALITIES = [7, 12, 4]
N_TAGS = 9


class TabularModel(nn.Module):
    def __init__(self, cardinalities, n_cont, hidden=(32, 16)):
        super().__init__()
        self.embeds = nn.ModuleList(
            [nn.Embedding(c, min(8, (c + 1) // 2)) for c in cardinalities])
        self.tags = nn.EmbeddingBag(N_TAGS, 4, mode="mean", sparse=True)
        self.bn_cont = nn.BatchNorm1d(n_cont)
        n_in = sum(e.embedding_dim for e in self.embeds) + 4 + n_cont
        layers = []
        for width in hidden:
            layers += [nn.Linear(n_in, width), nn.ReLU(inplace=True), nn.BatchNorm1d(width),
                       nn.Dropout(0.0)]
            n_in = width
        layers.append(nn.Linear(n_in, 1))
        self.layers = nn.Sequential(*layers)

    def forward(self, x_cat, x_cont, tags, offsets):
        x = [e(x_cat[:, i]) for i, e in enumerate(self.embeds)]
        x = torch.cat(x + [self.tags(tags, offsets), self.bn_cont(x_cont)], 1)
        return self.layers(x).squeeze(-1)


def make_data(rng, n):
    x_cat = np.stack([rng.integers(0, c, n) for c in CARDINALITIES], axis=1)
    x_cont = rng.normal(0, 1, (n, 3)) * [1.0, 5.0, 0.2] + [0.0, 10.0, -1.0]
    n_tags = rng.integers(1, 4, n)
    tags = rng.integers(0, N_TAGS, n_tags.sum())
    logit = (np.sin(x_cat[:, 0]) + 0.3 * (x_cat[:, 1] % 3) - 0.4 * (x_cont[:, 1] - 10) / 5
             + 0.5 * x_cont[:, 0] - 1.0)
    y = (logit + rng.normal(0, 0.5, n) > 0).astype(np.float32)
    return x_cat, x_cont.astype(np.float32), tags, n_tags, y


def bag_inputs(tags, n_tags, index):
    """Tags and offsets for the rows `index` of a ragged tag column."""
    starts = np.concatenate([[0], np.cumsum(n_tags)[:-1]])
    rows = [tags[starts[i]:starts[i] + n_tags[i]] for i in index]
    offsets = np.concatenate([[0], np.cumsum([len(r) for r in rows])[:-1]])
    return torch.from_numpy(np.concatenate(rows)), torch.from_numpy(offsets)


def evaluate(model, loader, tags, n_tags, criterion):
    model.eval()
    total, correct, count = 0.0, 0, 0
    with torch.no_grad():
        for x_cat, x_cont, y, idx in loader:
            logits = model(x_cat, x_cont, *bag_inputs(tags, n_tags, idx.numpy()))
            total += criterion(logits, y).item() * len(y)
            correct += ((torch.sigmoid(logits) > 0.5).float() == y).sum().item()
            count += len(y)
    return total / count, correct / count


def main():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x_cat, x_cont, tags, n_tags, y = make_data(rng, 600)
    dataset = TensorDataset(torch.from_numpy(x_cat), torch.from_numpy(x_cont),
                            torch.from_numpy(y), torch.arange(600))
    train_set = torch.utils.data.Subset(dataset, range(0, 480))
    valid_set = torch.utils.data.Subset(dataset, range(480, 600))
    train_loader = DataLoader(train_set, batch_size=64, shuffle=False, drop_last=True,
                              num_workers=2, persistent_workers=True)
    valid_loader = DataLoader(valid_set, batch_size=50)
    print("batches", len(train_loader), len(valid_loader), "positives", int(y.sum()))

    model = TabularModel(CARDINALITIES, 3)
    init = np.random.default_rng(1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() > 1:
                p.copy_(torch.from_numpy(init.normal(0, 0.2, tuple(p.shape)).astype("f4")))
            elif name.endswith("bias"):
                p.zero_()
    pos_weight = torch.tensor([(len(y) - y.sum()) / y.sum()])
    criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    # the sparse embedding's gradients go to plain SGD, the rest to AdamW
    dense_params = [p for n, p in model.named_parameters() if not n.startswith("tags.")]
    optimizer = torch.optim.AdamW(dense_params, lr=2e-2, weight_decay=1e-2)
    sparse_optimizer = torch.optim.SGD(model.tags.parameters(), lr=0.5)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5,
                                                           patience=1)

    best_loss, best_state, best_epoch, patience, bad_epochs = float("inf"), None, -1, 3, 0
    for epoch in range(20):
        model.train()
        running = 0.0
        for x_cat_b, x_cont_b, y_b, idx in train_loader:
            optimizer.zero_grad()
            sparse_optimizer.zero_grad()
            loss = criterion(model(x_cat_b, x_cont_b, *bag_inputs(tags, n_tags, idx.numpy())),
                             y_b)
            loss.backward()
            optimizer.step()
            sparse_optimizer.step()
            running += loss.item()
        val_loss, val_acc = evaluate(model, valid_loader, tags, n_tags, criterion)
        scheduler.step(val_loss)
        print(f"epoch {epoch} train {running / len(train_loader):.4f} valid {val_loss:.4f} "
              f"acc {val_acc:.4f} lr {optimizer.param_groups[0]['lr']:.5f}")
        if val_loss < best_loss - 1e-4:
            best_loss, best_epoch, bad_epochs = val_loss, epoch, 0
            best_state = copy.deepcopy(model.state_dict())
        else:
            bad_epochs += 1
            if bad_epochs >= patience:
                print(f"early stopping at epoch {epoch}, best epoch {best_epoch}")
                break

    model.load_state_dict(best_state)
    print(f"restored best valid {evaluate(model, valid_loader, tags, n_tags, criterion)[0]:.4f}")
    print("state keys", len(best_state), [k for k in best_state if "num_batches" in k][:2])

    path = os.path.join(tempfile.mkdtemp(), "tabular.pt")
    torch.save({"epoch": best_epoch, "model_state_dict": model.state_dict(),
                "optimizer_state_dict": optimizer.state_dict(), "loss": best_loss}, path)
    checkpoint = torch.load(path, weights_only=True)
    restored = TabularModel(CARDINALITIES, 3)
    restored.load_state_dict(checkpoint["model_state_dict"])
    restored_opt = torch.optim.AdamW(
        [p for n, p in restored.named_parameters() if not n.startswith("tags.")], lr=2e-2,
        weight_decay=1e-2)
    restored_opt.load_state_dict(checkpoint["optimizer_state_dict"])
    print("checkpoint epoch", checkpoint["epoch"], f"loss {checkpoint['loss']:.4f}",
          "lr", restored_opt.param_groups[0]["lr"],
          "adam steps", restored_opt.state_dict()["state"][0]["step"].item())

    x_cat_b, x_cont_b, y_b, idx = next(iter(train_loader))
    bags = bag_inputs(tags, n_tags, idx.numpy())
    for m, opt in ((model, optimizer), (restored, restored_opt)):
        m.train()
        m.zero_grad()
        criterion(m(x_cat_b, x_cont_b, *bags), y_b).backward()
        opt.step()
        m.eval()
    with torch.no_grad():
        a, b = model(x_cat_b, x_cont_b, *bags), restored(x_cat_b, x_cont_b, *bags)
    print("round trip identical", torch.equal(a, b), f"{a.abs().sum().item():.4f}")
    missing = restored.load_state_dict({k: v for k, v in best_state.items()
                                        if not k.startswith("tags")}, strict=False)
    print("missing", missing.missing_keys, "unexpected", missing.unexpected_keys)


if __name__ == "__main__":
    main()
