"""The corpora behind docs/cli-at-scale.md's table and results/cli-mapped-vs-heap-*.txt, deterministic.

python3 cli_scale_corpora.py OUT   writes into OUT: shards/shard-00..09.safetensors and all.safetensors (int8,
40,000 documents x 100 tokens x 384 with per-token scales, packed with offsets), q.npy (8 x 32 x 384 float32),
f32.safetensors, bf16.safetensors and f16.safetensors (20,000 x 100 x 128), q128.npy (8 x 32 x 128). The fp8 and
1-bit files are f32's through `maxsim4j quantize --in OUT/f32.safetensors --to fp8|binary --out OUT/F.safetensors`.
"""
import json
import os
import struct
import sys

import numpy as np


def write(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, array, dtype in tensors:
        data = array.tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in blobs:
            f.write(data)


def int8_corpus(out):
    rng = np.random.default_rng(7)
    d, docs, per = 384, 4000, 100
    os.makedirs(os.path.join(out, "shards"), exist_ok=True)
    embeddings, scales = [], []
    for s in range(10):
        emb = rng.integers(-127, 128, size=(docs * per, d), dtype=np.int8)
        sc = (rng.random(docs * per, dtype=np.float32) * 0.01 + 0.001).astype(np.float32)
        offsets = np.arange(0, docs * per + 1, per, dtype=np.int64)
        write(os.path.join(out, "shards", f"shard-{s:02d}.safetensors"),
              [("offsets", offsets, "I64"), ("embeddings", emb, "I8"), ("scales", sc, "F32")])
        embeddings.append(emb)
        scales.append(sc)
    emb = np.concatenate(embeddings)
    offsets = np.arange(0, emb.shape[0] + 1, per, dtype=np.int64)
    write(os.path.join(out, "all.safetensors"),
          [("offsets", offsets, "I64"), ("embeddings", emb, "I8"), ("scales", np.concatenate(scales), "F32")])
    np.save(os.path.join(out, "q.npy"), rng.standard_normal((8, 32, d), dtype=np.float32))


def float_corpora(out):
    rng = np.random.default_rng(9)
    d, docs, per = 128, 20000, 100
    emb = rng.standard_normal((docs * per, d), dtype=np.float32)
    offsets = np.arange(0, docs * per + 1, per, dtype=np.int64)
    write(os.path.join(out, "f32.safetensors"), [("offsets", offsets, "I64"), ("embeddings", emb, "F32")])
    bf16 = (emb.view(np.uint32) >> 16).astype(np.uint16)  # truncated to bfloat16
    write(os.path.join(out, "bf16.safetensors"), [("offsets", offsets, "I64"), ("embeddings", bf16, "BF16")])
    write(os.path.join(out, "f16.safetensors"), [("offsets", offsets, "I64"), ("embeddings", emb.astype(np.float16),
                                                                               "F16")])
    np.save(os.path.join(out, "q128.npy"), rng.standard_normal((8, 32, d), dtype=np.float32))


if __name__ == "__main__":
    target = sys.argv[1]
    os.makedirs(target, exist_ok=True)
    int8_corpus(target)
    float_corpora(target)
