"""A GRU encoder-decoder with additive (Bahdanau) attention and teacher forcing, as in the
seq2seq translation tutorials, on a toy task: reverse a variable-length sequence of tokens.
The encoder is a bidirectional GRU over pack_padded_sequence(enforce_sorted=False) and
pad_packed_sequence; the decoder is a GRU fed [embedding; context] one step at a time; padding
is masked out of the attention with masked_fill and out of the loss with ignore_index. Teacher
forcing draws from Python's random module, seeded, so both runs make the same choices."""

import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

PAD, SOS, EOS = 0, 1, 2
VOCAB = 12


class Encoder(nn.Module):
    def __init__(self, vocab, emb_dim, hid_dim):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb_dim, padding_idx=PAD)
        self.rnn = nn.GRU(emb_dim, hid_dim, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(hid_dim * 2, hid_dim)

    def forward(self, src, src_len):
        embedded = self.embedding(src)
        packed = pack_padded_sequence(embedded, src_len, batch_first=True, enforce_sorted=False)
        packed_outputs, hidden = self.rnn(packed)
        outputs, _ = pad_packed_sequence(packed_outputs, batch_first=True,
                                         total_length=src.shape[1])
        hidden = torch.tanh(self.fc(torch.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1)))
        return outputs, hidden


class Attention(nn.Module):
    def __init__(self, hid_dim):
        super().__init__()
        self.attn = nn.Linear(hid_dim * 3, hid_dim)
        self.v = nn.Linear(hid_dim, 1, bias=False)

    def forward(self, hidden, encoder_outputs, mask):
        src_len = encoder_outputs.shape[1]
        hidden = hidden.unsqueeze(1).repeat(1, src_len, 1)
        energy = torch.tanh(self.attn(torch.cat((hidden, encoder_outputs), dim=2)))
        attention = self.v(energy).squeeze(2)
        attention = attention.masked_fill(mask == 0, -1e10)
        return F.softmax(attention, dim=1)


class Decoder(nn.Module):
    def __init__(self, vocab, emb_dim, hid_dim):
        super().__init__()
        self.attention = Attention(hid_dim)
        self.embedding = nn.Embedding(vocab, emb_dim)
        self.rnn = nn.GRU(hid_dim * 2 + emb_dim, hid_dim)
        self.fc_out = nn.Linear(hid_dim * 3 + emb_dim, vocab)

    def forward(self, input, hidden, encoder_outputs, mask):
        embedded = self.embedding(input.unsqueeze(0))
        a = self.attention(hidden, encoder_outputs, mask).unsqueeze(1)
        weighted = torch.bmm(a, encoder_outputs).permute(1, 0, 2)
        output, hidden = self.rnn(torch.cat((embedded, weighted), dim=2), hidden.unsqueeze(0))
        prediction = self.fc_out(torch.cat((output.squeeze(0), weighted.squeeze(0),
                                            embedded.squeeze(0)), dim=1))
        return prediction, hidden.squeeze(0), a.squeeze(1)


class Seq2Seq(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder

    def forward(self, src, src_len, trg, teacher_forcing_ratio=0.5):
        batch_size, trg_len = trg.shape
        outputs = torch.zeros(trg_len, batch_size, VOCAB)
        encoder_outputs, hidden = self.encoder(src, src_len)
        mask = src != PAD
        input = trg[:, 0]
        attentions = []
        for t in range(1, trg_len):
            output, hidden, attention = self.decoder(input, hidden, encoder_outputs, mask)
            outputs[t] = output
            attentions.append(attention)
            teacher_force = random.random() < teacher_forcing_ratio
            input = trg[:, t] if teacher_force else output.argmax(1)
        return outputs, torch.stack(attentions, dim=1)


def make_batch(rng, batch_size):
    lengths = rng.integers(3, 8, batch_size)
    seqs = [torch.from_numpy(rng.integers(3, VOCAB, n)) for n in lengths]
    src = pad_sequence(seqs, batch_first=True, padding_value=PAD)
    trg = pad_sequence([torch.cat([torch.tensor([SOS]), s.flip(dims=[0]), torch.tensor([EOS])])
                        for s in seqs], batch_first=True, padding_value=PAD)
    return src, torch.as_tensor(lengths), trg


def main():
    random.seed(0)
    torch.manual_seed(0)
    model = Seq2Seq(Encoder(VOCAB, 8, 16), Decoder(VOCAB, 8, 16))
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "weight" in name:
                param.copy_(torch.from_numpy(rng.normal(0, 0.1, tuple(param.shape))))
            else:
                nn.init.constant_(param.data, 0)
    print("trainable parameters", sum(p.numel() for p in model.parameters() if p.requires_grad))

    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    criterion = nn.CrossEntropyLoss(ignore_index=PAD)
    data_rng = np.random.default_rng(1)
    for step in range(30):
        src, src_len, trg = make_batch(data_rng, 16)
        model.train()
        optimizer.zero_grad()
        output, _ = model(src, src_len, trg)
        output_dim = output.shape[-1]
        loss = criterion(output[1:].view(-1, output_dim), trg.t()[1:].reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % 5 == 4:
            print(f"step {step + 1} loss {loss.item():.4f}")

    model.eval()
    src, src_len, trg = make_batch(data_rng, 4)
    with torch.no_grad():
        output, attention = model(src, src_len, trg, teacher_forcing_ratio=0.0)
    print("attention", tuple(attention.shape),
          f"rows sum to one {torch.allclose(attention.sum(-1), torch.ones(4, trg.shape[1] - 1))}",
          f"padding weight {attention.masked_select(src.unsqueeze(1) == PAD).sum().item():.3g}")
    predictions = output[1:].argmax(-1).t()
    print("source   ", src[0, :src_len[0]].tolist())
    print("predicted", predictions[0, :src_len[0] + 1].tolist())
    exact = ((predictions == trg[:, 1:]) | (trg[:, 1:] == PAD)).all(dim=1)
    print("token accuracy",
          f"{(predictions == trg[:, 1:])[trg[:, 1:] != PAD].float().mean().item():.4f}",
          "exact", exact.tolist())


if __name__ == "__main__":
    main()
