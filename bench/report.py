#!/usr/bin/env python3
"""Turns the lines bench/run.sh collected into medians, the targets' ratios and a plot.

  bench/report.py RAW_TXT OUT_DIR

RAW_TXT holds "bench <peer> <workload> key=value ... round=N pin=P" lines; OUT_DIR/stderr.txt (if
present) adds the "# ..." detail lines (allocations per call, idle KiB per connection). Writes
OUT_DIR/table.md (with OUT_DIR/callgrind.txt's instruction counts, when present) and, when gnuplot
is installed, OUT_DIR/plot.svg (one panel per placement). Ratios only ever compare figures from the
same run and placement.
"""
import collections
import pathlib
import re
import shutil
import statistics
import subprocess
import sys

LINE = re.compile(r"^bench (\S+) (W\d) (.*)$")
DETAIL_ALLOCS = re.compile(r"^# (\S+) (W\d) allocs_per_call client=([\d.]+) server=([\d.]+)")
DETAIL_IDLE = re.compile(r"^# (\S+) (W5) .*?idle_kb_per_conn=(-?[\d.]+)")
DETAIL_BARE = re.compile(r"^# (\S+) W5 server: rss_before_connections_kb=(\d+)")


def medians(raw: pathlib.Path):
    values = collections.defaultdict(list)  # (pin, peer, workload, metric) -> [value per round]
    for line in raw.read_text().splitlines():
        m = LINE.match(line)
        if not m:
            continue
        peer, workload, rest = m.groups()
        fields = dict(kv.split("=", 1) for kv in rest.split())
        pin = fields.pop("pin", "?")
        fields.pop("round", None)
        for metric, value in fields.items():
            values[(pin, peer, workload, metric)].append(float(value))
    return {key: statistics.median(v) for key, v in values.items()}, values


def details(stderr: pathlib.Path):
    allocs, idle, bare = (collections.defaultdict(list) for _ in range(3))
    if stderr.is_file():
        for line in stderr.read_text(errors="replace").splitlines():
            if m := DETAIL_ALLOCS.match(line):
                allocs[(m.group(1), m.group(2))].append((float(m.group(3)), float(m.group(4))))
            elif m := DETAIL_IDLE.match(line):
                idle[m.group(1)].append(float(m.group(3)))
            elif m := DETAIL_BARE.match(line):
                bare[m.group(1)].append(float(m.group(2)))
    return allocs, idle, bare


def tls_targets(transports, pins, ratio):
    """TLS against plain calls on the same transport (issue 28): rows of the targets table."""
    lines = []
    goals = [("W1 p50", "W1", "p50_us", "<=", 1.25), ("W2 calls/s", "W2", "calls_per_s", ">=", 0.7),
             ("W4 MB/s", "W4", "mb_per_s", ">=", 0.7)]
    for transport in transports:
        for suffix in ("tls", "tls-keep"):
            for label, w, metric, op, goal in goals:
                cells = []
                for pin in pins:
                    r = ratio(pin, f"geerpc-{transport}-{suffix}", f"geerpc-{transport}", w, metric)
                    met = r is not None and (r <= goal if op == "<=" else r >= goal)
                    cells.append("—" if r is None else f"{r:.2f} {'met' if met else 'missed'}")
                lines.append(f"| {label}: geerpc-{transport}-{suffix} / geerpc-{transport} | {op} {goal} | "
                             + " | ".join(cells) + " |")
    return lines


TLS_MEASURES = [("W1 p50", "W1", "p50_us"), ("W1 calls/s", "W1", "calls_per_s"), ("W2 calls/s", "W2", "calls_per_s"),
                ("W3 calls/s", "W3", "calls_per_s"), ("W4 MB/s", "W4", "mb_per_s"), ("W5 calls/s", "W5", "calls_per_s")]


def grpc_tls_rows(pins, ratio):
    """gRPC's own TLS cost (bench/grpc_tls, TLS=1): rows of the targets table, reported beside
    geerpc's TLS rows, not goals."""
    lines = []
    for label, w, metric in TLS_MEASURES:
        cells = [ratio(pin, "grpc-sync-tls", "grpc-sync", w, metric) for pin in pins]
        if any(c is not None for c in cells):
            lines.append(f"| {label}: grpc-sync-tls / grpc-sync | reported | "
                         + " | ".join("—" if c is None else f"{c:.2f}" for c in cells) + " |")
    return lines


def variant_cost(peers, pins, ratio, suffix, heading):
    """Each program run as `<peer>-<suffix>` against itself as `<peer>`, side by side (TLS=1: over
    TLS / plaintext; JSON=1: the JSON codec / the binary one)."""
    pairs = [p[:-len(f"-{suffix}")] for p in peers if p.endswith(f"-{suffix}") and p[:-len(f"-{suffix}")] in peers]
    if not pairs:
        return []
    out = [f"\n## {heading}\n",
           "W1 p50: above 1 is slower; calls/s and MB/s: below 1 is slower.\n"]
    for pin in pins:
        out += [f"\nPIN={pin}\n", "| measure | " + " | ".join(f"{p}-{suffix} / {p}" for p in pairs) + " |",
                "|---|" + "---|" * len(pairs)]
        for label, w, metric in TLS_MEASURES:
            cells = [ratio(pin, f"{p}-{suffix}", p, w, metric) for p in pairs]
            if any(c is not None for c in cells):
                out.append(f"| {label} | " + " | ".join("—" if c is None else f"{c:.2f}" for c in cells) + " |")
    return out


def tls_cost(peers, pins, ratio):
    """Each program over TLS against itself in plaintext, side by side: geerpc's transports and gRPC."""
    return variant_cost(peers, pins, ratio, "tls",
                        "What TLS costs each program (over TLS / plaintext, same run and placement)")


def json_cost(peers, pins, ratio):
    """geerpc's JSON codec against its binary one on the same transport (JSON=1: W1, W2 and W4)."""
    return variant_cost(peers, pins, ratio, "json",
                        "What the JSON codec costs geerpc (JSON / binary codec, same run and placement)")


def jsonrpc_servers(peers, pins, ratio):
    """geerpc's JSON-RPC server against Go's, both called by Go's own jsonrpc client (PEERS with
    go-jsonrpc): issue 29 asks for at least 2x Go's calls/s on W2 and W3."""
    # (geerpc's server under a client, Go's server under the same client), for each client.
    pairs = [(p, base) for base, prefix in (("go-jsonrpc", "go-jsonrpc-geerpc-"),
                                            ("geerpc-jsonrpc-go", "geerpc-jsonrpc-geerpc-"))
             if base in peers for p in peers if p.startswith(prefix)]
    if not pairs:
        return []
    out = ["\n## JSON-RPC servers: geerpc's / Go's, under the same client (Go's net/rpc/jsonrpc client: "
           "go-jsonrpc-*; geerpc's jsonrpc@ client: geerpc-jsonrpc-*), same run and placement\n",
           "| measure | goal | " + " | ".join(f"{p} / {base}, PIN={pin}" for pin in pins for p, base in pairs) + " |",
           "|---|---|" + "---|" * (len(pins) * len(pairs))]
    for label, w, metric in TLS_MEASURES[:5]:
        goal = ">= 2" if w in ("W2", "W3") and metric == "calls_per_s" else "reported"
        cells = []
        for pin in pins:
            for p, base in pairs:
                r = ratio(pin, p, base, w, metric)
                verdict = "" if goal == "reported" or r is None else (" met" if r >= 2 else " missed")
                cells.append("—" if r is None else f"{r:.2f}{verdict}")
        if any(c != "—" for c in cells):
            out.append(f"| {label} | {goal} | " + " | ".join(cells) + " |")
    return out


REACTOR_CPU = re.compile(r"^reactorcpu (\S+) (W\d) name=\S+ threads=\d+ cpu_ns_per_call=([\d.]+) round=(\d+) pin=(\S+)")


def jsonrpc_server_cpu(raw: pathlib.Path, pins):
    """The JSON-RPC servers' CPU time per call under geerpc's jsonrpc@ client, which reads every
    thread of the server process over the timed phase (--thread-cpu-of): what each server spends,
    whichever client bounds the calls/s on a machine that client and server share."""
    per_round = collections.defaultdict(float)  # (pin, peer, workload, round) -> ns per call, all threads
    for line in raw.read_text().splitlines():
        if (m := REACTOR_CPU.match(line)) and m.group(1).startswith("geerpc-jsonrpc-"):
            peer, workload, ns, rnd, pin = m.groups()
            per_round[(pin, peer, workload, rnd)] += float(ns)
    if not per_round:
        return []
    values = collections.defaultdict(list)
    for (pin, peer, workload, _), ns in per_round.items():
        values[(pin, peer, workload)].append(ns)
    med = {key: statistics.median(v) for key, v in values.items()}
    servers = sorted({peer for _, peer, _ in med})
    workloads = sorted({w for _, _, w in med})
    out = ["\n## JSON-RPC servers' CPU per call (all the server's threads, µs, medians; under geerpc's "
           "jsonrpc@ client), and Go's / geerpc's\n",
           "| server | " + " | ".join(f"{w} PIN={pin}" for pin in pins for w in workloads) + " |",
           "|---|" + "---|" * (len(pins) * len(workloads))]
    for peer in servers:
        cells = []
        for pin in pins:
            for w in workloads:
                ns, go = med.get((pin, peer, w)), med.get((pin, "geerpc-jsonrpc-go", w))
                text = "—" if ns is None else f"{ns / 1000:.2f}"
                if ns and go and peer != "geerpc-jsonrpc-go":
                    text += f" ({go / ns:.2f}x)"
                cells.append(text)
        out.append(f"| {peer} | " + " | ".join(cells) + " |")
    return out


STORM = re.compile(r"^storm (\S+) (floor|sync|async) (.*)$")


def storms(raw: pathlib.Path, pins):
    """The timeout storm's runs: sync p99 against the same run's floor (goal: within 2 ms in 9 of
    10 runs), async p99 (goal: at most 1 ms), and the earliest timeout (never early: min >= 0)."""
    runs = collections.defaultdict(dict)  # (pin, round) -> run -> fields
    for line in raw.read_text().splitlines():
        if (m := STORM.match(line)) and not m.group(1).endswith(TWO_HOPS):
            fields = dict(kv.split("=", 1) for kv in m.group(3).split())
            runs[(fields.get("pin", "?"), fields.get("round", "?"))][m.group(2)] = fields
    if not runs:
        return []
    out = ["\n## Timeout storm (1,000 calls, 200 ms deadlines; lateness in µs)\n",
           "| placement | run | floor p99 | sync p50 | sync p99 | sync p99 − floor p99 | async p50 | async p99 | "
           "earliest | fast after | handlers stopped |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    summary = {}
    for (pin, rnd), r in sorted(runs.items(), key=lambda kv: (kv[0][0] != "same", kv[0][0], int(kv[0][1]))):
        floor, sync, asyn = r.get("floor", {}), r.get("sync", {}), r.get("async", {})
        f = lambda d, k: float(d[k]) if k in d else None
        gap = f(sync, "p99_us") - f(floor, "p99_us") if sync and floor else None
        earliest = min(x for x in (f(sync, "min_us"), f(asyn, "min_us")) if x is not None) if sync or asyn else None
        s = summary.setdefault(pin, [0, 0, 0, 0, True])
        s[0] += 1
        s[1] += 1 if gap is not None and gap <= 2000 else 0
        s[2] += 1 if f(asyn, "p99_us") is not None and f(asyn, "p99_us") <= 1000 else 0
        s[3] += 1 if asyn else 0
        s[4] = s[4] and earliest is not None and earliest >= 0 and sync.get("errors") == "0" and asyn.get("errors") == "0"
        cell = lambda v: f"{v:,.0f}" if v is not None else "—"
        out.append(f"| {pin} | {rnd} | {cell(f(floor, 'p99_us'))} | {cell(f(sync, 'p50_us'))} | "
                   f"{cell(f(sync, 'p99_us'))} | {cell(gap)} | {cell(f(asyn, 'p50_us'))} | {cell(f(asyn, 'p99_us'))} | "
                   f"{cell(earliest)} | {sync.get('fast_after', '—')} | {sync.get('handlers_stopped', '—')} |")
    for pin, (n, sync_ok, async_ok, async_runs, never_early) in summary.items():
        out.append(f"\nPIN={pin}: sync p99 within 2 ms of the floor in {sync_ok} of {n} runs (goal: 9 of 10); "
                   f"async p99 <= 1 ms in {async_ok} of {async_runs}; "
                   f"{'no timeout early and no wrong outcome' if never_early else 'SOME TIMEOUT EARLY OR WRONG'}")
    return out


TWO_HOPS = "-2hop"


def hop_storms(raw: pathlib.Path):
    """The two-hop storm (A -> B -> C, bench/relay.hpp) against the one-hop storm of the same round
    and placement: p99 lateness at the caller (goal: within 2 ms of one hop's), and when C's
    handlers were told against the caller's deadline (goal: p99 within 3 ms of it)."""
    runs = collections.defaultdict(dict)  # (pin, round) -> (hops, run) -> fields
    for line in raw.read_text().splitlines():
        if (m := STORM.match(line)) and m.group(2) != "floor":
            fields = dict(kv.split("=", 1) for kv in m.group(3).split())
            hops = 2 if m.group(1).endswith(TWO_HOPS) else 1
            runs[(fields.get("pin", "?"), fields.get("round", "?"))][(hops, m.group(2))] = fields
    runs = {k: v for k, v in runs.items() if any(h == 2 for h, _ in v)}
    if not runs:
        return []
    out = ["\n## Timeout storm across two hops (A → B → C; lateness at the caller, and C told, in µs)\n",
           "| placement | run | call | 1 hop p99 | 2 hops p99 | 2 hops − 1 hop | C told p50, p99 (1 hop) | "
           "C told p50, p99 (2 hops) |",
           "|---|---|---|---|---|---|---|---|"]
    ok = collections.defaultdict(lambda: [0, 0, 0])  # pin -> [rows, lateness within 2 ms, told within 3 ms]
    for (pin, rnd), r in sorted(runs.items(), key=lambda kv: (kv[0][0] != "same", kv[0][0], int(kv[0][1]))):
        for call in ("sync", "async"):
            one, two = r.get((1, call)), r.get((2, call))
            if not two:
                continue
            f = lambda d, k: float(d[k]) if d and k in d else None
            gap = f(two, "p99_us") - f(one, "p99_us") if one else None
            told = [f(two, "told_p50_us"), f(two, "told_p99_us")]
            cell = lambda v: f"{v:,.0f}" if v is not None else "—"
            o = ok[pin]
            o[0] += 1
            o[1] += 1 if gap is not None and gap <= 2000 else 0
            o[2] += 1 if None not in told and max(abs(t) for t in told) <= 3000 else 0
            out.append(f"| {pin} | {rnd} | {call} | {cell(f(one, 'p99_us'))} | {cell(f(two, 'p99_us'))} | {cell(gap)} | "
                       f"{cell(f(one, 'told_p50_us'))}, {cell(f(one, 'told_p99_us'))} | "
                       f"{cell(told[0])}, {cell(told[1])} |")
    for pin, (rows, late_ok, told_ok) in ok.items():
        out.append(f"\nPIN={pin}: two-hop p99 within 2 ms of one hop's in {late_ok} of {rows}; "
                   f"C told within 3 ms of the caller's deadline (p50 and p99) in {told_ok} of {rows}")
    return out


def main() -> int:
    raw, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    med, per_round = medians(raw)
    allocs, idle, bare = details(out / "stderr.txt")
    pins = sorted({k[0] for k in med}, key=lambda p: (p != "same", p))
    peers = sorted({k[1] for k in med})
    workloads = sorted({k[2] for k in med})
    rounds = max((len(v) for v in per_round.values()), default=0)

    def get(pin, peer, workload, metric):
        return med.get((pin, peer, workload, metric))

    lines = [f"# Benchmark results\n", f"Medians of {rounds} round(s); each round ran every peer once per placement.\n"]
    load = out / "load.txt"
    if load.exists() and load.read_text().strip() not in ("", "0"):
        lines.append(f"Background load: {load.read_text().strip()} busy processes beside client and server.\n")
    for pin in pins:
        lines.append(f"\n## PIN={pin}\n")
        lines.append("| peer | " + " | ".join(f"{w} calls/s | {w} p50 µs | {w} p99 µs" for w in workloads) + " |")
        lines.append("|---|" + "---|" * (3 * len(workloads)))
        for peer in peers:
            cells = []
            for w in workloads:
                cps, p50, p99 = (get(pin, peer, w, m) for m in ("calls_per_s", "p50_us", "p99_us"))
                cells += [f"{cps:,.0f}" if cps else "—", f"{p50:.1f}" if p50 else "—", f"{p99:.1f}" if p99 else "—"]
            lines.append(f"| {peer} | " + " | ".join(cells) + " |")

    # The targets of issue 5, as ratios within one placement.
    def ratio(pin, a, b, workload, metric):
        x, y = get(pin, a, workload, metric), get(pin, b, workload, metric)
        return x / y if x and y else None

    targets = [
        ("W1 p50: geerpc-threaded / raw-tcp-pingpong", "W1", "p50_us", "raw-tcp-pingpong", "<=", 1.25),
        ("W1 p50, every call with a deadline: timeouts / raw-tcp-pingpong", "W1", "p50_us", "raw-tcp-pingpong",
         "<=", 1.15),
        ("W1 p50: geerpc-threaded / go-netrpc", "W1", "p50_us", "go-netrpc", "<=", 0.5),
        ("W2 calls/s: geerpc-threaded / raw-tcp", "W2", "calls_per_s", "raw-tcp", ">=", 0.8),
        ("W2 calls/s: geerpc-threaded / go-netrpc", "W2", "calls_per_s", "go-netrpc", ">=", 4),
        ("W2 calls/s: geerpc-threaded / grpc-sync", "W2", "calls_per_s", "grpc-sync", ">=", 5),
        ("W3 calls/s: geerpc-threaded / raw-tcp", "W3", "calls_per_s", "raw-tcp", ">=", 0.8),
        ("W3 calls/s: geerpc-threaded / go-netrpc", "W3", "calls_per_s", "go-netrpc", ">=", 4),
        ("W3 calls/s: geerpc-threaded / grpc-sync", "W3", "calls_per_s", "grpc-sync", ">=", 5),
        ("W4 MB/s: geerpc-threaded / raw-tcp", "W4", "mb_per_s", "raw-tcp", ">=", 0.7),
        ("W4 MB/s: geerpc-threaded / raw-tcp-batched", "W4", "mb_per_s", "raw-tcp-batched", ">=", 1.2),
        ("W2 calls/s: geerpc-threaded / raw-tcp-batched", "W2", "calls_per_s", "raw-tcp-batched", ">=", 1),
        ("W3 calls/s: geerpc-threaded / raw-tcp-batched", "W3", "calls_per_s", "raw-tcp-batched", ">=", 1),
        ("W5 calls/s: geerpc-threaded / go-netrpc", "W5", "calls_per_s", "go-netrpc", ">=", 1),
        ("W1 calls/s with 1 s deadlines: timeouts / plain", "W1", "calls_per_s", None, ">=", 0.9),
        ("W2 calls/s with 1 s deadlines: timeouts / plain", "W2", "calls_per_s", None, ">=", 0.9),
    ]
    lines.append("\n## Targets (geerpc / peer, same run and placement)\n")
    lines.append("| target | goal | " + " | ".join(f"PIN={p}" for p in pins) + " |")
    lines.append("|---|---|" + "---|" * len(pins))
    for name, w, metric, peer, op, goal in targets:
        cells = []
        for pin in pins:
            mine = "geerpc-threaded-timeouts" if name.startswith("W1 p50, every call") else "geerpc-threaded"
            r = (ratio(pin, "geerpc-threaded-timeouts", "geerpc-threaded", w, metric) if peer is None
                 else ratio(pin, mine, peer, w, metric))
            if r is None:
                cells.append("—")
            else:
                met = r <= goal if op == "<=" else r >= goal
                cells.append(f"{r:.2f} {'met' if met else 'missed'}")
        lines.append(f"| {name} | {op} {goal} | " + " | ".join(cells) + " |")
    lines += tls_targets(sorted({p[len("geerpc-"):-len("-tls")] for p in peers if p.startswith("geerpc-") and
                                 p.endswith("-tls")}), pins, ratio)
    lines += grpc_tls_rows(pins, ratio)
    lines += tls_cost(peers, pins, ratio)
    lines += json_cost(peers, pins, ratio)
    lines += jsonrpc_servers(peers, pins, ratio)
    lines += jsonrpc_server_cpu(raw, pins)
    for peer, values in sorted(bare.items()):
        idle_rss = [v for (pin, p, w, m), v in med.items() if p == peer and w == "W5" and m == "idle_rss_kb"]
        if idle_rss:
            per = (statistics.median(idle_rss) - statistics.median(values)) / 1000
            lines.append(f"\nW5 server KiB per idle connection, counted from before the first connection, {peer}: "
                         f"{per:.1f}")
    for peer, values in sorted(idle.items()):
        lines.append(f"\nW5 server idle KiB per connection, {peer}: median {statistics.median(values):.1f} "
                     f"(goal for geerpc <= 16)")
    for (peer, w), pairs in sorted(allocs.items()):
        client = statistics.median(p[0] for p in pairs)
        server = statistics.median(p[1] for p in pairs)
        lines.append(f"\nAllocations per call, {peer} {w}: client {client:.2f}, server {server:.2f} (goal <= 2 each)")
    lines += storms(raw, pins)
    lines += hop_storms(raw)
    callgrind = out / "callgrind.txt"
    if callgrind.is_file():
        lines.append("\nInstructions per W1 call (callgrind, both sides on one CPU):")
        for line in callgrind.read_text().splitlines():
            if m := re.match(r"^callgrind (\S+) W1 (?:(\S+) )?(\S+) instructions_per_call=(\d+)", line):
                variant = f" with {m.group(2)}" if m.group(2) else ""
                lines.append(f"- {m.group(1)}{variant} {m.group(3)}: {int(m.group(4)):,}")
    (out / "table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))

    if shutil.which("gnuplot"):
        # One panel per placement, the same peers in the same colours in each.
        shown = [p for p in peers if p in ("geerpc-threaded", "geerpc-plain", "geerpc-blocking", "raw-tcp",
                                           "raw-tcp-batched", "raw-tcp-pingpong",
                                           "go-netrpc", "grpc-sync", "grpc-callback")]
        panels = []
        for pin in pins:
            data = out / f"plot-{pin}.dat"
            with data.open("w") as f:
                f.write("workload " + " ".join(shown) + "\n")
                for w in workloads:
                    f.write(w + " " + " ".join(str(get(pin, p, w, "calls_per_s") or 0) for p in shown) + "\n")
            panels.append(f"set title 'PIN={pin}'\n"
                          f"plot for [i=2:{len(shown) + 1}] '{data}' using i:xtic(1) title columnheader(i)\n")
        script = f"""
set terminal svg size 1200,520 dynamic noenhanced font 'sans,11'
set output '{out / "plot.svg"}'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set logscale y
set yrange [1000:*]
set ylabel 'calls per second (median of {rounds} rounds)'
set key outside bottom center horizontal font ',10'
set xtics nomirror
set grid ytics
set multiplot layout 1,{len(pins)} title 'geerpc and its peers, higher is better (W4: 4 KiB Echo)'
{"".join(panels)}unset multiplot
"""
        subprocess.run(["gnuplot"], input=script, text=True, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
