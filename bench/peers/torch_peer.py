#!/usr/bin/python3
"""PyTorch peer of `shadowsync train`: the same DLRM, data, hyperparameters and JSON line.

Trains the DLRM of docs/data-and-model.md (embedding dim 16, bottom 13-512-256-64-16, dot
interaction, top 367-512-256-1) on Criteo-format TSV files for one pass, with plain SGD or with
Adam on the dense layers and Adagrad on the embedding rows (PyTorch's sparse-gradient Adagrad keeps
one accumulator per value, shadowsync's row-wise Adagrad one per row: the nearest PyTorch offers),
then scores a test file. Embedding rows are created on first touch (one row per distinct value per
feature, like shadowsync's tables) and start uniform in [-init_scale, init_scale); dense layers
use DLRM's initialization. Values never seen in training score with a fresh, untrained row.

Only the training loop is timed for examples_per_sec (parsing is reported apart), and the run is
pinned to one core with one intra-op thread unless told otherwise.

    /usr/bin/python3 bench/peers/torch_peer.py --train train.txt --test test.txt [--threads 1] [--cpu 0]

Needs Debian's python3-torch with libopenblas0-pthread (scripts/setup.sh --bench).
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from benchlib import auc  # noqa: E402

NUM_DENSE, NUM_SPARSE = 13, 26


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--train", required=True, nargs="+", help="Criteo TSV training files")
    p.add_argument("--test", required=True, nargs="+", help="Criteo TSV test files")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--learning-rate", type=float, default=0.1, help="the dense layers'")
    p.add_argument("--embedding-learning-rate", type=float, default=0.0,
                   help="the embedding rows'; 0: --learning-rate")
    p.add_argument("--dense-optimizer", choices=["sgd", "adam"], default="sgd")
    p.add_argument("--sparse-optimizer", choices=["sgd", "adagrad"], default="sgd")
    p.add_argument("--embedding-dim", type=int, default=16)
    p.add_argument("--bottom-mlp", default="512-256-64-16")
    p.add_argument("--top-mlp", default="512-256-1")
    p.add_argument("--embedding-init-scale", type=float, default=0.01)
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    p.add_argument("--cpu", type=int, default=0, help="pin to this core (-1: do not pin)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-rows", type=int, default=0, help="stop after this many training rows")
    return p.parse_args()


def read_criteo(paths, vocab, grow, max_rows=0):
    """Parses Criteo TSV rows. vocab[f] maps a raw value to its row; grow adds unseen values."""
    labels, dense, sparse = [], [], []
    bad = 0
    for path in paths:
        with open(path, "r", encoding="ascii", errors="replace") as f:
            for line in f:
                fields = line.rstrip("\r\n").split("\t")
                if len(fields) != 1 + NUM_DENSE + NUM_SPARSE or fields[0] not in ("0", "1"):
                    bad += 1
                    continue
                try:
                    d = [math.log1p(max(int(x), 0)) if x else 0.0 for x in fields[1:1 + NUM_DENSE]]
                except ValueError:
                    bad += 1
                    continue
                ids = []
                for f_idx, v in enumerate(fields[1 + NUM_DENSE:]):
                    table = vocab[f_idx]
                    row = table.get(v)
                    if row is None:
                        row = len(table) if grow else -1
                        if grow:
                            table[v] = row
                    ids.append(row)
                labels.append(int(fields[0]))
                dense.append(d)
                sparse.append(ids)
                if max_rows and len(labels) >= max_rows:
                    break
        if max_rows and len(labels) >= max_rows:
            break
    return (np.asarray(labels, dtype=np.float32), np.asarray(dense, dtype=np.float32),
            np.asarray(sparse, dtype=np.int64).reshape(-1, NUM_SPARSE), bad)


def layers(text):
    return [int(x) for x in text.replace(",", "-").split("-")]


def mlp(sizes, last_relu):
    mods = []
    for i in range(len(sizes) - 1):
        lin = nn.Linear(sizes[i], sizes[i + 1])
        m, n = sizes[i + 1], sizes[i]
        nn.init.normal_(lin.weight, 0.0, math.sqrt(2.0 / (m + n)))
        nn.init.normal_(lin.bias, 0.0, math.sqrt(1.0 / m))
        mods.append(lin)
        if i < len(sizes) - 2 or last_relu:
            mods.append(nn.ReLU())
    return nn.Sequential(*mods)


class DLRM(nn.Module):
    def __init__(self, rows, dim, bottom, top, init_scale):
        super().__init__()
        # One extra row per table: the untrained row that unseen test values map to.
        self.emb = nn.ModuleList(nn.EmbeddingBag(r + 1, dim, mode="sum", sparse=True) for r in rows)
        for e in self.emb:
            nn.init.uniform_(e.weight, -init_scale, init_scale)
        self.bottom = mlp([NUM_DENSE] + bottom, last_relu=True)
        n = NUM_SPARSE + 1
        self.top = mlp([dim + n * (n - 1) // 2] + top, last_relu=False)
        li, lj = torch.tril_indices(n, n, offset=-1)
        self.register_buffer("li", li)
        self.register_buffer("lj", lj)

    def forward(self, dense, sparse):
        x = self.bottom(dense)
        offsets = torch.arange(sparse.shape[0])
        embs = [e(sparse[:, i], offsets) for i, e in enumerate(self.emb)]
        t = torch.stack([x] + embs, dim=1)
        z = torch.bmm(t, t.transpose(1, 2))[:, self.li, self.lj]
        return self.top(torch.cat([x, z], dim=1)).squeeze(1)


def entropy(p):
    return -(p * math.log(p) + (1 - p) * math.log(1 - p))


def main():
    args = parse_args()
    if args.cpu >= 0:
        os.sched_setaffinity(0, {args.cpu})
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    t0 = time.time()
    vocab = [dict() for _ in range(NUM_SPARSE)]
    y, xd, xs, bad_train = read_criteo(args.train, vocab, grow=True, max_rows=args.max_rows)
    rows = [len(v) for v in vocab]
    yt, xdt, xst, bad_test = read_criteo(args.test, vocab, grow=False)
    for f in range(NUM_SPARSE):  # unseen test values -> the extra untrained row
        col = xst[:, f]
        col[col < 0] = rows[f]
    parse_seconds = time.time() - t0

    model = DLRM(rows, args.embedding_dim, layers(args.bottom_mlp), layers(args.top_mlp),
                 args.embedding_init_scale)
    dense_params = [p for name, p in model.named_parameters() if not name.startswith("emb.")]
    emb_lr = args.embedding_learning_rate or args.learning_rate
    dense_opt = (torch.optim.Adam(dense_params, lr=args.learning_rate) if args.dense_optimizer == "adam"
                 else torch.optim.SGD(dense_params, lr=args.learning_rate))
    sparse_opt = (torch.optim.Adagrad(model.emb.parameters(), lr=emb_lr) if args.sparse_optimizer == "adagrad"
                  else torch.optim.SGD(model.emb.parameters(), lr=emb_lr))
    loss_fn = nn.BCEWithLogitsLoss()
    y_t, xd_t, xs_t = torch.from_numpy(y), torch.from_numpy(xd), torch.from_numpy(xs)

    n = len(y)
    bs = args.batch_size
    t1 = time.time()
    last = t1
    for start in range(0, n, bs):
        end = min(start + bs, n)
        dense_opt.zero_grad()
        sparse_opt.zero_grad()
        loss = loss_fn(model(xd_t[start:end], xs_t[start:end]), y_t[start:end])
        loss.backward()
        dense_opt.step()
        sparse_opt.step()
        now = time.time()
        if now - last >= 10:
            eps = end / (now - t1)
            print(f"torch-peer: {end}/{n} examples, {eps:.0f} ex/s, ETA {(n - end) / eps:.0f} s",
                  file=sys.stderr, flush=True)
            last = now
    train_seconds = time.time() - t1

    model.eval()
    preds = []
    with torch.no_grad():
        for start in range(0, len(yt), 4096):
            logits = model(torch.from_numpy(xdt[start:start + 4096]), torch.from_numpy(xst[start:start + 4096]))
            preds.append(torch.sigmoid(logits).numpy())
    p = np.clip(np.concatenate(preds).astype(np.float64), 1e-7, 1 - 1e-7)
    logloss = float(-np.mean(yt * np.log(p) + (1 - yt) * np.log(1 - p)))
    base = float(y.mean())
    result = {
        "trainer": "pytorch",
        "torch_version": torch.__version__,
        "threads": args.threads,
        "dense_optimizer": args.dense_optimizer,
        "sparse_optimizer": args.sparse_optimizer,
        "examples": int(n),
        "seconds": round(train_seconds, 3),
        "examples_per_sec": round(n / train_seconds, 1),
        "parse_seconds": round(parse_seconds, 3),
        "test_examples": int(len(yt)),
        "test_logloss": round(logloss, 6),
        "test_ne": round(logloss / entropy(base), 6),
        "test_auc": round(auc(yt.tolist(), p.tolist()), 6),
        "test_calibration": round(float(p.mean() / yt.mean()), 6),
        "bad_rows": int(bad_train + bad_test),
    }
    print(f"pytorch {torch.__version__}: {n} examples in {train_seconds:.1f} s "
          f"({result['examples_per_sec']:.0f} ex/s, {args.threads} thread), test NE {result['test_ne']:.5f}, "
          f"AUC {result['test_auc']:.5f}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
