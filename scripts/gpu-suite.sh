#!/usr/bin/env bash
# The whole GPU suite within one call of the GPU host: the three longest classes (their float64 references keep the
# host's cores busy while the GPU waits) in JVMs of their own at once, then every other test tagged gpu in one JVM,
# alone, so that the tests of memory budgets and pinned buffers see no other process's allocations. Staged as
# .gpu-host/suite.sh by gpu-stage.sh:
#   .gpu-host/suite.sh [SECONDS]
# SECONDS (default 570) bounds the whole run: the JVMs still running when it is spent are stopped, and the rest get
# what the first ones left. Each JVM writes each test's end to suite-N.log in $OUT (else the current folder) as it
# happens, so that one stopped still shows the tests it finished; prints each failure and a table last, and exits 1
# where a JVM failed or was stopped. JAVA_OPTS reach every JVM.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-.}
mkdir -p "$out"
budget=${1:-570}
long=(dev.maxsim4j.CudaParityTest dev.maxsim4j.CudaCompressedTest
  "dev.maxsim4j.CudaExpandedDocumentsTest dev.maxsim4j.CudaHostileParityFuzzTest")
cp=$(ls -d "$here"/lib/*.jar "$here"/lib/deps/*.jar "$here"/lib/test-classes/* 2>/dev/null | grep -v junit-console \
  | tr '\n' :)
status=$(mktemp -d)
trap 'rm -rf "$status"' EXIT
start=$(date +%s)

# runs the JUnit console with the given selection into suite-N.log until the budget is spent (then a hung JVM is
# killed 15 s after it is asked to stop)
junit() {
  local n=$1
  shift
  local left=$((budget - ($(date +%s) - start)))
  (( left > 0 )) || left=1
  # shellcheck disable=SC2086 # JAVA_OPTS: options separated by spaces, as java.sh and test.sh take them
  timeout -k 15 "$left" "$here/jre/bin/java" --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector \
    ${JAVA_OPTS:-} -jar "$here/lib/junit-console.jar" execute --disable-banner --details=testfeed \
    --disable-ansi-colors --class-path "$cp" "$@" > "$out/suite-$n.log" 2>&1
  echo $? > "$status/$n"
}

# one table line for JVM n: its exit, its summary (or, stopped, the tests it finished) and its tests
line() {
  local n=$1 what=$2 log=$out/suite-$1.log
  local summary finished failed
  summary=$(grep -E "tests (successful|failed|skipped|aborted)" "$log" | tr -s ' []' ' ' | tr '\n' ' ')
  finished=$(grep -c -E ' :: (SUCCESSFUL|FAILED|ABORTED|SKIPPED)$' "$log")
  failed=$(grep -c -E ' :: FAILED$' "$log")
  echo "jvm $n exit $(cat "$status/$n"): ${summary:-no summary, stopped: $finished finished, $failed failed} | $what"
}

n=0
for group in "${long[@]}"; do
  n=$((n + 1))
  select=()
  for class in $group; do select+=(--select-class "$class"); done
  junit "$n" "${select[@]}" &
done
wait
middle=$(date +%s)
n=$((n + 1))
roots=()
for d in "$here"/lib/test-classes/*; do roots+=(--scan-class-path "$d"); done
exclude=$(printf '%s\n' "${long[@]}" | tr ' ' '\n' | sed 's/\./\\./g' | paste -sd '|')
junit "$n" "${roots[@]}" --include-tag gpu --exclude-classname "^($exclude)$"
end=$(date +%s)

rc=0
for i in $(seq 1 "$n"); do
  grep -A4 -E ' :: FAILED$' "$out/suite-$i.log" | head -60
  [[ $(cat "$status/$i") == 0 ]] || rc=1
done
for i in $(seq 1 $((n - 1))); do
  line "$i" "${long[$((i - 1))]}"
done
line "$n" "every other class tagged gpu"
echo "at once: $((middle - start)) s; the rest alone: $((end - middle)) s"
exit $rc
