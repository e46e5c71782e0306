#!/usr/bin/env bash
# On the GPU host: the inference bench once per kernel variant (-Dmaxsim4j.cuda.variant=V; "default" = the
# rule), logs and JSON under $OUT/ab, then one table of kernel ms per shape and variant. JVM options: $BENCH_JVM,
# default the bench command's (docs/benchmarks.md): a 16 GB pre-touched heap. The table: kernel ms, whole-call
# ms and ms per call kept in flight.
#   scripts/gpu-ab.sh default 2rp stream
# SHAPES="1,1000,128,1024,128 1,1000,1024,1024,128" limits the run to those shapes (default: the 15).
set -uo pipefail
out=${OUT:-/tmp}/ab
mkdir -p "$out"
for v in "$@"; do
  opts=""
  [[ $v != default ]] && opts="-Dmaxsim4j.cuda.variant=$v"
  shapes=()
  for s in ${SHAPES:-}; do shapes+=(--shape "$s"); done
  JAVA_OPTS="${BENCH_JVM:--Xms16g -Xmx16g -XX:+AlwaysPreTouch} $opts" .gpu-host/java.sh dev.maxsim4j.bench.Main gpu "${shapes[@]}" --json "$out/$v.json" \
    > "$out/bench-$v.log" 2>&1 || echo "variant $v failed: see $out/bench-$v.log"
done
python3 - "$out" "$@" <<'PY'
import json, sys, os
out, variants = sys.argv[1], sys.argv[2:]
runs = {v: {tuple(c["shape"]): c for c in json.load(open(f"{out}/{v}.json"))} for v in variants if os.path.exists(f"{out}/{v}.json")}
shapes = next(iter(runs.values())).keys() if runs else []
print("kernel ms (call ms, in flight ms) per variant")
print("shape".ljust(22) + "floor".rjust(8) + "".join(v.rjust(26) for v in runs))
for s in shapes:
    row = "x".join(map(str, s)).ljust(22) + f"{next(iter(runs.values()))[s]['floor_ms']:8.4f}"
    for v in runs:
        c = runs[v].get(s)
        row += (f"{c['fused_ms']:.4f} ({c['call_ms']:.3f}, {c['async_resident_queries_ms']:.4f})" if c else "-").rjust(26)
    print(row)
PY
