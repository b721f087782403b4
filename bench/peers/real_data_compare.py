#!/usr/bin/python3
"""shadowsync train with its defaults against PyTorch baselines on the same splits.

Data sets (benchlib.ctr_sets, as in bench/experiments/defaults_sweep/defaults_sweep.py, split by row
order): generated Criteo-format data, the same read as categorical only, and the real Criteo and
Avazu samples in ../shared/data/ctr/ (read where they lie, never copied). Models:

  shadowsync   `shadowsync train` with no model or optimizer flag (its defaults), --epochs E
  torch LR     logistic regression: one weight per categorical value and per dense feature
  torch FM     a factorization machine (LR plus pairwise dot products of 16-wide factors)

Both PyTorch models see the same features shadowsync does (dense values as log(1 + max(x, 0)),
each categorical value its own id per field), train with Adam, batch 128, the same epochs, one
thread; their learning rate is the best of 0.001, 0.003 and 0.01 on the test split (tuned in
their favour; shadowsync is not). Embedding rows are updated sparsely (SparseAdam), as in
shadowsync. Prints a table and one JSON line; writes real_data_compare.md beside this script.

    /usr/bin/python3 bench/peers/real_data_compare.py [--rows 200000] [--epochs 1]

Needs python3-torch (scripts/setup.sh --bench) and a built tree.
"""
import argparse
import json
import math
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from benchlib import auc, ctr_sets, here, run_train  # noqa: E402  (the defaults sweep's data sets and runs)

import torch  # noqa: E402


def read_rows(data_flags):
    """(labels, dense rows, categorical rows) of the train and test files of one data set."""
    files = {data_flags[i]: data_flags[i + 1] for i in range(0, len(data_flags), 2)}
    schema = files.get("--schema", "criteo")
    out = []
    for part in ("--train", "--test"):
        labels, dense, cats = [], [], []
        with open(files[part], encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        if schema == "avazu":
            header = lines[0].rstrip("\r").split(",")
            label_at, skip = header.index("click"), {header.index("id"), header.index("click")}
            for line in lines[1:]:
                fields = line.rstrip("\r").split(",")
                labels.append(float(fields[label_at]))
                dense.append([])
                cats.append([v for i, v in enumerate(fields) if i not in skip])
        else:  # Criteo layout; a schema file here only ever drops the 13 dense columns (gen-cat)
            with_dense = schema == "criteo"
            for line in lines:
                fields = line.split("\t")
                labels.append(float(fields[0]))
                dense.append([math.log1p(max(float(v or 0), 0.0)) for v in fields[1:14]] if with_dense else [])
                cats.append(fields[14:40])
        out.append((labels, dense, cats))
    return out


def encode(train, test):
    """Categorical values to ids (one vocabulary per field, built on the train split; an unseen
    test value gets its field's 'unknown' id)."""
    fields = len(train[2][0])
    vocab = [dict() for _ in range(fields)]
    offset = 0

    def ids(rows, grow):
        out = []
        for row in rows:
            out.append([vocab[f].setdefault(v, len(vocab[f])) if grow else vocab[f].get(v, -1) for f, v in enumerate(row)])
        return out

    train_ids = ids(train[2], True)
    test_ids = ids(test[2], False)
    bases = []
    for f in range(fields):
        bases.append(offset)
        offset += len(vocab[f]) + 1  # the last id of a field: unknown
    def flat(rows):
        return torch.tensor([[bases[f] + (i if i >= 0 else len(vocab[f])) for f, i in enumerate(r)] for r in rows])
    t = lambda x: torch.tensor(x, dtype=torch.float32)
    return (t(train[0]), t(train[1]), flat(train_ids)), (t(test[0]), t(test[1]), flat(test_ids)), offset


class FM(torch.nn.Module):
    def __init__(self, num_ids, num_dense, k):
        super().__init__()
        self.linear = torch.nn.Embedding(num_ids, 1, sparse=True)
        torch.nn.init.zeros_(self.linear.weight)
        self.dense = torch.nn.Linear(num_dense, 1) if num_dense else None
        self.bias = torch.nn.Parameter(torch.zeros(1))
        self.factors = torch.nn.Embedding(num_ids, k, sparse=True) if k else None
        if k:
            torch.nn.init.normal_(self.factors.weight, std=0.01)

    def forward(self, dense, ids):
        z = self.bias + self.linear(ids).sum(dim=(1, 2))
        if self.dense is not None:
            z = z + self.dense(dense).squeeze(1)
        if self.factors is not None:
            v = self.factors(ids)  # [batch, fields, k]
            z = z + 0.5 * (v.sum(1).pow(2) - v.pow(2).sum(1)).sum(1)
        return z


def torch_run(train, test, num_ids, k, lr, epochs, seed):
    torch.manual_seed(seed)
    y, xd, xi = train
    model = FM(num_ids, xd.shape[1], k)
    # Embeddings are sparse (only the rows of a batch are updated, as in shadowsync): SparseAdam.
    sparse = [p for n, p in model.named_parameters() if n.startswith(("linear", "factors"))]
    dense = [p for n, p in model.named_parameters() if not n.startswith(("linear", "factors"))]
    opts = [torch.optim.SparseAdam(sparse, lr=lr), torch.optim.Adam(dense, lr=lr)]
    loss_fn = torch.nn.BCEWithLogitsLoss()
    for _ in range(epochs):
        for s in range(0, len(y), 128):
            for o in opts:
                o.zero_grad()
            loss = loss_fn(model(xd[s:s + 128], xi[s:s + 128]), y[s:s + 128])
            loss.backward()
            for o in opts:
                o.step()
    with torch.no_grad():
        ty, td, ti = test
        p = torch.sigmoid(model(td, ti)).clamp(1e-7, 1 - 1e-7)
        logloss = float(-(ty * p.log() + (1 - ty) * (1 - p).log()).mean())
        rate = float(y.mean())
        base = -(rate * math.log(rate) + (1 - rate) * math.log(1 - rate))
        return {"auc": auc(ty.tolist(), p.tolist()), "logloss": logloss, "ne": logloss / base}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=200000, help="generated training rows")
    ap.add_argument("--epochs", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(1)
    t0 = time.time()
    rows = []
    with tempfile.TemporaryDirectory(prefix="ss-compare.") as work:
        sets = ctr_sets(work, a.rows)
        for name, s in sets.items():
            ours = run_train((s["data"] + ["--epochs", str(a.epochs)], 1))
            train, test = read_rows(s["data"])
            tr, te, num_ids = encode(train, test)
            best = {}
            for label, k in (("torch LR", 0), ("torch FM", 16)):
                runs = [(lr, torch_run(tr, te, num_ids, k, lr, a.epochs, 1)) for lr in (0.001, 0.003, 0.01)]
                lr, r = max(runs, key=lambda x: x[1]["auc"])
                best[label] = dict(r, lr=lr)
            rows.append({"set": name, "shadowsync": ours, **best})
            print(f"  {name}: shadowsync AUC {ours['auc']:.4f}, LR {best['torch LR']['auc']:.4f}, "
                  f"FM {best['torch FM']['auc']:.4f}", flush=True)
    lines = ["# shadowsync defaults vs PyTorch baselines", "",
             f"`bench/peers/real_data_compare.py --rows {a.rows} --epochs {a.epochs}`, {time.strftime('%Y-%m-%d')}, "
             f"{(time.time() - t0) / 60:.0f} minutes. Test AUC (log loss); the baselines' learning rate is the best "
             "of three on the test split.", "",
             "| data set | shadowsync defaults | torch LR | torch FM |", "|---|---|---|---|"]
    for r in rows:
        cell = lambda x: f"{x['auc']:.4f} ({x['logloss']:.4f})"
        lines.append(f"| {r['set']} | {cell(r['shadowsync'])} | {cell(r['torch LR'])} (lr {r['torch LR']['lr']}) | "
                     f"{cell(r['torch FM'])} (lr {r['torch FM']['lr']}) |")
    text = "\n".join(lines) + "\n"
    print("\n" + text)
    with open(os.path.join(here(__file__), "real_data_compare.md"), "w") as f:
        f.write(text)
    print(json.dumps({"bench": "real_data_compare", "epochs": a.epochs, "rows": rows}))


if __name__ == "__main__":
    sys.exit(main())
