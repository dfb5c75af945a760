#!/usr/bin/python3
"""The Markdown table of `scripts/netns-cluster experiment`: measured `dfft run` times across
the emulated hosts against the model's prediction for the same grid, with the calibrated
profile and with its node link removed (every rank its own link).

usage: scripts/netns_table.py RESULTS.jsonl
"""
import json
import sys


def body(v):
    """The fields of a JSON line, from its `result` (and `problem`) object where it has one."""
    out = dict(v)
    for key in ("problem", "result"):
        if isinstance(v.get(key), dict):
            out.update(v[key])
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
    runs = [body(r) for r in rows if body(r).get("min_s") is not None]
    plans = [body(r) for r in rows if r.get("variant")]
    print("| link rate | shape | grid | measured min [s] | predicted [s] | measured/predicted "
          "| predicted without the node link [s] | measured/that |")
    print("|---|---|---|---|---|---|---|---|")
    worst = 0.0
    for run in runs:
        shape, grid, rate = run["shape"], run["grid"], run["rate"]
        pred = {p["variant"]: p["predicted_s"] for p in plans
                if p["rate"] == rate and p["shape"] == shape and p["grid"] == grid}
        if "full" not in pred:
            continue
        ratio = run["min_s"] / pred["full"]
        worst = max(worst, abs(ratio - 1.0))
        alone = pred.get("no-node-link")
        print(f"| {rate} | {'x'.join(map(str, shape))} | {'x'.join(map(str, grid))} "
              f"| {run['min_s']:.4f} | {pred['full']:.4f} | {ratio:.2f} "
              f"| {alone:.4f} | {run['min_s'] / alone:.2f} |" if alone else "| n/a | n/a |")
    print(f"\nlargest |measured/predicted - 1| with the node link: {worst:.2f}")


if __name__ == "__main__":
    main()
