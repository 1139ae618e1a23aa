#!/usr/bin/env python3
"""GET /metrics through Prometheus's own parser (Debian's python3-prometheus-client).

Usage: parse_scrape.py <geerpc_tests> <scratch file>. Runs the hidden test that writes a scrape
after known calls (tests/metrics_test.cpp, [.metrics_scrape]), parses it with
prometheus_client.parser.text_string_to_metric_families, and checks the families, their types and
each histogram's buckets. Exits 77 (ctest: skipped) when the module is missing.
"""
import os
import subprocess
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("skipped: python3-prometheus-client is not installed (apt-get install python3-prometheus-client)")
    sys.exit(77)


def main():
    tests, out = sys.argv[1], sys.argv[2]
    subprocess.run([tests, "[.metrics_scrape]"], env=dict(os.environ, GEERPC_METRICS_OUT=out), check=True)
    with open(out, "rb") as f:
        text = f.read().decode("utf-8")  # strict: the scrape is valid UTF-8
    families = {f.name: f for f in text_string_to_metric_families(text)}
    expected = {
        "rpc_server_connections": "gauge",
        "rpc_server_calls_in_flight": "gauge",
        "rpc_server_calls": "counter",
        "rpc_server_call_duration_seconds": "histogram",
        "rpc_server_request_size_bytes": "histogram",
        "rpc_server_response_size_bytes": "histogram",
        "rpc_server_queue_wait_seconds": "histogram",
        "rpc_server_unrouted_calls": "counter",
        "rpc_server_turned_away": "counter",
    }
    for name, kind in expected.items():
        assert name in families, f"no family {name}: {sorted(families)}"
        assert families[name].type == kind, f"{name} is a {families[name].type}, not a {kind}"
    # Every histogram: per label set, buckets cumulative, +Inf equal to _count.
    for family in families.values():
        if family.type != "histogram":
            continue
        series = {}
        for s in family.samples:
            key = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
            series.setdefault(key, {})
            if s.name.endswith("_bucket"):
                series[key].setdefault("buckets", []).append((float(s.labels["le"]), s.value))
            else:
                series[key][s.name[len(family.name):]] = s.value
        for key, parts in series.items():
            buckets = parts["buckets"]
            assert [le for le, _ in buckets] == sorted(le for le, _ in buckets), (family.name, key)
            counts = [n for _, n in buckets]
            assert counts == sorted(counts), (family.name, key, counts)
            assert buckets[-1][0] == float("inf") and buckets[-1][1] == parts["_count"], (family.name, key)
            assert "_sum" in parts, (family.name, key)
    calls = {
        (s.labels["rpc_method"], s.labels["rpc_geerpc_status"]): s.value for s in families["rpc_server_calls"].samples
    }
    assert calls[("Sum", "ok")] == 5 and calls[("Fail", "remote_error")] == 2, calls
    durations = {
        (s.labels["rpc_method"], s.labels["rpc_outcome"]): s.value
        for s in families["rpc_server_call_duration_seconds"].samples
        if s.name.endswith("_count")
    }
    assert durations[("Sum", "ok")] == 5 and durations[("Fail", "error")] == 2, durations
    # _sum in seconds: more than nothing, less than each call taking the largest bound (10 s).
    for s in families["rpc_server_call_duration_seconds"].samples:
        if s.name.endswith("_sum") and s.labels["rpc_method"] in ("Sum", "Fail"):
            key = (s.labels["rpc_method"], s.labels["rpc_outcome"])
            if durations[key] > 0:
                assert 0 < s.value < 10 * durations[key], (key, s.value)
    print(f"parsed {len(families)} families, {sum(len(f.samples) for f in families.values())} samples")


if __name__ == "__main__":
    main()
