"""A classifier trained from DataLoaders: TensorDataset and a custom Dataset of dicts, shuffling
with worker processes (num_workers=2), RandomSampler with replacement, gradient accumulation over
each epoch (so the shuffled order does not change the numbers), model.eval() with torch.no_grad()
and torch.inference_mode() for evaluation."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, RandomSampler, TensorDataset


class DictDataset(Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"features": self.x[i], "label": int(self.y[i]), "index": i}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.norm = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.norm(self.fc1(x))))


def main():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    centers = rng.normal(0, 2, (3, 10))
    labels = rng.integers(0, 3, 300)
    x = (centers[labels] + rng.normal(0, 1.5, (300, 10))).astype(np.float32)
    x_train, y_train = torch.from_numpy(x[:240]), torch.from_numpy(labels[:240])
    x_test, y_test = torch.from_numpy(x[240:]), torch.LongTensor(labels[240:].tolist())

    train_loader = DataLoader(TensorDataset(x_train, y_train), batch_size=32, shuffle=True,
                              num_workers=2)
    first_x, first_y = next(iter(train_loader))
    print("first batch", tuple(first_x.shape), tuple(first_y.shape), first_y.dtype)

    model = Net()
    rng_w = np.random.default_rng(1)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng_w.normal(0, 0.3, tuple(p.shape)).astype("f4")))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.5)

    for epoch in range(8):
        model.train()
        optimizer.zero_grad()
        total, seen = 0.0, []
        for xb, yb in train_loader:
            loss = F.cross_entropy(model(xb), yb, reduction="sum") / len(x_train)
            loss.backward()
            total += loss.item()
            seen.append(len(yb))
        optimizer.step()
        print(f"epoch {epoch} loss {total:.5f} batches {len(seen)} samples {sum(seen)}")

    model.eval()
    correct = 0
    with torch.no_grad():
        for xb, yb in DataLoader(TensorDataset(x_test, y_test), batch_size=16):
            correct += (model(xb).argmax(dim=1) == yb).sum().item()
    print("test accuracy", correct / len(y_test))

    dict_loader = DataLoader(DictDataset(x_test, y_test), batch_size=20, shuffle=True,
                             num_workers=2)
    indices, agree = [], 0
    with torch.inference_mode():
        for batch in dict_loader:
            pred = model(batch["features"]).argmax(dim=1)
            agree += (pred == batch["label"]).sum().item()
            indices += batch["index"].tolist()
    print("dict batches cover every index once", sorted(indices) == list(range(len(y_test))),
          "accuracy", agree / len(y_test))

    sampler = RandomSampler(TensorDataset(x_test, y_test), replacement=True, num_samples=50)
    drawn = list(iter(sampler))
    print("sampler draws", len(drawn), all(0 <= i < len(y_test) for i in drawn))
    loader = DataLoader(TensorDataset(x_test, y_test), batch_size=16, sampler=sampler,
                        drop_last=True)
    print("sampled batches", [len(b[0]) for b in loader])


if __name__ == "__main__":
    main()
