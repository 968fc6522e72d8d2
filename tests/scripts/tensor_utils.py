"""The tensor plumbing around a sequence model: padding a ragged batch, masks, causal attention
by hand, top-k decoding and beam bookkeeping, indexing in all the ways real programs do."""

import math

import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(0)
lengths = [5, 3, 6, 2]
pad = 0
seqs = [torch.from_numpy(rng.integers(1, 20, n)) for n in lengths]
batch = torch.zeros(len(seqs), max(lengths), dtype=torch.long)
for i, s in enumerate(seqs):
    batch[i, :len(s)] = s
print("batch", batch.tolist())
mask = batch == pad
print("pad mask rows", mask.sum(dim=1).tolist(), "valid", (~mask).sum().item())

emb = torch.from_numpy(rng.normal(size=(20, 8)).astype(np.float32))
x = emb[batch]                                             # (4, 6, 8)
x[mask] = 0.0
B, T, C = x.shape
q = x @ torch.from_numpy(rng.normal(size=(8, 8)).astype(np.float32))
att = q @ x.transpose(-2, -1) / math.sqrt(C)
causal = torch.tril(torch.ones(T, T))
att = att.masked_fill(causal[None] == 0, float("-inf"))
att = att.masked_fill(mask[:, None, :], float("-inf"))
att = torch.where(torch.isinf(att).all(dim=-1, keepdim=True), torch.zeros_like(att), att)
weights = F.softmax(att, dim=-1)
out = weights @ x
print("attention row sums", [round(v, 4) for v in weights.sum(-1)[0].tolist()])
print("out norm", f"{out.norm().item():.5f}", "mean", f"{out.mean():.5f}",
      "std", f"{out.std().item():.5f}")

logits = out @ emb.mT                                      # (4, 6, 20)
last = logits[torch.arange(B), torch.tensor(lengths) - 1]  # logits at each last token
top = torch.topk(last, k=3, dim=-1)
print("top-3 ids", top.indices.tolist())
print("top-3 logits", [[round(v, 4) for v in row] for row in top.values.tolist()])
log_probs = F.log_softmax(last, dim=-1)
beams = log_probs.view(-1).topk(5)
print("beam sources", (beams.indices // 20).tolist(), "tokens", (beams.indices % 20).tolist())

grid = torch.arange(24.0).view(2, 3, 4)
print("slices", grid[1].tolist(), grid[:, 1].tolist(), grid[..., -1].tolist())
print("fancy", grid[:, [0, 2]].shape, grid[:, [0, 2], 1:3].tolist(), grid[None, 0, ::2].shape)
idx2d = torch.tensor([[0, 1], [1, 0]])
print("int tensor index", grid[idx2d].shape, grid[0, 1:, 2].tolist())
grid[:, ::2] = -1.0
grid[grid > 20] = 100.0
grid[0] = grid[0] * 2
print("after set", grid.view(-1).tolist())
print("expand/permute", grid.permute(2, 0, 1).shape, grid[:, :1].expand(2, 3, 4).sum().item())
print("squeeze", grid[:, :1, :1].squeeze().tolist(), grid.unsqueeze(0).dim(), grid.numel())
parts = torch.arange(10).split(4)
print("split", [p.tolist() for p in parts], "cat", torch.cat(parts, dim=0).sum().item(),
      "stack", torch.stack([parts[0], parts[1]]).shape)

rows = [row.sum().item() for row in torch.eye(3) * 2]
print("iterate", rows, "len", len(torch.eye(3)),
      "diag", torch.diag(torch.tensor([1.0, 2.0])).tolist())
n = torch.tensor(2)
print("as index", ["a", "b", "c"][n], "as bool", bool(torch.tensor([1.0]) > 0),
      "as float", float(torch.tensor(0.5)), f"format {torch.tensor(math.pi):.3f}")
z = torch.tensor([[1.0, 2.0], [3.0, 4.0]]).new_zeros((2, 3))
print("new_zeros", z.shape, z.dtype == torch.float32, torch.empty(size=(2, 2)).fill_(7).tolist())
print("Tensor()", torch.Tensor([1, 2, 3]).dtype == torch.float32, torch.Tensor(2, 3).shape)
print("ones_like", torch.ones_like(grid).sum().item(), "pow", (torch.arange(4.0) ** 2).tolist(),
      "rsub", (1 - torch.arange(3.0)).tolist(), "rdiv", (1 / torch.tensor([2.0, 4.0])).tolist())
sp = (2 * torch.eye(3)).to_sparse()
print("sparse", tuple(sp.shape), sp.is_sparse, (sp.to_dense() == 2 * torch.eye(3)).all().item())
print(sp)

# random initialisation and sampling: each library draws from its own generator, so print the
# properties of the draws, not the draws
torch.manual_seed(0)
w = torch.empty(200, 300)
torch.nn.init.normal_(w, mean=1.0, std=0.5)
print("normal_", abs(w.mean().item() - 1.0) < 0.01, abs(w.std().item() - 0.5) < 0.01)
torch.nn.init.uniform_(w, -2, 2)
print("uniform_", w.min().item() >= -2, w.max().item() <= 2, abs(w.mean().item()) < 0.02)
torch.nn.init.xavier_normal_(w)
print("xavier_normal_", abs(w.std().item() - math.sqrt(2 / 500)) < 0.002)
r = torch.randn(1000, 3)
ints = torch.randint(0, 5, (100,), dtype=torch.int32)
perm = torch.randperm(10)
draws = torch.multinomial(torch.tensor([0.0, 1.0, 3.0]), num_samples=400, replacement=True)
print("randn", tuple(r.shape), abs(r.mean().item()) < 0.1, "randint", ints.dtype,
      0 <= ints.min().item() and ints.max().item() < 5, "randperm", sorted(perm.tolist()))
print("multinomial never draws p=0", (draws != 0).all().item(),
      "ratio ok", 2.2 < (draws == 2).sum().item() / (draws == 1).sum().item() < 4.0)

# autograd through plain tensors
a = torch.tensor([1.0, 2.0, 3.0])
a.requires_grad = True
b = (a.sigmoid() * a.exp()).sum() + a.tanh().neg().mul(2).sum()
b.backward()
print("grad", [round(v, 5) for v in a.grad.tolist()], "leaf", a.is_leaf, b.requires_grad)
a.data.mul_(2)
print("data", a.detach().tolist(), "requires_grad", a.detach().requires_grad)


@torch.inference_mode()
def predict(v):
    return v * 2


@torch.no_grad()
def predict_no_grad(v):
    return v + 1


print("decorated", predict(a).requires_grad, predict_no_grad(a).requires_grad,
      predict(a).tolist())
