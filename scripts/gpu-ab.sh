#!/usr/bin/env bash
# On the GPU host: the forward kernel alone per shape under each kernel name (core's test class
# dev.maxsim4j.internal.cuda.AbMain, names as in its ForcedKernels; "default" = the rules), one table of
# kernel ms per shape and name, also written to $OUT/ab/table.txt. JVM options: $BENCH_JVM (default an 8 GB
# pre-touched heap). AB_CLASSPATH_FIRST: a folder put before the staged jars, e.g. another build's
# dev/maxsim4j/cuda/*.fatbin to time against this one's in the same visit.
#   scripts/gpu-ab.sh default 2rp stream
# SHAPES="1,1000,128,1024,128 1,1000,1024,1024,128" limits the run to those shapes (default: the bench's 15).
set -uo pipefail
out=${OUT:-/tmp}/ab
mkdir -p "$out"
shapes=()
for s in ${SHAPES:-}; do shapes+=(--shape "$s"); done
# the core's test classes (AbMain, ForcedKernels, the test-only fatbins) on the staged runtime's class path
cp=${AB_CLASSPATH_FIRST:+$AB_CLASSPATH_FIRST:}$(ls .gpu-host/lib/*.jar .gpu-host/lib/deps/*.jar | grep -v junit-console | tr '\n' :).gpu-host/lib/test-classes/maxsim4j-core
# shellcheck disable=SC2086
.gpu-host/jre/bin/java --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector \
  ${BENCH_JVM:--Xms8g -Xmx8g -XX:+AlwaysPreTouch} -cp "$cp" dev.maxsim4j.internal.cuda.AbMain "${shapes[@]}" "$@" \
  2>&1 | tee "$out/table.txt"
