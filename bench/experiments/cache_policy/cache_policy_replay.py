#!/usr/bin/python3
"""Replays the experiment's id stream (every batch's distinct (table, id) pairs, in order) through
cache policies of one capacity, and prints their hit rates: what the shard's eviction policy is
chosen by.

  clock-K   a counting CLOCK: each hit gives a row one more pass of the hand to survive, up to K,
            and each pass takes one away (the shard's policy is clock-3: embedding_table's
            touch_chances; clock-1 is plain CLOCK, one second chance)
  lru       least recently used
  top-N     a static cache of the N ids most frequent over the whole job, known in advance: what
            a policy that learns the ids' frequencies (LFU, TinyLFU) could come near on a stream
            whose popular ids do not change

Capacity: --budget-pct of the job's distinct ids (the shard's budget in rows). The shard itself
counts pushes too and runs one hand per stripe of 64; this replay counts lookups alone with one
hand, so its hit rates are lower than the shard's, and only the differences between policies carry
over. Prints a table and a JSON line and writes cache_policy_replay.{md,json} beside this script.

    /usr/bin/python3 bench/experiments/cache_policy/cache_policy_replay.py [--rows N] [--budget-pct 10]
                                                                       [--batch 128] [--clock 1,2,3,7,15]
"""
import argparse
import collections
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib"))
from benchlib import experiment_data, here, report  # noqa: E402

FIRST_CATEGORICAL, CATEGORICAL = 14, 26  # label, 13 integer columns, then 26 categorical ones


def batches(path, batch):
    """Each batch's distinct (table, id) pairs, as small integers."""
    index = {}
    out, cur = [], set()
    with open(path) as f:
        for n, line in enumerate(f, 1):
            parts = line.rstrip("\n").split("\t")
            for t, v in enumerate(parts[FIRST_CATEGORICAL:FIRST_CATEGORICAL + CATEGORICAL]):
                if v:
                    cur.add(index.setdefault((t, v), len(index)))
            if n % batch == 0:
                out.append(list(cur))
                cur = set()
    if cur:
        out.append(list(cur))
    return out, len(index)


def counting_clock(stream, capacity, most):
    keys = [-1] * capacity
    marks = bytearray(capacity)
    where = {}
    hand = hits = 0
    for b in stream:
        for k in b:
            i = where.get(k)
            if i is not None:
                hits += 1
                if marks[i] < most:
                    marks[i] += 1
                continue
            while keys[hand] >= 0 and marks[hand]:
                marks[hand] -= 1
                hand = (hand + 1) % capacity
            if keys[hand] >= 0:
                del where[keys[hand]]
            keys[hand], marks[hand], where[k] = k, 1, hand
            hand = (hand + 1) % capacity
    return hits


def lru(stream, capacity):
    cache = collections.OrderedDict()
    hits = 0
    for b in stream:
        for k in b:
            if k in cache:
                hits += 1
                cache.move_to_end(k)
            else:
                cache[k] = None
                if len(cache) > capacity:
                    cache.popitem(last=False)
    return hits


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--budget-pct", type=float, default=10)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--clock", default="1,2,3,7,15")
    args = ap.parse_args()
    train, _ = experiment_data(args.rows)
    stream, distinct = batches(train, args.batch)
    lookups = sum(len(b) for b in stream)
    capacity = max(1, round(distinct * args.budget_pct / 100))
    freq = collections.Counter(k for b in stream for k in b)
    results = {}
    t0 = time.time()
    for most in (int(x) for x in args.clock.split(",")):
        results[f"clock-{most}"] = counting_clock(stream, capacity, most) / lookups
        print(f"  clock-{most}: {results[f'clock-{most}']:.4f} ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
    results["lru"] = lru(stream, capacity) / lookups
    results["top-N"] = sum(c for _, c in freq.most_common(capacity)) / lookups
    first_sight = distinct / lookups
    lines = [f"{args.rows} generated rows, batches of {args.batch}: {lookups} lookups of {distinct} distinct ids "
             f"({100 * first_sight:.1f}% are first sightings, a miss for every policy); capacity {capacity} rows "
             f"({args.budget_pct:g}% of the ids).", "", "| policy | hit rate | misses vs clock-1 |", "|---|---|---|"]
    base_misses = 1 - results.get("clock-1", results["lru"])
    for name, hit in results.items():
        lines.append(f"| {name} | {hit:.4f} | {100 * ((1 - hit) / base_misses - 1):+.1f}% |")
    report(here(__file__), "cache_policy_replay", "\n".join(lines),
           {"bench": "cache_policy_replay", "rows": args.rows, "batch": args.batch, "lookups": lookups,
            "distinct": distinct, "capacity": capacity, "hit_rate": results})


if __name__ == "__main__":
    main()
