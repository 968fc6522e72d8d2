"""A two-layer graph convolutional network (Kipf & Welling) on a synthetic stochastic block
model: sparse COO adjacency, torch.spmm, log_softmax + NLLLoss on a train mask, Adam."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(0)
n_nodes, n_classes, n_feats = 120, 3, 16
labels_np = np.repeat(np.arange(n_classes), n_nodes // n_classes)
same = labels_np[:, None] == labels_np[None, :]
adj_np = np.triu(rng.random((n_nodes, n_nodes)) < np.where(same, 0.12, 0.01), 1)
adj_np = adj_np | adj_np.T
feats_np = rng.standard_normal((n_nodes, n_feats)) + np.eye(n_classes, n_feats)[labels_np]

# normalised adjacency with self loops: D^-1/2 (A + I) D^-1/2, built as a sparse COO tensor
rows, cols = np.nonzero(adj_np)
edges = torch.tensor(np.stack([rows, cols]), dtype=torch.long)
adj = torch.sparse_coo_tensor(edges, torch.ones(len(rows)), (n_nodes, n_nodes),
                              dtype=torch.float32)
adj = adj.add(torch.eye(n_nodes).to_sparse())
deg = torch.tensor(adj_np.sum(1) + 1.0, dtype=torch.float32)
d_inv_sqrt = deg.pow(-0.5)
dense_norm = torch.diag(d_inv_sqrt) @ adj.to_dense() @ torch.diag(d_inv_sqrt)
adj_norm = dense_norm.to_sparse().to("cpu")
print("adjacency", tuple(adj_norm.shape), "edges", len(rows), "sparse", adj_norm.is_sparse,
      "nnz", adj_norm._nnz())

features = torch.from_numpy(feats_np.astype(np.float32))
labels = torch.from_numpy(labels_np)
perm = rng.permutation(n_nodes)
train_mask = torch.zeros(n_nodes, dtype=torch.bool)
train_mask[torch.from_numpy(perm[:30])] = True
test_mask = ~train_mask


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(size=(in_features, out_features)))
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, x, adj):
        support = torch.mm(x, self.weight)
        return torch.spmm(adj, support) + self.bias


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout):
        super().__init__()
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.elu(self.gc1(x, adj))
        x = F.dropout(x, self.dropout, training=self.training)
        x = adj.matmul(self.gc2(x, adj) - self.gc2.bias) + self.gc2.bias
        return F.log_softmax(x, dim=1)


model = GCN(n_feats, 32, n_classes, dropout=0.0)
with torch.no_grad():
    for p in model.parameters():
        if p.dim() == 2:
            std = np.sqrt(2.0 / sum(p.shape))
            p.copy_(torch.from_numpy(rng.normal(0, std, tuple(p.shape)).astype(np.float32)))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
criterion = nn.NLLLoss()

for epoch in range(100):
    model.train()
    optimizer.zero_grad()
    out = model(features, adj_norm)
    loss = criterion(out[train_mask], labels[train_mask])
    loss.backward()
    optimizer.step()
    if epoch % 20 == 0 or epoch == 99:
        model.eval()
        with torch.no_grad():
            pred = model(features, adj_norm).argmax(dim=1)
            acc = (pred[test_mask] == labels[test_mask]).float().mean()
        print(f"epoch {epoch} loss {loss.item():.5f} test acc {acc.item():.4f}")

print("class counts", torch.bincount(pred).tolist())
