#!/usr/bin/env bash
# The GPU suite in parts, for a host whose calls end after a time limit (the whole suite outlasts one, and the
# console launcher prints its summary only at the end). Staged as .gpu-host/parts.sh by gpu-stage.sh:
#   .gpu-host/parts.sh SECONDS "dev.maxsim4j.CudaParityTest" "dev.maxsim4j.CudaTrainingTest dev.maxsim4j.X" ...
# runs each group of classes in a JVM of its own for at most SECONDS, writes each one's tree of results to
# $OUT/part-N.log (the tests that finished are there even when a part runs out of time), prints any failure, and
# a table last.
here=$(cd "$(dirname "$0")" && pwd)
limit=$1
shift
cp=$(ls -d "$here"/lib/*.jar "$here"/lib/deps/*.jar "$here"/lib/test-classes/* 2>/dev/null | grep -v junit-console \
  | tr '\n' :)
n=0
table=""
for group in "$@"; do
  n=$((n + 1))
  select=()
  for class in $group; do select+=(--select-class "$class"); done
  start=$(date +%s)
  timeout "$limit" "$here/jre/bin/java" --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector \
    -jar "$here/lib/junit-console.jar" execute --disable-banner --details=tree --details-theme=ascii \
    --disable-ansi-colors --class-path "$cp" "${select[@]}" > "$OUT/part-$n.log" 2>&1
  status=$?
  summary=$(grep -E "tests (successful|failed)" "$OUT/part-$n.log" | tr -s ' []' ' ' | tr '\n' ' ')
  # a part that ran out of time has no summary: its finished tests are counted from the tree ([X] is a failure)
  table+="part $n exit $status, $(($(date +%s) - start)) s: ${summary:-no summary ($(grep -c '\[OK\]' \
"$OUT/part-$n.log") passed, $(grep -c '\[X\]' "$OUT/part-$n.log") failed so far)} | $group"$'\n'
  grep -B1 -A6 '\[X\]' "$OUT/part-$n.log" | head -60
done
echo "$table"
