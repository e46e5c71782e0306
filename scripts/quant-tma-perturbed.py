#!/usr/bin/env python3
"""Builds rule 20's kernel (forward/maxsim_quant_tma.cuh) with its producer and consumers put out of step on
purpose, to check that the slots' barriers, not timing, keep every score right (docs/design/kernel-selection.md,
rule 20). Each variant is a copy of the kernel sources with delays read from %globaltimer spliced in at one place;
its two modules (maxsim_forward_quant_tma, _wide) are compiled for sm_90a into OUT/VARIANT/dev/maxsim4j/cuda/ and
gzipped, ready to travel in .gpu-host. On the GPU host, gunzip them and put a variant's folder first on the class
path of the core's test main dev.maxsim4j.QuantTmaReplay, which counts the pairs it scores wrong:

  scripts/quant-tma-perturbed.py .gpu-host/var
  # there: for f in .gpu-host/var/*/dev/maxsim4j/cuda/*.gz; do gunzip -f $f; done
  #        .gpu-host/jre/bin/java --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector \\
  #          -cp .gpu-host/var/VARIANT:CORE_JAR:CORE_TEST_CLASSES dev.maxsim4j.QuantTmaReplay VARIANT 3
"""
import gzip
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CUDA = os.path.join(ROOT, 'maxsim4j-core', 'src', 'main', 'cuda')
HEADER = os.path.join('forward', 'maxsim_quant_tma.cuh')
MODULES = ['maxsim_forward_quant_tma', 'maxsim_forward_quant_tma_wide']

DELAY = r'''
__device__ __forceinline__ unsigned long long perturbNow() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void perturbDelay(unsigned ns) {
  const unsigned long long end = perturbNow() + ns;
  while (perturbNow() < end) {
  }
}
__device__ __forceinline__ unsigned perturbHash(unsigned a, unsigned b) {
  unsigned h = a * 2654435761u ^ (b + 0x9e3779b9u) * 40503u;
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  return h ^ (h >> 15);
}
'''

# The places, each a line of the kernel as it stands (the script stops if one is not found exactly once).
PRODUCER_START = '    long long pair = blockIdx.x;\n'
CONSUMER_FIRST_TAKE = '      tile = take(ds);\n'
SLOT_RELEASE = '        if (lastTile) mbarrierArrive(emptyBars + 8 * held);\n'
TILE_WRITE = '          if (lane == 0) {\n            tiles[slot]'
BULK_SCALES = '          const bool bulkScales = tokens % 4 == 0 && ((uintptr_t)scales & 15) == 0;\n'

VARIANTS = {
    # the consumers write the query's rows and wait for the first slot: the producer 20 us late
    'v1_producer_late': [(PRODUCER_START, '    perturbDelay(20000);\n' + PRODUCER_START)],
    # the ring full and the producer waiting on a slot before the consumers take the first
    'v2_consumer_late': [(CONSUMER_FIRST_TAKE, '      perturbDelay(20000);\n' + CONSUMER_FIRST_TAKE)],
    # each consumer 3 us slow after giving a slot back, while the producer refills it and its Tile
    'v3_consumer_slow_after_release': [(SLOT_RELEASE,
        '        if (lastTile) {\n          mbarrierArrive(emptyBars + 8 * held);\n          perturbDelay(3000);\n'
        '        }\n')],
    # the producer's lane 0 (Tile, expect_tx, copies) 3 us behind the other lanes' arrivals and scale copies
    'v4_lane0_late': [(TILE_WRITE, '          if (lane == 0) perturbDelay(3000);\n' + TILE_WRITE)],
    # every slot's scales copied by the producer's 32 lanes, as unaligned ones are, instead of a bulk copy: no delay,
    # another schedule, the one that exposed rule 20's first-pair defect (kernel-selection.md): none may be wrong
    'v6_scales_by_lanes': [(BULK_SCALES, '          const bool bulkScales = false;\n')],
    # all four places at once, each block and slot delayed by its own pseudo-random amount
    'v5_jitter': [
        (PRODUCER_START, '    perturbDelay(perturbHash(blockIdx.x, 1) % 12000);\n' + PRODUCER_START),
        (CONSUMER_FIRST_TAKE, '      perturbDelay(perturbHash(blockIdx.x, 2) % 12000);\n' + CONSUMER_FIRST_TAKE),
        (SLOT_RELEASE, '        if (lastTile) {\n          mbarrierArrive(emptyBars + 8 * held);\n'
                       '          if (threadIdx.x % 32 == 0) perturbDelay(perturbHash(blockIdx.x * 131 + threadIdx.x,'
                       ' tile.pair) % 2000);\n        }\n'),
        (TILE_WRITE, '          if (lane == 0) perturbDelay(perturbHash(blockIdx.x, current) % 2000);\n' + TILE_WRITE),
    ],
}


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: scripts/quant-tma-perturbed.py OUT_DIR')
    out = os.path.abspath(sys.argv[1])
    nvcc = shutil.which('nvcc') or '/usr/local/cuda/bin/nvcc'
    with open(os.path.join(CUDA, HEADER)) as f:
        original = f.read()
    for name, edits in {'v0_control': [], **VARIANTS}.items():
        text = original
        if edits:
            text = text.replace('namespace maxsim4j {\n', 'namespace maxsim4j {\n' + DELAY, 1)
        for place, replacement in edits:
            if text.count(place) != 1:
                sys.exit(f'{name}: the kernel no longer has exactly one {place.strip()!r}; update this script')
            text = text.replace(place, replacement)
        with tempfile.TemporaryDirectory() as work:
            src = os.path.join(work, 'cuda')
            shutil.copytree(CUDA, src)
            with open(os.path.join(src, HEADER), 'w') as f:
                f.write(text)
            target = os.path.join(out, name, 'dev', 'maxsim4j', 'cuda')
            os.makedirs(target, exist_ok=True)
            for module in MODULES:
                fatbin = os.path.join(work, module + '.fatbin')
                subprocess.run([nvcc, '-fatbin', '-O3', '-std=c++17', '-I', src, '-gencode',
                                'arch=compute_90a,code=sm_90a', '-o', fatbin,
                                os.path.join(src, 'forward', module + '.cu')], check=True)
                with open(fatbin, 'rb') as f, gzip.open(os.path.join(target, module + '.fatbin.gz'), 'wb') as g:
                    g.write(f.read())
        print(f'{name}: {target}')


if __name__ == '__main__':
    main()
