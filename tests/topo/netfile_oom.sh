#!/bin/sh
# netfile_oom.sh - a network file read under `ulimit -v` runs out of memory
# as "out of memory", exit 71, never as a malformed file (issue 29: a 400
# MB GraphML failed with "malformed XML" when the memory ran out).
#
#   netfile_oom.sh COLLSIM [--sanitized]
#
# Writes a GraphML file (25,000 nodes, 300,000 edges, ~12 MB: beyond the
# 20,000 nodes where `collsim topo` computes all distances) and the same
# network as an edge list into a temporary folder, then reads each with
# `collsim topo` under address-space limits from where the program loads
# up to where the read succeeds.  Each run must exit 0 or 71; a 71 must say
# "out of memory" and never "malformed" or "not a GraphML graph"; at least
# one run per file must be a 71 (the limits reach below what the read
# needs), so the test fails if no limit made any reader run out.  Where it
# runs out (libxml2's scan, igraph, collsim's own arrays) depends on the
# limit: all must end the same way.
#
# --sanitized (meson passes it for -Db_sanitize builds): exits 77, skipped.
# AddressSanitizer reserves terabytes of address space at start-up, so no
# `ulimit -v` leaves it room to run.
set -eu
collsim="$1"
if [ "${2:-}" = --sanitized ]; then
    echo "skipped: ulimit -v and AddressSanitizer do not mix"
    exit 77
fi
dir="$(mktemp -d "${TMPDIR:-/tmp}/collsim-oom-XXXXXX")"
trap 'rm -rf "$dir"' EXIT

# the ring through every node, then pseudo-random pairs (a fixed LCG); no
# attributes, so parallel links are alike
awk -v n=25000 -v e=300000 -v g="$dir/big.graphml" -v l="$dir/big.edges" 'BEGIN {
    printf "<?xml version=\"1.0\"?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n" > g
    printf "<graph edgedefault=\"undirected\">\n" > g
    for (i = 0; i < n; i++) printf "<node id=\"n%d\"/>\n", i > g
    x = 12345
    for (k = 0; k < e; k++) {
        if (k < n) { u = k; v = (k + 1) % n }
        else {
            x = (x * 1103515245 + 12345) % 2147483648; u = x % n
            x = (x * 1103515245 + 12345) % 2147483648; v = x % n
            if (u == v) v = (v + 1) % n
        }
        printf "<edge source=\"n%d\" target=\"n%d\"/>\n", u, v > g
        printf "n%d n%d\n", u, v > l
    }
    printf "</graph></graphml>\n" > g
}'

status=0
for file in big.graphml big.edges; do
    ran_out=0
    kb=40000
    while [ "$kb" -le 2000000 ]; do
        # below what the program needs to load, the loader fails (127):
        # not this test's business, the next limit
        if ! (ulimit -v "$kb" && "$collsim" --version >/dev/null 2>&1); then
            kb=$((kb + 20000))
            continue
        fi
        set +e
        (ulimit -v "$kb" && exec "$collsim" topo --machine "net:file=$dir/$file") \
            >/dev/null 2>"$dir/err"
        rc=$?
        set -e
        err="$(cat "$dir/err")"
        case "$rc" in
        0)
            break ;; # enough memory: larger limits read it too
        71)
            ran_out=1
            echo "$file at ulimit -v $kb: $err"
            case "$err" in
            *"out of memory"*) ;;
            *) echo "FAIL $file at ulimit -v $kb: exit 71 without \"out of memory\": $err"
               status=1 ;;
            esac
            case "$err" in
            *malformed*|*"not a GraphML graph"*|*"not well-formed"*)
                echo "FAIL $file at ulimit -v $kb: out of memory reported as malformed: $err"
                status=1 ;;
            esac ;;
        *)
            echo "FAIL $file at ulimit -v $kb: exit $rc (want 71 or 0): $err"
            status=1 ;;
        esac
        kb=$((kb + 20000))
    done
    if [ "$ran_out" = 0 ]; then
        echo "FAIL $file: no limit made the read run out of memory (exit 71)"
        status=1
    else
        echo "ok $file: out of memory is exit 71, \"out of memory\"; read at ulimit -v $kb"
    fi
done
exit "$status"
