#!/usr/bin/env python3
"""geerpc's include graph, checked: no header includes itself through others (a cycle makes a
header's meaning depend on which one a reader includes first), and a program that only makes
calls compiles no server and no debug page.

Reads every `#include` line of include/geerpc/** (quoted paths relative to the including file,
<geerpc/...> relative to include/; standard and Boost headers are left out). Every line counts,
conditional or not: the graph is what any configuration could include.

  check_include_graph.py INCLUDE_DIR

Exits 1 and says why on a cycle, or when a client-only header's closure reaches a server part.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')

# Headers a program that only makes calls includes, and what their closure must not reach.
CLIENT_HEADERS = ["geerpc/client.hpp"]
SERVER_PARTS = ("geerpc/server/", "geerpc/server.hpp", "geerpc/transport/threaded/server.hpp",
                "geerpc/transport/blocking/server.hpp")


def read_graph(root):
    graph = {}
    for folder, _, files in os.walk(os.path.join(root, "geerpc")):
        for name in files:
            if not name.endswith(".hpp"):
                continue
            path = os.path.join(folder, name)
            key = os.path.relpath(path, root).replace(os.sep, "/")
            graph[key] = edges_of(root, path)
    return graph


def edges_of(root, path):
    edges = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, target = m.groups()
            if kind == '"':
                full = os.path.normpath(os.path.join(os.path.dirname(path), target))
            elif target.startswith("geerpc/"):
                full = os.path.normpath(os.path.join(root, target))
            else:
                continue
            if os.path.isfile(full):
                edges.append(os.path.relpath(full, root).replace(os.sep, "/"))
    return edges


def cycles(graph):
    """Strongly connected components of more than one header (or a header including itself)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = [0]

    def visit(start):
        work = [(start, iter(graph.get(start, ())))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.get(child, ()))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph.get(node, ()):
                    found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def path_to(graph, start, goal_test):
    """The first include chain from `start` to a header goal_test accepts, or None."""
    parent = {start: None}
    queue = [start]
    for node in queue:
        if goal_test(node) and node != start:
            chain = [node]
            while parent[chain[-1]] is not None:
                chain.append(parent[chain[-1]])
            return list(reversed(chain))
        for child in graph.get(node, ()):
            if child not in parent:
                parent[child] = node
                queue.append(child)
    return None


def is_server_part(header):
    return header.startswith(SERVER_PARTS) or header.endswith("debug_page.hpp")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    root = sys.argv[1]
    graph = read_graph(root)
    failures = []
    for component in cycles(graph):
        failures.append("include cycle among: " + ", ".join(component))
    for header in CLIENT_HEADERS:
        if header not in graph:
            failures.append(header + ": not found")
            continue
        chain = path_to(graph, header, is_server_part)
        if chain:
            failures.append("a client-only program reaches a server part: " + " -> ".join(chain))
    for failure in failures:
        print("FAIL: " + failure)
    if not failures:
        print(f"include graph: {len(graph)} headers, no cycle; client-only headers ({', '.join(CLIENT_HEADERS)}) reach no server part")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
