"""torch.compile and CPU autocast on a small MLP classifier, as the performance tutorials use
them: a compiled model trained a few steps (its losses must equal an eager twin's), a compiled
loss function with a graph break-free body, then mixed precision with
torch.autocast(device_type="cpu", dtype=torch.bfloat16): which ops run in bfloat16 (linear,
matmul) and which stay float32 (losses), an LSTM and an LSTMCell under autocast, gradients that
come back float32 to float32 parameters, and torch.no_grad inference under autocast. The
backend is an argument (default "inductor"), so a run can compare backends."""

import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, d_in=20, hidden=64, classes=5):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        h = F.gelu(self.norm(self.fc1(x)))
        h = h + torch.tanh(self.fc2(h))
        return self.head(h)


def numpy_init(model, seed):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.normal(0, 0.2, tuple(p.shape)).astype(np.float32)))


def smoothed_nll(logits, target, eps=0.05):
    logp = F.log_softmax(logits, dim=-1)
    nll = -logp.gather(1, target.unsqueeze(1)).squeeze(1)
    return ((1 - eps) * nll - eps * logp.mean(dim=-1)).mean()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="inductor")
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.normal(0, 1, (256, 20)).astype(np.float32))
    y = torch.from_numpy((x[:, :5].numpy() @ rng.normal(0, 1, (5, 5))).argmax(1))

    eager, model = MLP(), MLP()
    numpy_init(eager, 1)
    numpy_init(model, 1)
    compiled = torch.compile(model, backend=args.backend)
    loss_fn = torch.compile(smoothed_nll, backend=args.backend)
    opt_eager = torch.optim.SGD(eager.parameters(), lr=0.1, momentum=0.9)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(6):
        xb, yb = x[step * 32:(step + 1) * 32], y[step * 32:(step + 1) * 32]
        losses = []
        for net, optimizer, criterion in ((eager, opt_eager, smoothed_nll),
                                          (compiled, opt, loss_fn)):
            optimizer.zero_grad()
            loss = criterion(net(xb), yb)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        print(f"step {step} loss {losses[1]:.5f} eager {losses[0]:.5f} "
              f"same {abs(losses[0] - losses[1]) < 1e-5}")
    drift = max((a - b).abs().max().item() for a, b in zip(eager.parameters(), model.parameters()))
    print("compiled shares parameters", compiled.fc1.weight is model.fc1.weight,
          "max drift below 1e-5", drift < 1e-5)

    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    for step in range(6):
        xb, yb = x[step * 32:(step + 1) * 32], y[step * 32:(step + 1) * 32]
        optimizer.zero_grad()
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            hidden = model.fc1(xb)
            logits = model(xb)
            probs = torch.softmax(logits, dim=-1)
            loss = F.cross_entropy(logits, yb)
        loss.backward()
        optimizer.step()
        if step == 0:
            print("autocast dtypes", hidden.dtype, logits.dtype, probs.dtype, loss.dtype,
                  "grad", model.fc1.weight.grad.dtype, "param", model.fc1.weight.dtype)
        print(f"autocast step {step} loss {loss.item():.3f}")

    # a recurrent model under autocast: LSTM layers run in bfloat16, an LSTMCell decoder keeps
    # a float32 cell state
    lstm, cell, head = nn.LSTM(20, 16, batch_first=True), nn.LSTMCell(16, 16), nn.Linear(16, 5)
    for i, m in enumerate((lstm, cell, head)):
        numpy_init(m, 10 + i)
    params = [*lstm.parameters(), *cell.parameters(), *head.parameters()]
    seq_opt = torch.optim.Adam(params, lr=1e-2)
    sequences = x[:192].view(24, 8, 20)
    for step in range(3):
        seq_opt.zero_grad()
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            out, (h, c) = lstm(sequences)
            h2, c2 = cell(out[:, -1], (h[0].float(), c[0].float()))
            loss = F.cross_entropy(head(h2), y[:24])
        loss.backward()
        seq_opt.step()
        print(f"lstm step {step} loss {loss.item():.2f}", out.dtype, h2.dtype, c2.dtype,
              loss.dtype, lstm.weight_ih_l0.grad.dtype)

    model.eval()
    with torch.no_grad(), torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        logits = compiled(x[192:])
        acc = (logits.argmax(1) == y[192:]).float().mean()
    print("autocast inference", logits.dtype, tuple(logits.shape), f"accuracy {acc.item():.2f}")
    print("autocast enabled outside", torch.is_autocast_enabled("cpu"))


if __name__ == "__main__":
    main()
