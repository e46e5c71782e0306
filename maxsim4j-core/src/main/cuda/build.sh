#!/usr/bin/env bash
# Compiles each kernel family (one .cu file) into its own fatbin resource of the jar:
#   build.sh OUT_DIR "GENCODE FLAGS" [SOURCE_DIR]
# SOURCE_DIR (default: this folder) holds the .cu files, directly or one folder down (this folder: one folder per
# job, common/ holding what several share); they #include files by their path from this folder (the test-only
# kernels in src/test/cuda build so, into the test classes). Fatbins are named by the .cu file alone, so two
# sources may not share a name.
# A fatbin is rebuilt only when its .cu, or a file it #includes, is newer. Fails, with the compiler's output, when a
# kernel does not compile. Default targets: SASS for sm_75/80/86/89/90a and PTX for compute_90, so newer
# GPUs JIT it (see the parent pom's maxsim4j.cuda.gencode property to narrow them for quick local builds).
#
# Fatbins are also kept in a cache keyed by the compiler, the targets and every input's contents
# (MAXSIM4J_CUDA_CACHE, default ~/.cache/maxsim4j/fatbin), so a fresh clone of a commit built before on this
# machine copies them instead of running nvcc for minutes. Without nvcc the build goes on without GPU kernels
# and says so: the jar then scores on the CPU only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1
gencode=$2
src=$(cd "${3:-$here}" && pwd)
nvcc=${NVCC:-}
if [[ -z $nvcc ]]; then
  if command -v nvcc >/dev/null; then nvcc=$(command -v nvcc); else nvcc=/usr/local/cuda/bin/nvcc; fi
fi
if [[ ! -x $nvcc && ${MAXSIM4J_CUDA_REQUIRED:-false} == true ]]; then
  echo "maxsim4j: nvcc not found (PATH, /usr/local/cuda/bin, NVCC) and this build requires the GPU kernels" \
       "(-Prelease or -Dmaxsim4j.cuda.required=true): install the CUDA toolkit" >&2
  exit 1
fi
if [[ ! -x $nvcc ]]; then
  echo "maxsim4j: nvcc not found (PATH, /usr/local/cuda/bin, NVCC): building without GPU kernels, the jar" \
       "scores on the CPU only (install the CUDA toolkit for the GPU backend; -Dmaxsim4j.cuda.skip=true skips this step)" >&2
  # fatbins of an earlier build may not match the sources any more: a jar without kernels is the honest one
  rm -f "$out"/*.fatbin "$out/.gencode"
  exit 0
fi
cache=${MAXSIM4J_CUDA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/maxsim4j/fatbin}
# the cache key covers the compiler, this script (its nvcc flags) and, per kernel, the targets and sources
compiler=$("$nvcc" --version | tail -n 2; sha256sum "$here/build.sh" | cut -c1-64)
mkdir -p "$out"
# a change of targets invalidates every fatbin
if [[ ! -f $out/.gencode ]] || [[ $(cat "$out/.gencode") != "$gencode" ]]; then
  rm -f "$out"/*.fatbin
  printf '%s' "$gencode" > "$out/.gencode"
fi
# a kernel source and every file it #includes from the source folder or this one, recursively
inputs_of() {
  local file=$1 inc
  echo "$file"
  for inc in $(sed -n 's/^#include "\(.*\)"/\1/p' "$file"); do
    if [[ -f $src/$inc ]]; then inputs_of "$src/$inc"; elif [[ -f $here/$inc ]]; then inputs_of "$here/$inc"; fi
  done
}
mapfile -t sources < <(find "$src" -maxdepth 2 -name '*.cu' | sort)
declare -A source_of=()
for cu in "${sources[@]}"; do
  name=$(basename "$cu" .cu)
  if [[ -n ${source_of[$name]:-} ]]; then
    echo "nvcc: $cu and ${source_of[$name]} would both become $name.fatbin; rename one" >&2
    exit 1
  fi
  source_of[$name]=$cu
done
# a fatbin whose kernel source is gone (deleted or renamed) would still be packaged from a kept build folder
for fatbin in "$out"/*.fatbin; do
  [[ -e $fatbin ]] || continue
  name=$(basename "$fatbin" .fatbin)
  if [[ -z ${source_of[$name]:-} ]]; then
    echo "nvcc: removing $name.fatbin ($name.cu is gone)"
    rm -f "$fatbin"
  fi
done
for cu in "${sources[@]}"; do
  name=$(basename "$cu" .cu)
  fatbin=$out/$name.fatbin
  stale=0
  [[ -f $fatbin ]] || stale=1
  while IFS= read -r input; do
    [[ $input -nt $fatbin ]] && stale=1  # full-resolution modification times
  done < <(inputs_of "$cu")
  (( stale )) || continue
  key=$( { printf '%s\n%s\n' "$compiler" "$gencode"; while IFS= read -r input; do
           name_in=${input#"$here"/}; printf '%s\n' "${name_in#"$src"/}"; cat "$input"; done < <(inputs_of "$cu"); } | sha256sum | cut -c1-32)
  cached=$cache/$name-$key.fatbin
  if [[ -f $cached ]]; then
    echo "nvcc: $name.fatbin from the cache ($cached)"
    cp "$cached" "$fatbin"
    continue
  fi
  echo "nvcc: $name.cu -> $name.fatbin"
  # shellcheck disable=SC2086
  "$nvcc" -fatbin -O3 -std=c++17 -t 0 -I "$here" $gencode -o "$fatbin" "$cu"
  # a failed copy only costs the next clean build a compile
  if mkdir -p "$cache" 2>/dev/null && cp "$fatbin" "$cached.tmp.$$" 2>/dev/null; then
    mv -f "$cached.tmp.$$" "$cached"
  fi
done
