#!/usr/bin/env bash
# On the GPU host: Nsight Compute on one launch of a forward kernel timed by the A/B runner (AbMain, see
# scripts/gpu-ab.sh), by the rules or under a kernel name of the core's test class ForcedKernels.
#   scripts/gpu-ncu.sh NAME KERNEL_REGEX SHAPE [KERNELS]   e.g. stream-10k maxsim_forward_stream 1,10000,32,300,128
# AB_ARGS passes more of AbMain's options (AB_ARGS="--dtype binary"); NCU_ARGS more of ncu's sections.
# Writes $OUT/ncu-NAME.txt; prints the lines that say where the time goes.
set -uo pipefail
name=$1 kernel=$2 shape=$3 kernels=${4:-default}
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
cp=$(ls .gpu-host/lib/*.jar .gpu-host/lib/deps/*.jar | grep -v junit-console | tr '\n' :).gpu-host/lib/test-classes/maxsim4j-core
"$ncu" --clock-control none -k "regex:$kernel" --launch-skip 30 --launch-count 1 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy \
  --section LaunchStats --section ComputeWorkloadAnalysis --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" ${NCU_ARGS:-} .gpu-host/jre/bin/java --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector -cp "$cp" dev.maxsim4j.internal.cuda.AbMain ${AB_ARGS:-} --shape "$shape" "$kernels" \
  > "${OUT:-/tmp}/ncu-$name.txt" 2>&1
echo "== $name ($kernel, $shape)"
grep -E "^  [a-z_]+.*\(|Duration|DRAM Throughput|Memory Throughput|L2 Hit Rate|L1/TEX Hit|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Mem Busy|Max Bandwidth|Grid Size|SM Busy|Issue Slots Busy|Executed Ipc A" \
  "${OUT:-/tmp}/ncu-$name.txt" | head -24
# the three largest stall reasons (warps stalled per issued instruction)
grep -E "smsp__average_warps_issue_stalled_.*ratio" "${OUT:-/tmp}/ncu-$name.txt" | sort -k3 -g -r | head -4
