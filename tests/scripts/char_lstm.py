"""A character-level LSTM language model: Embedding + LSTM + Linear, CrossEntropyLoss, Adam,
gradient clipping, checkpoints (state dict with map_location, and the whole model object loaded
weights-only under torch.serialization.safe_globals), greedy generation."""

import os
import tempfile

import numpy as np
import torch
import torch.nn as nn

TEXT = ("the quick brown fox jumps over the lazy dog. a stitch in time saves nine. "
        "all that glitters is not gold. the early bird catches the worm. ") * 4
chars = sorted(set(TEXT))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in TEXT], dtype=torch.long)
vocab, seq_len, batch = len(chars), 24, 16


class CharLSTM(nn.Module):
    def __init__(self, vocab, emb=16, hidden=48, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, num_layers=layers, batch_first=True)
        self.drop = nn.Dropout(p=0.0)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, state=None):
        self.lstm.flatten_parameters()
        out, state = self.lstm(self.embed(x), state)
        return self.head(self.drop(out)), state


def deterministic_init(model, seed=0):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            bound = 1.0 / np.sqrt(p.shape[-1])
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(p.shape)).astype("f4")))


torch.manual_seed(1234)
model = CharLSTM(vocab)
deterministic_init(model)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-5)

rng = np.random.default_rng(0)
for step in range(60):
    starts = rng.integers(0, len(data) - seq_len - 1, batch)
    x = torch.stack([data[s:s + seq_len] for s in starts])
    y = torch.stack([data[s + 1:s + seq_len + 1] for s in starts])
    model.train()
    logits, _ = model(x)
    loss = criterion(logits.view(-1, vocab), y.view(-1))
    optimizer.zero_grad()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    optimizer.step()
    if step % 10 == 0 or step == 59:
        print(f"step {step} loss {loss.item():.5f} grad_norm {norm.item():.5f}")

tmp = tempfile.mkdtemp()
ckpt = os.path.join(tmp, "ckpt.pt")
torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": 60,
            "chars": chars}, ckpt)
state = torch.load(ckpt, map_location="cpu", weights_only=True)
restored = CharLSTM(vocab)
restored.load_state_dict(state["model"])
opt2 = torch.optim.Adam(restored.parameters(), lr=1e-2, weight_decay=1e-5)
opt2.load_state_dict(state["optimizer"])
print("checkpoint step", state["step"], "chars", len(state["chars"]),
      "adam steps", int(opt2.state_dict()["state"][0]["step"]))

whole = os.path.join(tmp, "model.pt")
torch.save(model, whole)
try:
    torch.load(whole, weights_only=True)
    print("whole-model load without safe_globals: accepted")
except Exception as e:   # pickle.UnpicklingError in both
    print("whole-model load without safe_globals: refused", type(e).__name__)
with torch.serialization.safe_globals([CharLSTM, nn.Embedding, nn.LSTM, nn.Dropout, nn.Linear]):
    loaded = torch.load(whole, map_location=torch.device("cpu"), weights_only=True)
print("loaded type", type(loaded).__name__, "training", loaded.training)

model.eval()
loaded.eval()
with torch.no_grad():
    prompt = "the "
    idx = torch.tensor([[stoi[c] for c in prompt]])
    logits, state = loaded(idx)
    out = list(prompt)
    for _ in range(40):
        nxt = logits[0, -1].argmax()
        out.append(chars[nxt.item()])
        logits, state = loaded(nxt.view(1, 1), state)
    same = bool((model(idx)[0] == loaded(idx)[0]).all())
print("greedy:", repr("".join(out)))
print("loaded model equals trained model", same)
