#!/usr/bin/env bash
# Chosen GPU test classes in parts, for a host whose calls end after a time limit (the console launcher prints its
# summary only at the end; the whole suite: gpu-suite.sh). Staged as .gpu-host/parts.sh by gpu-stage.sh:
#   .gpu-host/parts.sh SECONDS "dev.maxsim4j.CudaParityTest" "dev.maxsim4j.CudaTrainingTest dev.maxsim4j.X" ...
# runs each group of classes in a JVM of its own for at most SECONDS and writes each test's end to part-N.log in
# $OUT (else the current folder) as it happens, so that a part that runs out of time still shows
# the tests it finished; prints each failure and a table last, and exits 1 where a part failed or ran out of time.
# Not -e: one part failing does not stop the rest.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-.}
mkdir -p "$out"
limit=$1
shift
cp=$(ls -d "$here"/lib/*.jar "$here"/lib/deps/*.jar "$here"/lib/test-classes/* 2>/dev/null | grep -v junit-console \
  | tr '\n' :)
n=0
rc=0
table=""
for group in "$@"; do
  n=$((n + 1))
  log=$out/part-$n.log
  select=()
  for class in $group; do select+=(--select-class "$class"); done
  start=$(date +%s)
  timeout -k 15 "$limit" "$here/jre/bin/java" --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector \
    -jar "$here/lib/junit-console.jar" execute --disable-banner --details=testfeed --disable-ansi-colors \
    --class-path "$cp" "${select[@]}" > "$log" 2>&1
  status=$?
  (( status == 0 )) || rc=1
  summary=$(grep -E "tests (successful|failed|skipped)" "$log" | tr -s ' []' ' ' | tr '\n' ' ')
  # a part that ran out of time has no summary: its tests are counted from the feed, a line as each one ends
  finished=$(grep -c -E ' :: (SUCCESSFUL|FAILED|ABORTED|SKIPPED)$' "$log")
  failed=$(grep -c -E ' :: FAILED$' "$log")
  table+="part $n exit $status, $(($(date +%s) - start)) s: ${summary:-no summary: $finished finished, $failed failed}"
  table+=" | $group"$'\n'
  grep -A4 -E ' :: FAILED$' "$log" | head -60
done
echo "$table"
exit $rc
