#!/usr/bin/python3
"""Turns the JSON lines of scripts/scaling into one CSV and PNG plots drawn from that CSV.

usage: /usr/bin/python3 scripts/scaling_plot.py OUTDIR

Reads OUTDIR/results.jsonl (dfft bench-redist / dfft run reports, each with a "command" key)
and OUTDIR/model.jsonl (dfft plan candidates tagged with shape and ranks; may be empty), writes
OUTDIR/scaling.csv, then reads the CSV back and draws:

  time_vs_p.png           seed 000 Fig. 3: two sweeps of redistribution vs P, 1-D | 2-D grid
  ratio_2d_vs_1d.png      seed 000 Fig. 4(b): T(1-D) / T(2-D); above 1 the 2-D grid is faster
  speedup_efficiency.png  speedup T(1)/T(P) and parallel efficiency of full transforms
  stages.png              stacked stage breakdown (fft, pack, comm, unpack) per P and grid
  model_vs_measured.png   dfft plan's predicted time against the measured one

OUTDIR/table.md (the seed-style 1-D vs 2-D table), and OUTDIR/manifest.json with the CSV's sha256 and row count and each PNG's size and sha256.
Needs Debian's python3-matplotlib (call /usr/bin/python3).
"""

import csv
import hashlib
import json
import math
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLUMNS = [
    "command", "shape", "n", "d", "ranks", "threads", "grid", "grid_rank", "method",
    "min_s", "median_s", "fft_s", "pack_s", "comm_s", "unpack_s", "exchanges",
    "roundtrip_error", "reference_error", "array_bytes", "predicted_s",
]


def dims(v):
    return "x".join(str(x) for x in v)


def to_rows(results, model):
    predicted = {}
    for m in model:
        grid = m.get("grid")
        if grid is None or m.get("predicted_s") is None:
            continue
        predicted[(dims(m["shape"]), int(m["ranks"]), dims(grid))] = float(m["predicted_s"])
    rows = []
    for v in results:
        st = v.get("stages", {})
        shape = dims(v["shape"])
        grid = dims(v["grid"])
        key = (shape, int(v["ranks"]), grid)
        rows.append({
            # `dfft run` lines carry the transform in "kind" (c2c, r2c, ...); bench-redist
            # lines say "kind": "bench-redist".
            "command": v.get("command") or ("bench-redist" if v.get("kind") == "bench-redist" else "run"),
            "shape": shape,
            "n": v["shape"][0],
            "d": len(v["shape"]),
            "ranks": v["ranks"],
            "threads": v.get("threads_per_rank", 1),
            "grid": grid,
            "grid_rank": len(v["grid"]),
            "method": v.get("method", ""),
            "min_s": v["min_s"],
            "median_s": v["median_s"],
            "fft_s": st.get("fft_s", 0.0),
            "pack_s": st.get("pack_s", 0.0),
            "comm_s": st.get("comm_s", 0.0),
            "unpack_s": st.get("unpack_s", 0.0),
            "exchanges": v.get("exchanges", ""),
            "roundtrip_error": v.get("roundtrip_error", ""),
            "reference_error": v.get("reference_error", ""),
            "array_bytes": v.get("array_bytes", 16 * math.prod(v["shape"])),
            "predicted_s": predicted.get(key, "") if v.get("command", "run") == "run" else "",
        })
    return rows


def read_jsonl(path):
    out = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    out.append(json.loads(line))
    return out


def load_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in ["n", "d", "ranks", "threads", "grid_rank"]:
            r[k] = int(r[k])
        for k in ["min_s", "median_s", "fft_s", "pack_s", "comm_s", "unpack_s"]:
            r[k] = float(r[k])
        r["predicted_s"] = float(r["predicted_s"]) if r["predicted_s"] else None
    return rows


def best(rows, key):
    """The fastest row (min over methods, and over anything not in key) per key."""
    out = {}
    for r in rows:
        k = key(r)
        if k not in out or r["min_s"] < out[k]["min_s"]:
            out[k] = r
    return out


def shapes_of(rows):
    return sorted({r["shape"] for r in rows}, key=lambda s: [int(x) for x in s.split("x")])


def note(ax, text):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def plot_time_vs_p(rows, path):
    bench = [r for r in rows if r["command"] == "bench-redist"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    b = best(bench, lambda r: (r["shape"], r["ranks"], r["grid_rank"]))
    for ax, gr in zip(axes, [1, 2]):
        for shape in shapes_of(bench):
            pts = sorted((k[1], v["min_s"]) for k, v in b.items() if k[0] == shape and k[2] == gr)
            if pts:
                ax.plot([p for p, _ in pts], [t for _, t in pts], "o-", label=f"N = {shape}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("processes P")
        ax.set_title(f"{gr}-D processor grid")
        ax.grid(True, which="both", alpha=0.3)
        if not bench:
            note(ax, "no bench-redist rows")
    axes[0].set_ylabel("two sweeps of redistribution (2r+1 exchanges), min [s]")
    axes[0].legend(fontsize=8)
    fig.suptitle("Redistribution time vs P (seed 000 Fig. 3); best exchange method")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_ratio(rows, path):
    bench = [r for r in rows if r["command"] == "bench-redist"]
    b = best(bench, lambda r: (r["shape"], r["ranks"], r["grid_rank"]))
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for shape in shapes_of(bench):
        pts = []
        for (s, p, gr), v in sorted(b.items()):
            if s == shape and gr == 1 and (s, p, 2) in b:
                pts.append((p, v["min_s"] / b[(s, p, 2)]["min_s"]))
        if pts:
            ax.plot([p for p, _ in pts], [x for _, x in pts], "o-", label=f"N = {shape}")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("processes P")
    ax.set_ylabel("T(1-D grid) / T(2-D grid)")
    ax.set_title("Relative performance of the 2-D grid (>1: 2-D faster)")
    ax.grid(True, which="both", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    else:
        note(ax, "needs bench-redist rows on both grid ranks")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_speedup(rows, path):
    runs = [r for r in rows if r["command"] == "run"] or [
        r for r in rows if r["command"] == "bench-redist"]
    what = "full forward+backward transform" if runs and runs[0]["command"] == "run" \
        else "two sweeps of redistribution"
    b = best(runs, lambda r: (r["shape"], r["ranks"], r["grid_rank"]))
    base = best(runs, lambda r: (r["shape"], r["ranks"]))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.5))
    maxp = 1
    for shape in shapes_of(runs):
        if (shape, 1) not in base:
            continue
        t1 = base[(shape, 1)]["min_s"]
        for gr in sorted({k[2] for k in b}):
            pts = sorted((k[1], t1 / v["min_s"]) for k, v in b.items() if k[0] == shape and k[2] == gr)
            if not pts:
                continue
            maxp = max(maxp, max(p for p, _ in pts))
            style = "o-" if gr == 1 else "s--"
            a1.plot([p for p, _ in pts], [s for _, s in pts], style, label=f"{shape}, {gr}-D")
            a2.plot([p for p, _ in pts], [s / p for p, s in pts], style, label=f"{shape}, {gr}-D")
    a1.plot([1, maxp], [1, maxp], "k:", lw=0.8, label="ideal")
    a1.set_ylabel("speedup T(1) / T(P)")
    a2.set_ylabel("parallel efficiency T(1) / (P T(P))")
    a2.axhline(1.0, color="k", ls=":", lw=0.8)
    for ax in (a1, a2):
        ax.set_xlabel("processes P")
        ax.grid(True, alpha=0.3)
    if a1.get_legend_handles_labels()[0]:
        a1.legend(fontsize=7)
    else:
        note(a1, "needs P = 1 rows")
    fig.suptitle(f"Strong scaling: {what}; best method")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_stages(rows, path):
    runs = [r for r in rows if r["command"] == "run"] or [
        r for r in rows if r["command"] == "bench-redist"]
    fig, ax = plt.subplots(figsize=(11, 4.5))
    if not runs:
        note(ax, "no rows")
    else:
        shape = shapes_of(runs)[-1]
        b = best([r for r in runs if r["shape"] == shape], lambda r: (r["ranks"], r["grid_rank"]))
        keys = sorted(b)
        labels = [f"P={p}\n{b[(p, g)]['grid']}" for p, g in keys]
        bottom = [0.0] * len(keys)
        for stage, color in [("fft_s", "#4c72b0"), ("pack_s", "#dd8452"),
                             ("comm_s", "#c44e52"), ("unpack_s", "#55a868")]:
            vals = [b[k][stage] for k in keys]
            ax.bar(range(len(keys)), vals, bottom=bottom, color=color, label=stage[:-2])
            bottom = [x + y for x, y in zip(bottom, vals)]
        ax.plot(range(len(keys)), [b[k]["min_s"] for k in keys], "k_", ms=18, mew=2,
                label="measured min (wall)")
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_ylabel("seconds per " + ("forward+backward pair" if runs[0]["command"] == "run"
                                        else "two sweeps"))
        ax.set_title(f"Stage breakdown, shape {shape} (mean per pair, max over ranks); best method")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_model(rows, path):
    pts = [r for r in rows if r["command"] == "run" and r["predicted_s"]]
    fig, ax = plt.subplots(figsize=(6.5, 5))
    if not pts:
        note(ax, "no model predictions: `dfft plan --json` was not available\n"
                 "when this sweep ran (see scripts/scaling for the interface)")
    else:
        for gr, marker in [(1, "o"), (2, "s"), (3, "^")]:
            sel = [r for r in pts if r["grid_rank"] == gr]
            if sel:
                ax.scatter([r["predicted_s"] for r in sel], [r["min_s"] for r in sel],
                           marker=marker, label=f"{gr}-D grid")
        lo = min(min(r["predicted_s"], r["min_s"]) for r in pts)
        hi = max(max(r["predicted_s"], r["min_s"]) for r in pts)
        ax.plot([lo, hi], [lo, hi], "k:", lw=0.8, label="measured = predicted")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("predicted (dfft plan) [s]")
        ax.set_ylabel("measured min (dfft run) [s]")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    ax.set_title("Model-predicted vs measured forward+backward time")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_table(rows, path):
    """The seed-style comparison as Markdown: per N and P, the best two-sweep time on the 1-D
    and on the 2-D grid (over methods), their ratio and which wins."""
    bench = [r for r in rows if r["command"] == "bench-redist"]
    b = best(bench, lambda r: (r["shape"], r["ranks"], r["grid_rank"]))
    lines = ["| N^d | P | 1-D grid | 1-D min [ms] | 2-D grid | 2-D min [ms] | T1D/T2D | faster |",
             "|---|---|---|---|---|---|---|---|"]
    for shape in shapes_of(bench):
        for p in sorted({k[1] for k in b if k[0] == shape}):
            one, two = b.get((shape, p, 1)), b.get((shape, p, 2))
            if not one or not two:
                continue
            ratio = one["min_s"] / two["min_s"]
            lines.append(
                f"| {shape} | {p} | {one['grid']} ({one['method']}) | {one['min_s'] * 1e3:.3f} | "
                f"{two['grid']} ({two['method']}) | {two['min_s'] * 1e3:.3f} | {ratio:.2f} | "
                f"{'2-D' if ratio > 1 else '1-D'} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    results = read_jsonl(os.path.join(out, "results.jsonl"))
    model = read_jsonl(os.path.join(out, "model.jsonl"))
    csv_path = os.path.join(out, "scaling.csv")
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(to_rows(results, model))
    rows = load_csv(csv_path)  # every plot is drawn from the CSV as written
    plots = {
        "time_vs_p.png": plot_time_vs_p,
        "ratio_2d_vs_1d.png": plot_ratio,
        "speedup_efficiency.png": plot_speedup,
        "stages.png": plot_stages,
        "model_vs_measured.png": plot_model,
    }
    for name, fn in plots.items():
        fn(rows, os.path.join(out, name))
    write_table(rows, os.path.join(out, "table.md"))
    manifest = {
        "csv": "scaling.csv",
        "csv_sha256": sha256(csv_path),
        "rows": len(rows),
        "model_rows": sum(1 for r in rows if r["predicted_s"]),
        "table": "table.md",
        "plots": [{"file": n, "bytes": os.path.getsize(os.path.join(out, n)),
                   "sha256": sha256(os.path.join(out, n))} for n in plots],
    }
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"scaling_plot: {len(rows)} rows -> {csv_path}; plots and manifest.json in {out}")


if __name__ == "__main__":
    main()
