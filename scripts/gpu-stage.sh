#!/usr/bin/env bash
# Stages the project for the GPU host (../shared/gpu-host/stage.sh), then drops what the GPU host does not
# need (the JMH module, Lucene, JMH) so the travelling tree stays under its 64 MiB limit.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
bash "$root/../shared/gpu-host/stage.sh"
cd "$root/.gpu-host"
rm -f lib/maxsim4j-benchmarks.jar lib/original-maxsim4j-benchmarks.jar lib/maxsim4j-bench-*.jar \
  lib/deps/lucene-*.jar lib/deps/jmh-*.jar lib/deps/jopt-*.jar lib/deps/commons-math3-*.jar
rm -rf lib/test-classes/maxsim4j-bench
echo "trimmed: $(du -sm . | cut -f1) MiB in .gpu-host"
