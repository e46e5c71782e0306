#!/usr/bin/env bash
# On the GPU host (cuobjdump exists only there): the SASS of one kernel family from the staged core jar (or,
# for the test-only families such as maxsim_forward_mma_ab, the staged core test classes), into $OUT/sass-FAMILY.txt, and a count of the instructions that say where a wgmma loop's time goes.
#   scripts/gpu-sass.sh maxsim_forward_wgmma_ws [FUNCTION]   e.g. maxsim_forward_wgmma_ws_k2_bf16
set -euo pipefail
family=$1 function=${2:-}
out=${OUT:-/tmp}
jar=$(ls .gpu-host/lib/maxsim4j-core-*.jar | head -1)
tests=.gpu-host/lib/test-classes/maxsim4j-core/dev/maxsim4j/cuda
if [[ -f $tests/$family.fatbin ]]; then
  cp "$tests/$family.fatbin" "$out/$family.fatbin"
else
  python3 - "$jar" "$family" "$out" <<'PY'
import sys, zipfile
jar, family, out = sys.argv[1:]
with zipfile.ZipFile(jar) as z:
    open(f"{out}/{family}.fatbin", "wb").write(z.read(f"dev/maxsim4j/cuda/{family}.fatbin"))
PY
fi
cuobjdump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
"$cuobjdump" -sass ${function:+-fun "$function"} "$out/$family.fatbin" > "$out/sass-$family.txt"
echo "== $family ${function:-(all functions)}: $(wc -l < "$out/sass-$family.txt") lines"
for op in HGMMA WARPGROUP.ARRIVE WARPGROUP.DEPBAR SYNCS BAR FMNMX SHFL UTMALDG; do
  printf '%-18s %6d\n' "$op" "$(grep -c "$op" "$out/sass-$family.txt" || true)"
done
