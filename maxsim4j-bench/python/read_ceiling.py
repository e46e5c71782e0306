"""How fast the GPU reads memory it does not write: the ceiling of a bandwidth-bound MaxSim kernel, which
reads its documents and writes a few scores. The floor in docs/benchmarks.md divides by a device copy's
rate (4.3 TB/s, reads + writes); a read-only kernel may go faster than that. Times torch's own reductions
(sum and amax of a bf16 tensor in fp32) and a device copy with CUDA events, each over 4 buffers in turn
so nothing stays in L2; prints TB/s of bytes read (the copy: read + written).

    python3 read_ceiling.py [MiB per buffer, default 768]
"""
import statistics
import sys

import torch


def median_ms(fn, buffers, iterations=60, warmup=10):
    for i in range(warmup):
        fn(buffers[i % len(buffers)])
    times = []
    for i in range(iterations):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(buffers[i % len(buffers)])
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 768
    n = mib * 2**20 // 2  # bf16 elements
    buffers = [torch.randn(n, device="cuda", dtype=torch.bfloat16) for _ in range(4)]
    out = torch.empty(n, device="cuda", dtype=torch.bfloat16)
    read_bytes = n * 2
    print(f"{torch.cuda.get_device_name()}, {mib} MiB per buffer, 4 buffers")
    for name, fn, bytes_moved in [
        ("sum (fp32 accumulation)", lambda x: x.sum(dtype=torch.float32), read_bytes),
        ("amax", lambda x: x.amax(), read_bytes),
        ("view as int64, amax", lambda x: x.view(torch.int64).amax(), read_bytes),
        ("copy (read + write)", lambda x: out.copy_(x), 2 * read_bytes),
    ]:
        ms = median_ms(fn, buffers)
        print(f"{name:28s} {ms:8.4f} ms  {bytes_moved / ms / 1e9:6.2f} TB/s")


if __name__ == "__main__":
    main()
