"""A character-level transformer language model on examples/data/shakespeare.txt.

Causal self-attention (nn.TransformerEncoder with a square subsequent mask), AdamW; prints a
sample of generated text at the end.

    python examples/char_transformer.py --steps 300 --checkpoint lm.ckpt --plot lm.png
"""

import math
import os

from common import (compiled, cosine_schedule, load_checkpoint, parse_args, plot_losses,
                    progress, save_checkpoint)

import strata as torch
import strata.nn as nn
import strata.nn.functional as F

TEXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "shakespeare.txt")


class CharTransformer(nn.Module):
    def __init__(self, vocab, context=64, d_model=128, nhead=4, layers=2, dropout=0.1):
        super().__init__()
        self.context = context
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(context, d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead, 4 * d_model, dropout,
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(context),
                             persistent=False)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.embed(idx) + self.pos(torch.arange(t, device=idx.device))
        x = self.blocks(x, mask=self.mask[:t, :t], is_causal=True)
        return self.head(self.norm(x))

    @torch.no_grad()
    def generate(self, idx, n, temperature=0.8):
        for _ in range(n):
            logits = self(idx[:, -self.context:])[:, -1] / temperature
            nxt = torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)
            idx = torch.cat([idx, nxt], dim=1)
        return idx


def batches(data, context, batch_size, generator):
    while True:
        starts = torch.randint(0, len(data) - context - 1, (batch_size,), generator=generator)
        x = torch.stack([data[s:s + context] for s in starts.tolist()])
        y = torch.stack([data[s + 1:s + context + 1] for s in starts.tolist()])
        yield x, y


def main():
    args = parse_args(__doc__, steps=300, lr=3e-3, batch_size=16, epochs=1)
    torch.manual_seed(args.seed)
    with open(TEXT) as f:
        text = f.read()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    model = CharTransformer(len(chars)).to(args.device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    start, losses = load_checkpoint(args.checkpoint, model, optimizer)
    scheduler = cosine_schedule(optimizer, args.steps, start)
    gen = torch.Generator().manual_seed(args.seed + start)
    stream = batches(data, model.context, args.batch_size, gen)
    forward = compiled(model, args)
    for step in progress(range(start, args.steps), "training", args.quiet,
                         total=args.steps - start):
        x, y = next(stream)
        logits = forward(x.to(args.device))
        loss = F.cross_entropy(logits.reshape(-1, len(chars)), y.to(args.device).reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
        if (step + 1) % 50 == 0 or step + 1 == args.steps:
            save_checkpoint(args.checkpoint, model, optimizer, step, losses)
    recent = losses[-10:]
    print(f"char transformer: {len(losses)} steps, final loss {sum(recent) / len(recent):.3f} "
          f"(mean of the last {len(recent)} steps; uniform guess: {math.log(len(chars)):.3f})")
    model.eval()
    prompt = torch.tensor([[stoi[c] for c in "To be"]], dtype=torch.long)
    out = model.generate(prompt.to(args.device), 120)[0].tolist()
    print("sample:", "".join(chars[i] for i in out).replace("\n", " / "))
    plot_losses(args.plot, losses, "char transformer")


if __name__ == "__main__":
    main()
