#!/usr/bin/env python3
"""Turns bench/ab.sh's lines into medians per variant and each variant's ratio to the first one.

  bench/ab_report.py RAW_TXT OUT_DIR      writes OUT_DIR/ab.md and prints it

OUT_DIR/variants.txt (one label per line, as bench/ab.sh writes it) gives the order; its first
label is the reference.

For each placement and workload: the median over rounds of calls/s (and p50 for W1, MB/s for W4)
of each variant, and the reference's figure over the variant's ("what the reference has that the
variant lacks buys": 1.10 means the reference is 10% faster). Only figures of one run compare.
"""
import collections
import pathlib
import re
import statistics
import sys

LINE = re.compile(r"^bench (\S+) (W\d) (.*)$")
CALLGRIND = re.compile(r"^callgrind (\S+) W1 (\S+) (client|server) instructions_per_call=(\d+)")


def main() -> int:
    raw, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    values = collections.defaultdict(list)
    order, pins, workloads = [], [], []
    for line in raw.read_text().splitlines():
        m = LINE.match(line)
        if not m:
            continue
        label, workload, rest = m.groups()
        fields = dict(kv.split("=", 1) for kv in rest.split())
        pin = fields.pop("pin", "?")
        for seen, item in ((order, label), (pins, pin), (workloads, workload)):
            if item not in seen:
                seen.append(item)
        for metric in ("calls_per_s", "p50_us", "p99_us"):
            if metric in fields:
                values[(pin, label, workload, metric)].append(float(fields[metric]))
    rounds = max((len(v) for v in values.values()), default=0)
    med = {k: statistics.median(v) for k, v in values.items()}
    listed = out / "variants.txt"
    if listed.is_file():
        named = [l.strip() for l in listed.read_text().splitlines() if l.strip()]
        order = [l for l in named if l in order] + [l for l in order if l not in named]
    reference = order[0] if order else None
    workloads.sort()
    pins.sort(key=lambda p: (p != "same", p))

    lines = [f"# A/B: medians of {rounds} interleaved round(s); ratios are {reference} / variant\n"]
    lines.append("Calls/s (W1 also p50 µs). A ratio above 1 is what the variant loses against the reference.\n")
    load = out / "load.txt"
    if load.exists() and load.read_text().strip() not in ("", "0"):
        lines.append(f"Background load: {load.read_text().strip()} busy processes beside client and server.\n")
    for pin in pins:
        lines.append(f"\n## PIN={pin}\n")
        head = []
        for w in workloads:
            head += [f"{w} calls/s", "ratio"] + (["W1 p50 µs", "ratio"] if w == "W1" else [])
        lines.append("| variant | " + " | ".join(head) + " |")
        lines.append("|---|" + "---|" * len(head))
        for label in order:
            cells = []
            for w in workloads:
                metrics = [("calls_per_s", True)] + ([("p50_us", False)] if w == "W1" else [])
                for metric, higher_better in metrics:
                    v, r = med.get((pin, label, w, metric)), med.get((pin, reference, w, metric))
                    cells.append(f"{v:,.1f}" if v and metric == "p50_us" else (f"{v:,.0f}" if v else "—"))
                    if v and r:
                        cells.append(f"{(r / v if higher_better else v / r):.3f}")
                    else:
                        cells.append("—")
            lines.append(f"| {label} | " + " | ".join(cells) + " |")

    callgrind = out / "callgrind.txt"
    if callgrind.is_file():
        counts = {}
        for line in callgrind.read_text().splitlines():
            if m := CALLGRIND.match(line):
                counts[(m.group(2), m.group(3))] = int(m.group(4))
        if counts:
            lines.append("\n## Instructions per W1 call (callgrind, one CPU)\n")
            lines.append("| variant | client | server |")
            lines.append("|---|---|---|")
            for label in sorted({k[0] for k in counts}):
                lines.append(f"| {label} | {counts.get((label, 'client'), 0):,} | {counts.get((label, 'server'), 0):,} |")
            for suffix in ("", "-deadlines"):
                for side in ("client", "server"):
                    a, b = counts.get((f"base{suffix}", side)), counts.get((f"head{suffix}", side))
                    if a and b:
                        lines.append(f"\nhead{suffix} / base{suffix} {side}: {b / a:.3f}")
    (out / "ab.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
