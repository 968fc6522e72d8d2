"""Nonlinear regression in float64: nn.Sequential, MSELoss, SGD with momentum and StepLR, then
an LBFGS fine-tune (strong Wolfe line search) with a closure."""

import numpy as np
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.backends.cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
torch.manual_seed(0)

rng = np.random.default_rng(0)
X = rng.uniform(-2, 2, size=(256, 3)).astype(np.float32)
y = (np.sin(X[:, :1]) + 0.5 * X[:, 1:2] ** 2 - X[:, 2:3] + 0.05 * rng.standard_normal((256, 1)))
# float64 throughout: LBFGS's line search amplifies rounding differences
x_train = torch.from_numpy(X[:200]).to(device).double()
y_train = torch.tensor(y[:200], dtype=torch.double, device=device)
x_test = torch.FloatTensor(X[200:]).to(torch.float64)
y_test = torch.from_numpy(y[200:])

model = nn.Sequential(
    nn.Linear(3, 32),
    nn.Tanh(),
    nn.Linear(32, 32),
    nn.LeakyReLU(0.1),
    nn.Linear(32, 1),
).to(device).double()


def init_weights(m):
    if isinstance(m, nn.Linear):
        w = rng.normal(0, 1 / np.sqrt(m.in_features), size=tuple(m.weight.shape))
        with torch.no_grad():
            m.weight.copy_(torch.from_numpy(w))
        nn.init.zeros_(m.bias)


model.apply(init_weights)
print("parameters", sum(p.numel() for p in model.parameters()))

criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=40, gamma=0.5)

for epoch in range(120):
    model.train()
    perm = np.random.default_rng(epoch).permutation(200)
    total = 0.0
    for i in range(0, 200, 50):
        idx = torch.from_numpy(perm[i:i + 50])
        optimizer.zero_grad()
        loss = criterion(model(x_train[idx]), y_train[idx])
        loss.backward()
        optimizer.step()
        total += loss.item() * len(idx)
    scheduler.step()
    if epoch % 20 == 19:
        model.eval()
        with torch.no_grad():
            test_loss = criterion(model(x_test), y_test).item()
        print(f"epoch {epoch + 1} train {total / 200:.6f} test {test_loss:.6f} "
              f"lr {scheduler.get_last_lr()[0]:.5f}")

lbfgs = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=20, history_size=10,
                          line_search_fn="strong_wolfe")


def closure():
    lbfgs.zero_grad()
    loss = criterion(model(x_train), y_train)
    loss.backward()
    return loss


for it in range(3):
    loss = lbfgs.step(closure)
    print(f"lbfgs {it} loss {loss.item():.6f}")

with torch.no_grad():
    pred = model(x_test)
    err = (pred - y_test).abs()
print("test mae", f"{err.mean().item():.6f}", "max", f"{err.max().item():.6f}")
print("first predictions", [round(v, 5) for v in pred[:4, 0].tolist()])
