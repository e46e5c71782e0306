#!/usr/bin/env bash
# Stages the project for the GPU host (../shared/gpu-host/stage.sh), then drops what the GPU host does not
# need so the travelling tree stays under its 64 MiB limit: the JMH module, Lucene and its integration, and
# the real-text stack (all-MiniLM-L6-v2 alone is a 90 MB jar; ONNX Runtime, the DJL tokenizer, LangChain4j).
# A failing step says which one it was.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
step="start"
trap 'echo "gpu-stage: failed while $step (exit $?)" >&2' ERR

step="building and staging (../shared/gpu-host/stage.sh)"
# the GPU host needs neither javadoc nor sources jars
MAVEN_ARGS="${MAVEN_ARGS:-} -Dmaven.javadoc.skip=true -Dmaven.source.skip=true" bash "$root/../shared/gpu-host/stage.sh"

step="checking that the core jar carries the GPU kernels"
core=$(ls "$root"/.gpu-host/lib/maxsim4j-core-*.jar | head -1)
if ! unzip -l "$core" | grep -q 'dev/maxsim4j/cuda/.*\.fatbin'; then
  echo "gpu-stage: $core has no fatbins: the build ran without nvcc (see its output above)" >&2
  exit 1
fi

step="trimming .gpu-host"
cd "$root/.gpu-host"
rm -f lib/maxsim4j-benchmarks.jar lib/original-maxsim4j-benchmarks.jar lib/maxsim4j-bench-*.jar \
  lib/maxsim4j-lucene-*.jar lib/maxsim4j-langchain4j-*.jar \
  lib/deps/lucene-*.jar lib/deps/jmh-*.jar lib/deps/jopt-*.jar lib/deps/commons-math3-*.jar \
  lib/deps/langchain4j-*.jar lib/deps/onnxruntime-*.jar lib/deps/tokenizers-*.jar lib/deps/api-*.jar \
  lib/deps/jackson-*.jar lib/deps/gson-*.jar lib/deps/jna-*.jar lib/deps/commons-*.jar lib/deps/slf4j-*.jar \
  lib/deps/jspecify-*.jar lib/deps/error_prone_*.jar
# their tests need what was dropped; the CLI's text commands are not run there
rm -rf lib/test-classes/maxsim4j-bench lib/test-classes/maxsim4j-lucene lib/test-classes/maxsim4j-langchain4j \
  lib/test-classes/maxsim4j-cli/dev/maxsim4j/cli/Text*Test*.class
echo "trimmed: $(du -sm . | cut -f1) MiB in .gpu-host"
