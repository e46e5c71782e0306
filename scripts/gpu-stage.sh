#!/usr/bin/env bash
# Stages the project for the GPU host (../shared/gpu-host/stage.sh), then drops what the GPU host does not
# need so the travelling tree stays under its 64 MiB limit: JMH and the bench's shaded jar, Lucene and its
# integration, the real-text stack (all-MiniLM-L6-v2 alone is a 90 MB jar; ONNX Runtime, the DJL
# tokenizer, LangChain4j), the Spark module (not built for the stage: Spark's own jars are over 100 MB) and the
# streaming kernel's A/B fatbin (the forced names stream_n1, stream_n2, stream_r6 need it: stage it by hand for
# that A/B). The thin bench jar stays: `.gpu-host/java.sh dev.maxsim4j.bench.Main gpu ...`
# runs the GPU benches there; `.gpu-host/parts.sh SECONDS "CLASSES" ...` runs the GPU suite in parts
# (scripts/gpu-test-parts.sh). A failing step says which one it was.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
step="start"
trap 'echo "gpu-stage: failed while $step (exit $?)" >&2' ERR

step="building and staging (../shared/gpu-host/stage.sh)"
# the GPU host needs neither javadoc nor sources jars
MAVEN_ARGS="${MAVEN_ARGS:-} -Dmaven.javadoc.skip=true -Dmaven.source.skip=true -pl !maxsim4j-spark" \
  bash "$root/../shared/gpu-host/stage.sh"

step="checking that the core and bench jars carry their GPU kernels"
core=$(ls "$root"/.gpu-host/lib/maxsim4j-core-*.jar | head -1)
# the listing is read whole first: grep -q stops at the first match, and under pipefail the listing's
# broken pipe would read as "no fatbins"
listing=$(unzip -l "$core")
if ! grep -q 'dev/maxsim4j/cuda/.*\.fatbin' <<< "$listing"; then
  echo "gpu-stage: $core has no fatbins: the build ran without nvcc (see its output above)" >&2
  exit 1
fi
bench=$(ls "$root"/.gpu-host/lib/maxsim4j-bench-*.jar | head -1)
listing=$(unzip -l "$bench")
if ! grep -q 'dev/maxsim4j/bench/gpu/maxsim_fill\.fatbin' <<< "$listing"; then
  echo "gpu-stage: $bench has no maxsim_fill.fatbin (gpu-scale's corpora): the build ran without nvcc" >&2
  exit 1
fi

step="trimming .gpu-host"
cd "$root/.gpu-host"
rm -f lib/maxsim4j-benchmarks.jar lib/original-maxsim4j-benchmarks.jar \
  lib/maxsim4j-lucene-*.jar lib/maxsim4j-langchain4j-*.jar \
  lib/deps/lucene-*.jar lib/deps/jmh-*.jar lib/deps/jopt-*.jar lib/deps/commons-math3-*.jar \
  lib/deps/langchain4j-*.jar lib/deps/onnxruntime-*.jar lib/deps/tokenizers-*.jar lib/deps/api-*.jar \
  lib/deps/jackson-*.jar lib/deps/gson-*.jar lib/deps/jna-*.jar lib/deps/commons-*.jar lib/deps/slf4j-*.jar \
  lib/deps/jspecify-*.jar lib/deps/error_prone_*.jar
# their tests need what was dropped; the CLI's text commands are not run there, and SealedInternalsTest reads
# the LangChain4j integration's jar
rm -f lib/maxsim4j-spark-*.jar lib/test-classes/maxsim4j-core/dev/maxsim4j/cuda/maxsim_forward_stream_ab.fatbin
rm -rf lib/test-classes/maxsim4j-spark lib/test-classes/maxsim4j-lucene lib/test-classes/maxsim4j-langchain4j \
  lib/test-classes/maxsim4j-cli/dev/maxsim4j/cli/Text*Test*.class \
  lib/test-classes/maxsim4j-cli/dev/maxsim4j/cli/SealedInternalsTest*.class

step="staging the suite-in-parts runner"
cp "$root/scripts/gpu-test-parts.sh" parts.sh

step="checking that the bench runs from the thin jar"
if ! ./java.sh dev.maxsim4j.bench.Main cpu --shape 1,8,4,8,16 --iterations 1 > /dev/null; then
  echo "gpu-stage: dev.maxsim4j.bench.Main does not start from .gpu-host/lib (a jar it needs was trimmed)" >&2
  exit 1
fi
echo "trimmed: $(du -sm . | cut -f1) MiB in .gpu-host"
