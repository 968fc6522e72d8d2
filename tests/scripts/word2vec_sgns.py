"""word2vec skip-gram with negative sampling, as the word-embedding tutorials write it: two sparse
nn.Embedding tables (centre and context words; the context table is looked up twice per step,
for the true context and for the negatives), F.logsigmoid of dot products through torch.bmm,
SparseAdam, then nearest neighbours by cosine similarity (F.normalize, matmul, topk). Pairs and
negatives are drawn with NumPy from a unigram^0.75 table, so both runs see the same batches."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CORPUS = ("the king rules the kingdom . the queen rules the kingdom . a man walks the dog . "
          "a woman walks the dog . the king and the queen walk . the man and the woman walk . "
          "the dog barks at the cat . the cat runs from the dog . ") * 20


class SkipGram(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.center = nn.Embedding(vocab_size, dim, sparse=True)
        self.context = nn.Embedding(vocab_size, dim, sparse=True)

    def forward(self, center, context, negatives):
        v = self.center(center)                                     # (B, D)
        u = self.context(context)                                   # (B, D)
        u_neg = self.context(negatives)                             # (B, K, D)
        positive = F.logsigmoid((v * u).sum(dim=1))
        negative = F.logsigmoid(-torch.bmm(u_neg, v.unsqueeze(2)).squeeze(2)).sum(dim=1)
        return -(positive + negative).mean()


def main():
    torch.manual_seed(0)
    words = CORPUS.split()
    vocab = sorted(set(words))
    index = {w: i for i, w in enumerate(vocab)}
    ids = np.array([index[w] for w in words])
    counts = np.bincount(ids, minlength=len(vocab)).astype(np.float64)
    noise = counts ** 0.75 / (counts ** 0.75).sum()
    pairs = np.array([(ids[i], ids[j]) for i in range(len(ids))
                      for j in range(max(0, i - 2), min(len(ids), i + 3)) if i != j])
    print("vocab", len(vocab), "pairs", len(pairs))

    model = SkipGram(len(vocab), 8)
    rng = np.random.default_rng(0)
    with torch.no_grad():
        model.center.weight.copy_(torch.from_numpy(
            rng.uniform(-0.5 / 8, 0.5 / 8, (len(vocab), 8)).astype(np.float32)))
        model.context.weight.zero_()
    optimizer = torch.optim.SparseAdam(list(model.parameters()), lr=0.02)

    batch_size, num_negatives = 64, 4
    for epoch in range(3):
        order = rng.permutation(len(pairs))
        total = 0.0
        for start in range(0, 512, batch_size):
            batch = torch.from_numpy(pairs[order[start:start + batch_size]])
            negatives = torch.from_numpy(rng.choice(len(vocab), (len(batch), num_negatives),
                                                    p=noise))
            optimizer.zero_grad()
            loss = model(batch[:, 0], batch[:, 1], negatives)
            loss.backward()
            optimizer.step()
            total += loss.item()
        grad = model.context.weight.grad
        print(f"epoch {epoch} loss {total / 8:.5f} context grad sparse {grad.is_sparse}",
              f"rows {grad.coalesce().indices().shape[1]}")

    with torch.no_grad():
        vectors = F.normalize(model.center.weight, dim=1)
        similarity = vectors @ vectors.T
        for word in ("king", "dog"):
            scores, neighbours = similarity[index[word]].topk(3)
            print(word, [vocab[i] for i in neighbours.tolist()],
                  [f"{s:.3f}" for s in scores.tolist()])


if __name__ == "__main__":
    main()
