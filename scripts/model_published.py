"""`scripts/model-validate --published [--holdout]`: dfft's model against published runs.

Jean-Zay (GENCI/IDRIS): the PencilFFTs benchmarks of J. Polanco ("PencilFFTs.jl", benchmark
page of the documentation; repository jipolanco/PencilFFTs.jl, files
benchmarks/clusters/idris.jean_zay/results/IntelMPI.2019.9/N{512,1024,2048}/*.dat at commit
68f366f8606d04432125052d7aedd011f30c58cc, dated 30/08/2021): Intel Cascade Lake 6248, 2 x 20
cores per node, Intel MPI 2019 over Omni-Path (100 Gb/s), one rank per core, r2c
forward+backward of N^3, mean of 100 pairs, processor grid from MPI_Dims_create, output left in
the last pencil. `PencilFFTs_PI.dat` (Isend/Irecv, the default) and `P3DFFT2.dat` (P3DFFT 2
in the same runs) are the four tables fitted; `PencilFFTs_PA.dat` (MPI_Alltoallv) is predicted.

ARCHER2 (EPCC): the 2DECOMP&FFT v2.1 scaling runs (repository 2decomp-fft/RunScalability4D2D,
ResultsArcher2/RunScalabilityV2p1_1024x1024x1024_crayFFTW/
2025_07_04_Res1024x1024x1024_C2CX_D0000x0000_crayFFTWNewNodes.dat at commit
83d7452781bc38526c51058b4c960b8ddd58ca8c): 2 x 64-core AMD EPYC 7742 per node, 128 ranks
per node, HPE Cray MPI over Slingshot, c2c forward+backward of 1024^3 from x-pencils (the
example fft_c2c_x: mean over 10 pairs, averaged over ranks), grid from 2DECOMP's automatic
choice (p_col = the middle divisor of P), output left in z-pencils.

Every prediction asks `dfft plan --batch` (no MPI) for the runs' own grid. Fits are least
squares of log(predicted/measured) (Levenberg-Marquardt on the logarithms of the
parameters, a grid over the integer switch size). The pure part of the suite runs it.
"""

import json
import math
import os
import subprocess

JEAN_ZAY = "Jean-Zay"
ARCHER2 = "ARCHER2"

# (name, machine, N, kind, {P: milliseconds per forward+backward pair})
TABLES = [
    ("PencilFFTs 1024^3", JEAN_ZAY, 1024, "r2c",
     {256: 517.6, 512: 290.7, 1024: 177.0, 2048: 122.1, 4096: 90.3, 8192: 40.6}),
    ("P3DFFT 1024^3", JEAN_ZAY, 1024, "r2c",
     {256: 623.2, 512: 333.2, 1024: 199.0, 2048: 141.3, 4096: 102.5, 8192: 52.8}),
    ("PencilFFTs 512^3", JEAN_ZAY, 512, "r2c",
     {128: 110.2, 256: 63.7, 512: 35.9, 1024: 20.8, 2048: 14.0, 4096: 10.9, 8192: 7.9}),
    ("PencilFFTs 2048^3", JEAN_ZAY, 2048, "r2c",
     {512: 2381, 1024: 1550, 2048: 1023, 4096: 620, 8192: 345, 16384: 369}),
]

# PencilFFTs with MPI_Alltoallv (`PencilFFTs_PA.dat`), the same runs' other transposition
# method: predicted from the Jean-Zay fit with the node's two rates refitted on two points.
ALLTOALLV_TABLES = [
    ("PencilFFTs Alltoallv 512^3", JEAN_ZAY, 512, "r2c",
     {128: 137.8, 256: 75.0, 512: 44.7, 1024: 24.2, 2048: 20.5, 4096: 12.4, 8192: 8.1}),
    ("PencilFFTs Alltoallv 1024^3", JEAN_ZAY, 1024, "r2c",
     {256: 614.3, 512: 332.5, 1024: 198.4, 2048: 140.7, 4096: 102.4, 8192: 55.0}),
    ("PencilFFTs Alltoallv 2048^3", JEAN_ZAY, 2048, "r2c",
     {512: 2882.1, 1024: 1766.1, 2048: 1161.2, 4096: 878.4, 8192: 447.0, 16384: 282.3}),
]

# 2DECOMP&FFT on ARCHER2, 1 to 64 nodes of 128 ranks; milliseconds (the file's seconds).
ARCHER2_TABLES = [
    ("2DECOMP&FFT 1024^3 c2c", ARCHER2, 1024, "c2c",
     {128: 3328.6, 256: 1808.2, 512: 1044.9, 1024: 506.5, 2048: 246.9, 4096: 123.4,
      8192: 67.4}),
]

# The two points of each Jean-Zay table the usual fit uses: the second smallest P and the
# second largest, so that each table's fit spans its range without its end points.
FIT_POINTS = {
    "PencilFFTs 1024^3": (512, 4096),
    "P3DFFT 1024^3": (512, 4096),
    "PencilFFTs 512^3": (256, 4096),
    "PencilFFTs 2048^3": (1024, 8192),
}
# The two points each other set of runs is fitted on: Alltoallv as the usual fit's 1024^3
# tables; ARCHER2 at its ends, one node (no network: the node's memory) and 64 nodes.
SECOND_FIT_POINTS = {
    "PencilFFTs Alltoallv 1024^3": (512, 4096),
    "2DECOMP&FFT 1024^3 c2c": (128, 8192),
}

# The one measured anomaly: slower than the table's previous point. Excused everywhere and
# left out of every fit.
EXPLAINED = {
    ("PencilFFTs 2048^3", 16384): "slower than 8192 ranks in the measurement itself (369 vs 345 ms)",
}
# What the usual fit (two points per table) alone misses, and why.
USUAL_FIT_EXPLAINED = {
    ("PencilFFTs 512^3", 2048): "two points per table, none between 1024 and 4096 ranks, leave "
                                "the uplinks' knee loose; fitted to every point of the other "
                                "tables (cross-validation below) the model predicts this point "
                                "within 25 %",
}

# What the fits leave alone: the node (Jean-Zay: 2 x 20 cores, one rank per core, one thread
# each; ARCHER2: 2 x 64) and the rest of the defaults (Jean-Zay's memory, 200 GB/s, is the
# default's).
FIXED = {
    JEAN_ZAY: {"cores_per_node": 40, "ranks_per_node": 40, "threads_per_rank": 1,
               "source": "Jean-Zay fit (scripts/model-validate --published)"},
    ARCHER2: {"cores_per_node": 128, "ranks_per_node": 128, "threads_per_rank": 1,
              "source": "ARCHER2 fit (scripts/model-validate --published)"},
}

# Fitted parameters, their starting values and the range a plausible machine has; a fit
# that ends outside it (or within 1 % of its ends) fails.
RANGES = {
    "fft_s_per_element_log2": (1e-9, 1e-10, 1e-8),
    "tw_node_s_per_byte": (1e-10, 1e-11, 1e-9),
    "uplink_taper": (2.0, 1.0, 16.0),
    "tw_memory_s_per_byte": (5e-12, 1e-12, 1e-10),
}
# The Jean-Zay tables pin down the network, not the split of the local work: compute and
# copies both scale as N^3/P, and only the FFT's log N (10 % between N = 512 and 2048, within
# the tables' noise) tells them apart. Fitted freely, the FFT rate drifts to whatever floor
# the other local terms set; the local rates stay at the defaults (a core of this class).
JEAN_ZAY_FREE = ["tw_node_s_per_byte", "uplink_taper"]
SWITCH_NODES = [4, 8, 12, 16, 20, 24, 28, 32, 48, 64]
# Other runs from two points, two parameters each: Alltoallv moves the same data over the
# same network as Isend/Irecv, differently (its node link and contention); ARCHER2 is another
# node and network (its memory bandwidth and its link).
SECOND_FREE = {
    JEAN_ZAY: ["tw_node_s_per_byte", "uplink_taper"],
    ARCHER2: ["tw_memory_s_per_byte", "tw_node_s_per_byte"],
}


def dims_create(p):
    """MPI_Dims_create(p, 2): the most balanced pair, larger first."""
    best = (p, 1)
    a = 1
    while a * a <= p:
        if p % a == 0:
            best = (p // a, a)
        a += 1
    return list(best)


def middle_divisor_grid(p):
    """2DECOMP&FFT's automatic grid: p_col = the middle divisor of p (ascending list, index
    n/2 + 1 of 1-based), p_row = p / p_col; p_col counts consecutive ranks."""
    divisors = [d for d in range(1, p + 1) if p % d == 0]
    col = divisors[len(divisors) // 2]
    return [p // col, col]


def runs_grid(machine, p):
    return dims_create(p) if machine == JEAN_ZAY else middle_divisor_grid(p)


class Planner:
    """A `dfft plan --batch` process: one JSON request per line, one answer per line."""

    def __init__(self, dfft):
        env = dict(os.environ)
        env.pop("DFFT_MACHINE", None)
        self.p = subprocess.Popen([dfft, "plan", "--batch"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env=env)
        self.requests = 0

    def ask_many(self, requests):
        """Answers in order; every request written before the first answer is read."""
        self.p.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
        self.p.stdin.flush()
        self.requests += len(requests)
        answers = []
        for r in requests:
            answer = json.loads(self.p.stdout.readline())
            if "error" in answer:
                raise RuntimeError(f"dfft plan --batch: {answer['error']} for {r}")
            answers.append(answer)
        return answers

    def ask(self, request):
        return self.ask_many([request])[0]

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def request(point, machine, grid="runs"):
    name, mach, n, kind, p, _ = point
    r = {"shape": [n, n, n], "ranks": p, "kind": kind, "transposed_out": True, "windows": False,
         "machine": machine}
    if grid == "runs":
        r["grid"] = "x".join(map(str, runs_grid(mach, p)))
    elif grid is not None:
        r["grid"] = grid
    return r


def points_of(tables):
    """(table, machine, N, kind, P, measured ms) of every point."""
    return [(name, mach, n, kind, p, t) for name, mach, n, kind, tab in tables
            for p, t in tab.items()]


def solve(a, b):
    """Gaussian elimination with partial pivoting; None if singular."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        piv = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[piv] = m[piv], m[c]
        if abs(m[c][c]) < 1e-300:
            return None
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                for k in range(c, n + 1):
                    m[r][k] -= f * m[c][k]
    return [m[i][n] / m[i][i] for i in range(n)]


def levenberg_marquardt(residuals, x, iterations=40):
    """Minimizes the sum of squares of `residuals(xs)` (one list per x of `xs`, evaluated
    together) from `x`; forward differences. Returns (x, cost)."""
    h = 1e-4
    r = residuals([x])[0]
    cost = sum(v * v for v in r)
    lam = 1e-2
    for _ in range(iterations):
        probes = [x[:k] + [x[k] + h] + x[k + 1:] for k in range(len(x))]
        jac = [[(a - b) / h for a, b in zip(rp, r)] for rp in residuals(probes)]
        n = len(x)
        jtj = [[sum(jac[a][i] * jac[b][i] for i in range(len(r))) for b in range(n)]
               for a in range(n)]
        jtr = [sum(jac[a][i] * r[i] for i in range(len(r))) for a in range(n)]
        step = None
        for _ in range(10):
            damped = [[jtj[a][b] + (lam * (jtj[a][a] + 1e-12) if a == b else 0.0)
                       for b in range(n)] for a in range(n)]
            d = solve(damped, [-v for v in jtr])
            if d is None:
                lam *= 10
                continue
            y = [xi + di for xi, di in zip(x, d)]
            ry = residuals([y])[0]
            cy = sum(v * v for v in ry)
            if cy < cost - 1e-12:
                x, r, cost, step = y, ry, cy, d
                lam = max(lam / 3, 1e-9)
                break
            lam *= 4
        if step is None or max(abs(v) for v in step) < 1e-3:
            break
    return x, cost


def fit(planner, points, base, free, switches):
    """Fits the `free` parameters (log space) and the switch size (over `switches`) of
    `base` to `points`; returns (cost, machine)."""
    best = None
    # Each switch size starts from the previous one's optimum: a few steps each.
    x0 = [math.log(base.get(k, RANGES[k][0])) for k in free]
    for switch in switches:
        def machine_of(x):
            m = dict(base)
            for k, v in zip(free, x):
                m[k] = math.exp(max(-700.0, min(700.0, v)))
            if "uplink_taper" in m:
                m["uplink_taper"] = max(1.0, m["uplink_taper"])
            if switch is not None:
                m["switch_nodes"] = switch
            return m

        def residuals(xs):
            reqs = [request(pt, machine_of(x)) for x in xs for pt in points]
            answers = planner.ask_many(reqs)
            out = []
            for i in range(len(xs)):
                part = answers[i * len(points):(i + 1) * len(points)]
                out.append([math.log(1e3 * a["predicted_s"] / pt[5])
                             for a, pt in zip(part, points)])
            return out

        x, cost = levenberg_marquardt(residuals, x0)
        x0 = x
        if best is None or cost < best[0]:
            best = (cost, machine_of(x))
    return best


def implausible(machine, free, switches):
    """The fitted parameters outside (or within 1 % of the ends of) their plausible range."""
    bad = []
    for k in free:
        _, lo, hi = RANGES[k]
        v = machine[k]
        if not (lo * 1.01 < v < hi / 1.01):
            bad.append(f"{k} = {v:.3g} (plausible range {lo:g} .. {hi:g})")
    if switches and machine.get("switch_nodes") in (switches[0], switches[-1]):
        bad.append(f"switch_nodes = {machine['switch_nodes']} (the end of {switches})")
    return bad


def usable(point):
    return (point[0], point[4]) not in EXPLAINED


def name_of(g):
    return "x".join(map(str, g))


ROW_HEAD = ["| table | P | grid | measured [ms] | predicted [ms] | ratio | compute | intra-node "
            "| inter-node | latency | model's pencil | model's grid | |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]


def rows(planner, points, machine, fit_points, failures, what, explained=EXPLAINED):
    """The table rows of `points` predicted with `machine`; records misses (other than the
    `explained` ones) in `failures`."""
    reqs = []
    for pt in points:
        reqs += [request(pt, machine), request(pt, machine, None), request(pt, machine, "2")]
    answers = planner.ask_many(reqs)
    out = []
    for i, pt in enumerate(points):
        name, mach, n, kind, p, t = pt
        a, choice, pencil = answers[3 * i:3 * i + 3]
        grid = runs_grid(mach, p)
        pred = 1e3 * a["predicted_s"]
        ratio = pred / t
        total = a["predicted_s"]

        def share(v):
            return f"{100 * v / total:.0f} %"

        note = []
        if (name, p) in fit_points:
            note.append("*fit*")
        elif abs(math.log(ratio)) > math.log(1.25):
            why = explained.get((name, p))
            note.append(f"**miss**: {why}" if why else "**MISS**")
            if not why:
                failures.append(f"{what}: {name} P={p}: ratio {ratio:.2f}")
        pencil_note = name_of(pencil["grid"]) + ("" if pencil["grid"] == grid else " (differs)")
        chosen_note = name_of(choice["grid"]) + ("" if choice["grid"] == grid else " (differs)")
        out.append(
            f"| {name} | {p} | {name_of(grid)} | {t:g} | {pred:.1f} | {ratio:.2f} "
            f"| {share(a['fft_s'] + a['memory_s'])} | {share(a['intra_node_s'])} "
            f"| {share(a['inter_node_s'])} | {share(a['latency_s'])} "
            f"| {pencil_note} | {chosen_note} | {' '.join(note)} |")
    return out


def parameter_rows(machine, free, cost):
    lines = ["| parameter | fitted value |", "|---|---|"]
    for k in free:
        lines.append(f"| `{k}` | {machine[k]:.3g} |")
    if "switch_nodes" in machine and "uplink_taper" in free:
        lines.append(f"| `switch_nodes` | {machine['switch_nodes']} |")
    lines.append(f"| residual (sum of squared log ratios at the fit points) | {cost:.4f} |")
    return lines


def usual_fit(planner):
    """The four Jean-Zay tables, two points each."""
    points = [pt for pt in points_of(TABLES) if pt[4] in FIT_POINTS[pt[0]]]
    return fit(planner, points, FIXED[JEAN_ZAY], JEAN_ZAY_FREE, SWITCH_NODES)


def main_section(planner, failures):
    cost, machine = usual_fit(planner)
    failures += [f"usual fit: {b}" for b in implausible(machine, JEAN_ZAY_FREE, SWITCH_NODES)]
    fit_points = {(name, p) for name, ps in FIT_POINTS.items() for p in ps}
    lines = ["### Published runs (Jean-Zay), predicted by one fitted profile", "",
             "Fitted on the points marked *fit* (two per table); every other point is "
             "a prediction. `ratio` = predicted / measured; `grid` = the "
             "grid the runs used (its predicted time is the one compared); "
             "`model's pencil` = the fastest 2-D grid in the model, `model's grid` = its "
             "choice among every slab and pencil (see the text for why they differ).", ""]
    lines += parameter_rows(machine, JEAN_ZAY_FREE, cost)
    lines.append("| fixed | `cores_per_node` 40, `ranks_per_node` 40, `threads_per_rank` 1, "
                 "the rest the defaults |")
    lines += ["", *ROW_HEAD, *rows(planner, points_of(TABLES), machine, fit_points, failures,
                                   "usual fit", EXPLAINED | USUAL_FIT_EXPLAINED), ""]
    return lines, machine


def holdout_section(planner, failures):
    """Each Jean-Zay table predicted from a fit to every usable point of the other three."""
    lines = ["### Cross-validation: each Jean-Zay table predicted from the other three", "",
             "For each table, the profile is fitted to every point of the other three "
             "(the anomaly left out) and predicts every point of the held-out one.", "",
             "| held out | " + " | ".join(f"`{k}`" for k in JEAN_ZAY_FREE)
             + " | `switch_nodes` | residual |",
             "|---|" + "---|" * (len(JEAN_ZAY_FREE) + 2)]
    body = []
    for held in TABLES:
        others = [t for t in TABLES if t is not held]
        points = [pt for pt in points_of(others) if usable(pt)]
        cost, machine = fit(planner, points, FIXED[JEAN_ZAY], JEAN_ZAY_FREE, SWITCH_NODES)
        failures += [f"holdout {held[0]}: {b}"
                     for b in implausible(machine, JEAN_ZAY_FREE, SWITCH_NODES)]
        lines.append(f"| {held[0]} | " + " | ".join(f"{machine[k]:.3g}" for k in JEAN_ZAY_FREE)
                     + f" | {machine['switch_nodes']} | {cost:.4f} |")
        body += rows(planner, points_of([held]), machine, set(), failures,
                     f"holdout {held[0]}")
    lines += ["", *ROW_HEAD, *body, ""]
    return lines


def second_machine_section(planner, failures, jean_zay):
    """Alltoallv on Jean-Zay and 2DECOMP&FFT on ARCHER2: two points, two parameters each."""
    lines = ["### Other runs: two points fitted, the rest predicted", "",
             "PencilFFTs with `MPI_Alltoallv` on Jean-Zay starts from the Jean-Zay profile "
             "above; 2DECOMP&FFT on ARCHER2 from the defaults with ARCHER2's node "
             "(128 cores, 128 ranks). Each refits two parameters on the two points marked "
             "*fit*; every other point is a prediction.", "",
             "| runs | base | fitted | fit points |", "|---|---|---|---|"]
    body = []
    profiles = {}
    for tables, base in ((ALLTOALLV_TABLES, jean_zay), (ARCHER2_TABLES, FIXED[ARCHER2])):
        mach = tables[0][1]
        free = SECOND_FREE[mach]
        fit_points = {(name, p) for name, ps in SECOND_FIT_POINTS.items() for p in ps
                      if any(t[0] == name for t in tables)}
        points = [pt for pt in points_of(tables) if (pt[0], pt[4]) in fit_points]
        base = dict(base, source=f"{tables[0][0].split(' ')[0]} on {mach} "
                                 "(scripts/model-validate --published)")
        cost, machine = fit(planner, points, base, free, [None])
        failures += [f"{tables[0][0]}: {b}" for b in implausible(machine, free, [])]
        profiles[tables[0][0]] = machine
        lines.append(f"| {tables[0][0].rsplit(' ', 1)[0]} on {mach} | "
                     f"{'the Jean-Zay fit' if mach == JEAN_ZAY else 'defaults'} | "
                     + ", ".join(f"`{k}` {machine[k]:.3g}" for k in free)
                     + f" | {', '.join(f'{n} P={p}' for n, p in sorted(fit_points))} |")
        body += rows(planner, points_of(tables), machine, fit_points, failures, mach)
    lines += ["", *ROW_HEAD, *body, ""]
    return lines, profiles


def run(dfft, holdout=False):
    """Fits, predicts every point; returns (markdown, failures, the Jean-Zay profile)."""
    planner = Planner(dfft)
    failures = []
    try:
        lines, machine = main_section(planner, failures)
        if holdout:
            lines += holdout_section(planner, failures)
            more, _ = second_machine_section(planner, failures, machine)
            lines += more
        return "\n".join(lines), failures, machine
    finally:
        planner.close()
