#!/usr/bin/env bash
# Stages the project for the GPU host (../shared/gpu-host/stage.sh), drops what the GPU host does not need (JMH and
# the bench's shaded jar; the real-text stack: all-MiniLM-L6-v2 alone is a 90 MB jar, ONNX Runtime, the DJL
# tokenizer, LangChain4j; the Spark module, not built for the stage: Spark's own jars are over 100 MB) and packs
# .gpu-host into .gpu-pack/gpu-host.tar.gz: the runtime compresses to about half, so the core, the bench, the CLI and
# Lucene with their test classes, A/B fatbins included, travel within the GPU host's 64 MiB. There: carry
# ".gpu-pack" and begin the command with `rm -rf .gpu-host && tar xzf .gpu-pack/gpu-host.tar.gz` (a warm host keeps
# an earlier call's .gpu-host, whose stale jars the class path would take too); then
# `.gpu-host/suite.sh` runs the GPU tests within one call (scripts/gpu-suite.sh), `.gpu-host/parts.sh SECONDS
# "CLASSES" ...` chosen classes (scripts/gpu-test-parts.sh) and `.gpu-host/java.sh dev.maxsim4j.bench.Main gpu ...`
# the GPU benches.
# A failing step says which one it was.
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
rm -f lib/maxsim4j-benchmarks.jar lib/original-maxsim4j-benchmarks.jar lib/maxsim4j-langchain4j-*.jar \
  lib/deps/jmh-*.jar lib/deps/jopt-*.jar lib/deps/commons-math3-*.jar \
  lib/deps/langchain4j-*.jar lib/deps/onnxruntime-*.jar lib/deps/tokenizers-*.jar lib/deps/api-*.jar \
  lib/deps/jackson-*.jar lib/deps/gson-*.jar lib/deps/jna-*.jar lib/deps/commons-*.jar lib/deps/slf4j-*.jar \
  lib/deps/jspecify-*.jar lib/deps/error_prone_*.jar
# their tests need what was dropped; the CLI's text commands are not run there, and SealedInternalsTest reads
# the LangChain4j integration's jar
rm -f lib/maxsim4j-spark-*.jar
rm -rf lib/test-classes/maxsim4j-spark lib/test-classes/maxsim4j-langchain4j \
  lib/test-classes/maxsim4j-cli/dev/maxsim4j/cli/Text*Test*.class \
  lib/test-classes/maxsim4j-cli/dev/maxsim4j/cli/SealedInternalsTest*.class

step="staging the suite runners"
cp "$root/scripts/gpu-test-parts.sh" parts.sh
cp "$root/scripts/gpu-suite.sh" suite.sh

step="checking that the bench runs from the thin jar"
if ! ./java.sh dev.maxsim4j.bench.Main cpu --shape 1,8,4,8,16 --iterations 1 > /dev/null; then
  echo "gpu-stage: dev.maxsim4j.bench.Main does not start from .gpu-host/lib (a jar it needs was trimmed)" >&2
  exit 1
fi

step="packing .gpu-host into .gpu-pack/gpu-host.tar.gz"
cd "$root"
exclude=$(git rev-parse --git-path info/exclude)
grep -qxF '/.gpu-pack/' "$exclude" 2>/dev/null || echo '/.gpu-pack/' >> "$exclude"
mkdir -p .gpu-pack
tar czf .gpu-pack/gpu-host.tar.gz.part .gpu-host
mv .gpu-pack/gpu-host.tar.gz.part .gpu-pack/gpu-host.tar.gz
# what travels besides: tracked files (a deleted one, which stat cannot find, counts nothing) and untracked ones git
# does not ignore
tree=$( { git ls-files -z --cached --others --exclude-standard --deduplicate \
  | xargs -0 -r stat -c %s -- 2>/dev/null || true; } | awk '{s += $1} END {print s + 0}')
pack=$(du -sb .gpu-pack | cut -f1)
echo "staged: $(du -sm .gpu-host | cut -f1) MiB in .gpu-host, .gpu-pack $((pack >> 20)) MiB; with the tree" \
  "$(((pack + tree) >> 20)) MiB of the GPU host's 64: carry \".gpu-pack\" and begin with" \
  "rm -rf .gpu-host && tar xzf .gpu-pack/gpu-host.tar.gz"
if (( pack + tree >= 64 << 20 )); then
  echo "gpu-stage: .gpu-pack and the tree are over the GPU host's 64 MiB" >&2
  exit 1
fi
