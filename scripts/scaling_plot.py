#!/usr/bin/python3
"""Merges dfft JSON reports (one JSONL file per job) into one CSV and plots drawn from it.

usage: /usr/bin/python3 scripts/scaling_plot.py [--update-docs] OUTDIR FILE.jsonl [FILE.jsonl ...]

Reads `run` and `bench-redist` reports (docs/schema/dfft-report.schema.json; other lines are
skipped) and writes into OUTDIR:

  scaling.csv             one row per report: problem, result, stage times, the model's
                          prediction, and the provenance (commit, hosts, ranks per node,
                          cores, oversubscription, time)
  time_vs_p.png           time per pair (run, per transform kind) or per two sweeps
                          (bench-redist) against P, one line per shape and grid
  speedup_efficiency.png  speed-up and parallel efficiency against the smallest P measured
  stages.png              stage breakdown (fft, pack, comm, unpack) of the largest shape
  model_vs_measured.png   the model's predicted time against the measured one (run)
  table.md                the 1-D against the 2-D grid, per shape and P (bench-redist)
  manifest.json           the CSV's sha256 and row count, each PNG's size and sha256, and the
                          provenance summary every plot is stamped with

--update-docs also copies the CSV, the plots, table.md and manifest.json into docs/scaling/ and
rewrites the results section of docs/scaling.md (a table of the fastest time per kind, shape, P
and grid against the model, and the plots).

Each plot carries its provenance (dfft version and commit, hosts, MPI library, CPU, dates) and,
where ranks × threads exceeded the cores of a node, an oversubscription warning. Needs
matplotlib (Debian's python3-matplotlib for /usr/bin/python3: scripts/setup installs it).
"""

import csv
import hashlib
import json
import math
import os
import sys
from collections import defaultdict

try:
    import matplotlib
except ModuleNotFoundError:
    sys.exit("scaling_plot: needs the Python module matplotlib for the plots: run scripts/setup "
             "(it installs Debian's python3-matplotlib for /usr/bin/python3) or "
             "`pip install matplotlib`, and run this script with that python")

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLUMNS = [
    "job", "command", "kind", "shape", "n", "d", "ranks", "grid_choice", "grid", "grid_rank",
    "method", "threads", "min_s", "median_s", "fft_s", "pack_s", "comm_s", "unpack_s",
    "predicted_s", "roundtrip_error", "reference_error", "nodes", "ranks_per_node",
    "cores_per_node", "oversubscribed", "hostnames", "dfft_version", "git_commit",
    "build_profile", "mpi_library", "cpu_model", "timestamp_utc",
]

PLOTS = ["time_vs_p.png", "speedup_efficiency.png", "stages.png", "model_vs_measured.png"]


def dims(v):
    return "x".join(str(x) for x in v)


def rows_of(path):
    """The CSV rows of one JSONL file's run and bench-redist reports."""
    out = []
    job = os.path.splitext(os.path.basename(path))[0]
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.startswith("{"):
                continue
            v = json.loads(line)
            if v.get("schema_version") != 1:
                sys.exit(f"scaling_plot: {path}:{n}: not a dfft report of schema version 1 "
                         "(older dfft? re-run the sweep with this one)")
            if v["command"] not in ("run", "bench-redist"):
                continue
            p, r, pv = v["problem"], v["result"], v["provenance"]
            st = r.get("stages") or {}
            out.append({
                "job": job,
                "command": v["command"],
                "kind": p.get("kind", "-") if v["command"] == "run" else "-",
                "shape": dims(p["shape"]),
                "n": p["shape"][0],
                "d": len(p["shape"]),
                "ranks": p["ranks"],
                "grid_choice": p.get("grid_choice", ""),
                "grid": dims(r["grid"]),
                "grid_rank": len(r["grid"]),
                "method": p.get("method", ""),
                "threads": r.get("threads_per_rank", pv.get("threads_per_rank") or 1),
                "min_s": r["min_s"],
                "median_s": r["median_s"],
                "fft_s": st.get("fft_s", 0.0),
                "pack_s": st.get("pack_s", 0.0),
                "comm_s": st.get("comm_s", 0.0),
                "unpack_s": st.get("unpack_s", 0.0),
                "predicted_s": r.get("predicted_s") if r.get("predicted_s") is not None else "",
                "roundtrip_error": r.get("roundtrip_error", ""),
                "reference_error": r.get("reference_error", "") if r.get("reference_error") is not None else "",
                "nodes": pv["node_count"],
                "ranks_per_node": pv.get("ranks_per_node") or "",
                "cores_per_node": pv["cores_per_node"],
                "oversubscribed": int(bool(pv["oversubscribed"])),
                "hostnames": " ".join(pv["hostnames"]),
                "dfft_version": pv["dfft_version"],
                "git_commit": pv["git_commit"],
                "build_profile": pv["build_profile"],
                "mpi_library": pv.get("mpi_library") or "",
                "cpu_model": pv["cpu_model"],
                "timestamp_utc": pv["timestamp_utc"],
            })
    return out


def load_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in ["n", "d", "ranks", "grid_rank", "threads", "nodes", "cores_per_node",
                  "oversubscribed"]:
            r[k] = int(r[k])
        r["ranks_per_node"] = int(r["ranks_per_node"]) if r["ranks_per_node"] else 0
        for k in ["min_s", "median_s", "fft_s", "pack_s", "comm_s", "unpack_s"]:
            r[k] = float(r[k])
        r["predicted_s"] = float(r["predicted_s"]) if r["predicted_s"] else None
    return rows


def provenance_summary(rows):
    """One or two lines naming what produced the rows, and the oversubscription warning."""
    def values(key):
        return sorted({str(r[key]) for r in rows if str(r[key])})
    hosts = sorted({h for r in rows for h in r["hostnames"].split()})
    dates = values("timestamp_utc")
    text = (f"dfft {', '.join(values('dfft_version'))} (commit {', '.join(values('git_commit'))}, "
            f"{', '.join(values('build_profile'))} build) · {', '.join(values('mpi_library'))} · "
            f"{len(hosts)} host(s): {', '.join(hosts[:4])}{' …' if len(hosts) > 4 else ''} · "
            f"{', '.join(values('cpu_model'))} · {dates[0][:16] if dates else '?'}"
            f"{' – ' + dates[-1][:16] if len(dates) > 1 else ''} UTC")
    over = [r for r in rows if r["oversubscribed"]]
    warning = None
    if over:
        worst = max(over, key=lambda r: r["ranks_per_node"] * r["threads"] / r["cores_per_node"])
        warning = (f"oversubscribed: {len(over)} of {len(rows)} runs had more ranks × threads than "
                   f"cores on a node (up to {worst['ranks_per_node']} × {worst['threads']} on "
                   f"{worst['cores_per_node']} cores): those times include waiting for a core")
    return text, warning


def stamp(fig, summary):
    text, warning = summary
    fig.text(0.01, 0.005, text, fontsize=6.5, color="0.35", ha="left", va="bottom")
    if warning:
        fig.text(0.01, 0.035, warning, fontsize=7.5, color="#b00000", ha="left", va="bottom",
                 weight="bold")


def finish(fig, path, summary):
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    stamp(fig, summary)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def note(ax, text):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, wrap=True)
    ax.set_xticks([])
    ax.set_yticks([])


def best(rows, key):
    """The fastest row (over methods and anything not in `key`) per key."""
    out = {}
    for r in rows:
        k = key(r)
        if k not in out or r["min_s"] < out[k]["min_s"]:
            out[k] = r
    return out


def series(rows):
    """(label, rows) per what a time-vs-P panel compares: command and kind."""
    groups = defaultdict(list)
    for r in rows:
        groups[(r["command"], r["kind"])].append(r)
    return sorted(groups.items())


def grid_label(r):
    return "auto" if r["grid_choice"] == "auto" else f"{r['grid_rank']}-D"


def shapes_of(rows):
    return sorted({r["shape"] for r in rows}, key=lambda s: [int(x) for x in s.split("x")])


def panel_title(command, kind):
    return ("two sweeps of redistribution (bench-redist)" if command == "bench-redist"
            else f"{kind} forward + backward (run)")


def plot_time_vs_p(rows, path, summary):
    groups = series(rows)
    fig, axes = plt.subplots(1, max(1, len(groups)), figsize=(5.5 * max(1, len(groups)), 4.8),
                             squeeze=False)
    if not groups:
        note(axes[0][0], "no run or bench-redist reports")
    for ax, ((command, kind), sel) in zip(axes[0], groups):
        b = best(sel, lambda r: (r["shape"], grid_label(r), r["ranks"]))
        for shape in shapes_of(sel):
            for gl in sorted({k[1] for k in b if k[0] == shape}):
                pts = sorted((k[2], v["min_s"]) for k, v in b.items() if k[:2] == (shape, gl))
                style = "s--" if gl == "auto" else "o-"
                ax.plot([p for p, _ in pts], [t for _, t in pts], style, label=f"{shape}, {gl} grid")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("processes P")
        ax.set_ylabel("fastest time [s]")
        ax.set_title(panel_title(command, kind), fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("Time against the number of processes")
    finish(fig, path, summary)


def plot_speedup(rows, path, summary):
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.8))
    drawn = False
    maxp = 1
    for (command, kind), sel in series(rows):
        b = best(sel, lambda r: (r["shape"], r["ranks"]))
        for shape in shapes_of(sel):
            pts = sorted((k[1], v["min_s"]) for k, v in b.items() if k[0] == shape)
            if len(pts) < 2:
                continue
            (p0, t0), drawn = pts[0], True
            maxp = max(maxp, pts[-1][0] / p0)
            label = f"{command} {kind if kind != '-' else ''} {shape} (from P={p0})".replace("  ", " ")
            a1.plot([p / p0 for p, _ in pts], [t0 / t for _, t in pts], "o-", label=label)
            a2.plot([p for p, _ in pts], [t0 * p0 / (t * p) for p, t in pts], "o-", label=label)
    if drawn:
        a1.plot([1, maxp], [1, maxp], "k:", lw=0.8, label="ideal")
        a1.legend(fontsize=7)
    else:
        note(a1, "needs at least two process counts of one shape")
    a1.set_xlabel("P / smallest P")
    a1.set_ylabel("speed-up against the smallest P (fastest grid)")
    a2.set_xlabel("processes P")
    a2.set_ylabel("parallel efficiency T(P0)·P0 / (T(P)·P)")
    a2.axhline(1.0, color="k", ls=":", lw=0.8)
    for ax in (a1, a2):
        ax.grid(True, alpha=0.3)
    fig.suptitle("Strong scaling")
    finish(fig, path, summary)


def plot_stages(rows, path, summary):
    fig, ax = plt.subplots(figsize=(11, 4.8))
    runs = [r for r in rows if r["command"] == "run"] or rows
    if not runs:
        note(ax, "no reports")
    else:
        shape = shapes_of(runs)[-1]
        sel = [r for r in runs if r["shape"] == shape]
        b = best(sel, lambda r: (r["kind"], r["ranks"], r["grid"]))
        keys = sorted(b, key=lambda k: (k[0], k[1], k[2]))
        labels = [f"{k[0] if k[0] != '-' else ''}\nP={k[1]}\n{k[2]}" for k in keys]
        bottom = [0.0] * len(keys)
        for stage, color in [("fft_s", "#4c72b0"), ("pack_s", "#dd8452"),
                             ("comm_s", "#c44e52"), ("unpack_s", "#55a868")]:
            vals = [b[k][stage] for k in keys]
            ax.bar(range(len(keys)), vals, bottom=bottom, color=color, label=stage[:-2])
            bottom = [x + y for x, y in zip(bottom, vals)]
        ax.plot(range(len(keys)), [b[k]["min_s"] for k in keys], "k_", ms=18, mew=2,
                label="measured minimum (wall)")
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels(labels, fontsize=7)
        ax.set_ylabel("seconds (mean per pair, slowest rank)")
        ax.set_title(f"Where the time goes, shape {shape}")
        ax.legend(fontsize=8)
    finish(fig, path, summary)


def plot_model(rows, path, summary):
    pts = [r for r in rows if r["command"] == "run" and r["predicted_s"]]
    fig, ax = plt.subplots(figsize=(6.5, 5.4))
    if not pts:
        note(ax, "no run report with a prediction\n(the model predicts c2c and r2c "
                 "of one field)")
    else:
        for gr, marker in [(1, "o"), (2, "s"), (3, "^"), (4, "v")]:
            sel = [r for r in pts if r["grid_rank"] == gr]
            if sel:
                ax.scatter([r["predicted_s"] for r in sel], [r["min_s"] for r in sel],
                           marker=marker, label=f"{gr}-D grid")
        lo = min(min(r["predicted_s"], r["min_s"]) for r in pts)
        hi = max(max(r["predicted_s"], r["min_s"]) for r in pts)
        ax.plot([lo, hi], [lo, hi], "k:", lw=0.8, label="measured = predicted")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("predicted by the model [s]")
        ax.set_ylabel("measured minimum [s]")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    ax.set_title("Predicted against measured time per pair")
    finish(fig, path, summary)


def write_table(rows, path):
    """Per shape and P, the fastest bench-redist time on a 1-D and on a 2-D grid."""
    bench = [r for r in rows if r["command"] == "bench-redist"]
    b = best(bench, lambda r: (r["shape"], r["ranks"], r["grid_rank"]))
    lines = ["| shape | P | 1-D grid | 1-D min [ms] | 2-D grid | 2-D min [ms] | T(1-D)/T(2-D) | faster |",
             "|---|---|---|---|---|---|---|---|"]
    for shape in shapes_of(bench):
        for p in sorted({k[1] for k in b if k[0] == shape}):
            one, two = b.get((shape, p, 1)), b.get((shape, p, 2))
            if not one or not two:
                continue
            ratio = one["min_s"] / two["min_s"]
            lines.append(f"| {shape} | {p} | {one['grid']} | {one['min_s'] * 1e3:.3f} | "
                         f"{two['grid']} | {two['min_s'] * 1e3:.3f} | {ratio:.2f} | "
                         f"{'2-D' if ratio > 1 else '1-D'} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def update_docs(rows, out, summary):
    """Copies the results into docs/scaling/ and rewrites docs/scaling.md's results section."""
    import shutil
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dest = os.path.join(root, "docs", "scaling")
    os.makedirs(dest, exist_ok=True)
    for name in ["scaling.csv", "table.md", "manifest.json"] + PLOTS:
        shutil.copyfile(os.path.join(out, name), os.path.join(dest, name))
    lines = [f"Provenance: {summary[0]}.", ""]
    if summary[1]:
        lines += [f"**{summary[1]}.**", ""]
    lines += ["| command | kind | shape | P | grid | min [ms] | predicted [ms] | measured/predicted |",
              "|---|---|---|---|---|---|---|---|"]
    b = best(rows, lambda r: (r["command"], r["kind"], r["shape"], r["ranks"], r["grid"]))
    for k in sorted(b, key=lambda k: (k[0], k[1], [int(x) for x in k[2].split("x")], k[3], k[4])):
        r = b[k]
        pred = r["predicted_s"]
        lines.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {k[4]}{' (auto)' if r['grid_choice'] == 'auto' else ''} "
                     f"| {r['min_s'] * 1e3:.3f} | {pred * 1e3:.3f} | {r['min_s'] / pred:.2f} |" if pred else
                     f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {k[4]} | {r['min_s'] * 1e3:.3f} | | |")
    lines += ["", "Files: [scaling.csv](scaling/scaling.csv), [table.md](scaling/table.md) (1-D "
              "against 2-D), [manifest.json](scaling/manifest.json).", ""]
    for name in PLOTS:
        lines.append(f"![{name[:-4].replace('_', ' ')}](scaling/{name})")
    path = os.path.join(root, "docs", "scaling.md")
    with open(path) as f:
        doc = f.read()
    begin, end = "<!-- results:begin -->", "<!-- results:end -->"
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w") as f:
        f.write(head + begin + "\n" + "\n".join(lines) + "\n" + end + tail)


def main():
    args = sys.argv[1:]
    docs = "--update-docs" in args
    args = [a for a in args if a != "--update-docs"]
    if len(args) < 2:
        sys.exit(__doc__)
    out, files = args[0], args[1:]
    os.makedirs(out, exist_ok=True)
    rows = [r for path in files for r in rows_of(path)]
    if not rows:
        sys.exit(f"scaling_plot: no run or bench-redist report in {' '.join(files)}")
    csv_path = os.path.join(out, "scaling.csv")
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    rows = load_csv(csv_path)  # every plot is drawn from the CSV as written
    summary = provenance_summary(rows)
    plot_time_vs_p(rows, os.path.join(out, "time_vs_p.png"), summary)
    plot_speedup(rows, os.path.join(out, "speedup_efficiency.png"), summary)
    plot_stages(rows, os.path.join(out, "stages.png"), summary)
    plot_model(rows, os.path.join(out, "model_vs_measured.png"), summary)
    write_table(rows, os.path.join(out, "table.md"))
    manifest = {
        "csv": "scaling.csv",
        "csv_sha256": sha256(csv_path),
        "rows": len(rows),
        "jobs": sorted({r["job"] for r in rows}),
        "model_rows": sum(1 for r in rows if r["predicted_s"]),
        "provenance": summary[0],
        "oversubscription_warning": summary[1],
        "git_commits": sorted({r["git_commit"] for r in rows}),
        "hostnames": sorted({h for r in rows for h in r["hostnames"].split()}),
        "table": "table.md",
        "plots": [{"file": n, "bytes": os.path.getsize(os.path.join(out, n)),
                   "sha256": sha256(os.path.join(out, n))} for n in PLOTS],
    }
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    if docs:
        update_docs(rows, out, summary)
    print(f"scaling_plot: {len(rows)} rows from {len(files)} file(s) -> {csv_path}; plots, "
          f"table.md and manifest.json in {out}")


if __name__ == "__main__":
    main()
