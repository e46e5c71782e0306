#!/usr/bin/env python3
"""PyTorch eager MaxSim baseline for the GPU benchmark table.

Times   torch.einsum('ild,jtd->ijlt', Q.float(), D.float()).amax(-1).sum(-1)
on the same shapes (Nq,Nd,Lq,Ld,d) and dtype as `./maxsim4j bench gpu`, with CUDA events: warm-up,
then the median of >= 50 iterations, documents rotated through enough copies that the working set exceeds
L2. Writes {"Nq,Nd,Lq,Ld,d": milliseconds or null (out of memory)} to the JSON file given.

--train: forward + backward of scores.sum() by autograd (inputs are leaf tensors that require grad), no
rotation (as `./maxsim4j bench gpu --train`), median of 30; and the op's peak memory:
torch.cuda.max_memory_allocated() during one step minus what was allocated before it (the inputs), gradients
included. Writes {"Nq,Nd,Lq,Ld,d": {"ms": ..., "mib": ...}} (null where it ran out of memory).

usage: torch_eager_baseline.py OUT.json [--train] [--dtype bf16|fp16|fp32] [SHAPE ...]
"""
import json
import sys

import torch

INFERENCE_SHAPES = ["1,1000,32,300,128", "1,1000,32,1024,128", "1,1000,128,1024,128", "1,1000,1024,1024,128",
                    "1,5000,32,300,128", "1,10000,32,300,128", "32,32,32,300,128", "128,128,32,300,128",
                    "1,1000,32,300,512", "1,500,32,300,1024", "1,1000,32,2048,48", "1,4000,32,2048,48",
                    "1,1000,32,300,64", "1,10000,32,300,64", "16,32,32,8192,128"]
ROTATION_BYTES = 180 << 20


def unit(shape, dtype, gen):
    x = torch.rand(shape, generator=gen, device="cuda") * 2 - 1
    return torch.nn.functional.normalize(x, dim=-1).to(dtype)


def eager(q, d):
    return torch.einsum("ild,jtd->ijlt", q.float(), d.float()).amax(-1).sum(-1)


def time_shape(shape, dtype):
    nq, nd, lq, ld, dim = (int(v) for v in shape.split(","))
    gen = torch.Generator(device="cuda").manual_seed(7)
    q = unit((nq, lq, dim), dtype, gen)
    corpus_bytes = nd * ld * dim * q.element_size()
    copies = max(1, min(8, -(-ROTATION_BYTES // corpus_bytes)))
    docs = [unit((nd, ld, dim), dtype, gen) for _ in range(copies)]
    for i in range(5):
        eager(q, docs[i % copies])
    torch.cuda.synchronize()
    times = []
    for i in range(60):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        eager(q, docs[i % copies])
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


TRAIN_SHAPES = ["128,128,32,300,128", "256,256,32,300,128", "128,128,32,1030,128", "16,32,32,8192,128",
                "64,32,128,2048,128", "128,32,128,2048,128", "256,32,128,2048,128", "64,32,128,4096,128",
                "128,32,128,4096,128", "256,32,128,4096,128", "64,32,128,8192,128", "128,32,128,8192,128",
                "256,32,128,8192,128", "128,128,48,300,128", "256,256,48,300,128", "512,512,48,300,128",
                "1024,1024,48,300,128"]


def train_shape(shape, dtype):
    nq, nd, lq, ld, dim = (int(v) for v in shape.split(","))
    gen = torch.Generator(device="cuda").manual_seed(7)
    q = unit((nq, lq, dim), dtype, gen).requires_grad_()
    d = unit((nd, ld, dim), dtype, gen).requires_grad_()

    def step():
        q.grad = None
        d.grad = None
        eager(q, d).sum().backward()

    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    step()
    torch.cuda.synchronize()
    mib = (torch.cuda.max_memory_allocated() - before) / 2**20
    for _ in range(3):
        step()
    times = []
    for _ in range(30):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return {"ms": times[len(times) // 2], "mib": mib}


def main(argv):
    out = argv[1]
    dtype = torch.bfloat16
    shapes = []
    train = False
    i = 2
    while i < len(argv):
        if argv[i] == "--train":
            train = True
            i += 1
        elif argv[i] == "--dtype":
            dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[argv[i + 1]]
            i += 2
        else:
            shapes.append(argv[i])
            i += 1
    results = {}
    for shape in shapes or (TRAIN_SHAPES if train else INFERENCE_SHAPES):
        try:
            results[shape] = train_shape(shape, dtype) if train else time_shape(shape, dtype)
        except torch.OutOfMemoryError:
            results[shape] = {"ms": None, "mib": None} if train else None
        torch.cuda.empty_cache()
        print(f"eager {shape}: {results[shape]}", flush=True)
    with open(out, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main(sys.argv)
