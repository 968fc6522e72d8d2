"""Sine-wave sequence prediction with GRU, a two-layer RNN and an LSTMCell, written the way
GPU-ready scripts are: device selection, cudnn/TF32 flags, autocast and a GradScaler that are
disabled without CUDA, TensorBoard logging, ReduceLROnPlateau, a checkpoint of the best model."""

import argparse
import glob
import os
import tempfile

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import torch.onnx
from torch.nn.parallel import DistributedDataParallel as DDP

try:
    from torch.utils.tensorboard import SummaryWriter
except ImportError:   # real PyTorch needs the tensorboard package
    SummaryWriter = None

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=30)
parser.add_argument("--hidden", type=int, default=16)
parser.add_argument("--compile", action="store_true")
parser.add_argument("--export", default=None, help="write an ONNX file here")
args = parser.parse_args()

ddp = int(os.environ.get("RANK", -1)) != -1   # launched by torchrun?
if ddp:
    dist.init_process_group(backend="gloo")

use_cuda = torch.cuda.is_available()
device = torch.device("cuda:0" if use_cuda else "cpu")
if use_cuda:
    torch.cuda.set_device(0)
torch.backends.cudnn.benchmark = True
torch.backends.cudnn.deterministic = False
torch.backends.cuda.matmul.allow_tf32 = True
torch.manual_seed(0)
torch.cuda.manual_seed(0)
torch.cuda.manual_seed_all(0)
amp_dtype = torch.bfloat16 if use_cuda and torch.cuda.is_bf16_supported() else torch.float16
print("device", device, "cuda", use_cuda, "accelerator", torch.accelerator.is_available(),
      "bf16", torch.cuda.is_bf16_supported())

t = np.linspace(0, 8 * np.pi, 400)
wave = (np.sin(t) + 0.3 * np.sin(3 * t)).astype(np.float32)
windows = np.stack([wave[i:i + 21] for i in range(0, 360, 3)])
data = torch.from_numpy(windows).unsqueeze(-1).to(device)       # (120, 21, 1)
inputs, targets = data[:, :-1], data[:, 1:]
train_x, test_x = inputs.split([100, 20])
train_y, test_y = targets.split([100, 20])
print("shapes", tuple(train_x.shape), tuple(test_y.shape), "std", f"{data.std():.5f}")


class Seq(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.gru = nn.GRU(1, hidden, batch_first=True)
        self.rnn = nn.RNN(hidden, hidden, num_layers=2, nonlinearity="tanh", dropout=0.0)
        self.cell = nn.LSTMCell(hidden, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        self.gru.flatten_parameters()
        h, _ = self.gru(x)                         # (B, T, H)
        h, _ = self.rnn(h.permute(1, 0, 2))        # sequence-first: (T, B, H)
        hx = torch.zeros(x.size(0), h.size(2), device=x.device)
        cx = torch.zeros_like(hx)
        outs = []
        for step in h:
            hx, cx = self.cell(step, (hx, cx))
            outs.append(self.out(hx))
        return torch.stack(outs, dim=1)            # (B, T, 1)


model = Seq(args.hidden).to(device)
if args.compile:
    model = torch.compile(model)
if ddp:
    model = DDP(model)
print("ddp", ddp, "initialized", dist.is_initialized())
rng = np.random.default_rng(0)
with torch.no_grad():
    for name, p in model.named_parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.25, 0.25, tuple(p.shape)).astype(np.float32)))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5,
                                                       patience=2)
scaler = torch.cuda.amp.GradScaler(enabled=use_cuda)
log_dir = tempfile.mkdtemp()
writer = SummaryWriter(log_dir=log_dir) if SummaryWriter is not None else None
best, best_path = float("inf"), os.path.join(log_dir, "best.pt")

for epoch in range(args.epochs):
    model.train()
    with torch.amp.autocast(device_type=device.type, dtype=amp_dtype, enabled=use_cuda):
        pred = model(train_x)
        loss = F.mse_loss(pred, train_y) + 0.1 * F.smooth_l1_loss(pred, train_y)
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    model.eval()
    with torch.no_grad():
        val = nn.MSELoss()(model(test_x), test_y)
    scheduler.step(val)
    if writer is not None:
        writer.add_scalar("loss/train", loss.item(), epoch)
        writer.add_scalar("loss/val", val, epoch)
    if val.item() < best:
        best = val.item()
        torch.save(model.state_dict(), best_path)
    if epoch % 5 == 4:
        print(f"epoch {epoch + 1} train {loss.item():.6f} val {val:.6f} "
              f"lr {optimizer.param_groups[0]['lr']:.5f}")

torch.cuda.empty_cache()
print("peak cuda memory MiB", torch.cuda.max_memory_allocated() / 2 ** 20)
if writer is not None:
    writer.flush()
    writer.close()
    print("tensorboard event files", len(glob.glob(os.path.join(log_dir, "events.out.*"))))
else:
    print("tensorboard unavailable")

model.load_state_dict(torch.load(best_path, map_location=device))
model.eval()
with torch.no_grad():
    err = (model(test_x) - test_y).abs().squeeze(-1)   # (20, 20)
    worst = err.max(dim=1).values.topk(3)
    shifted = torch.roll(test_y.squeeze(-1), shifts=1, dims=1)
    naive = (shifted - test_y.squeeze(-1)).narrow(1, 1, 19).abs().mean()
print("best val", f"{best:.6f}", "model mae", f"{err.mean().item():.6f}",
      "naive mae", f"{naive.item():.6f}")
if args.export:
    torch.onnx.export(model, (test_x,), args.export)
if ddp:
    dist.destroy_process_group()
print("worst windows", worst.indices.tolist(), [round(v, 5) for v in worst.values.tolist()])
