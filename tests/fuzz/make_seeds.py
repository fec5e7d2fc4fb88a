#!/usr/bin/env python3
"""Writes the seed corpora under corpus/NAME/ (committed; run again to remake them):
small, valid inputs of every kind each target reads, from which libFuzzer mutates.
Uses PIL, tarfile, gzip and the zstd command (all Debian: python3-pil, zstd)."""
import gzip
import io
import os
import struct
import subprocess
import tarfile

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))


def put(target, name, data):
    folder = os.path.join(HERE, "corpus", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


FINDINGS = ("crash-", "leak-", "timeout-", "oom-", "slow-unit-")


def image(kind, mode, size=(6, 5), **save):
    out = io.BytesIO()
    colors = {"RGB": (40, 120, 200), "RGBA": (40, 120, 200, 90), "CMYK": (10, 20, 30, 40),
              "L": 120, "I;16": 1000, "P": 3}
    Image.new(mode, size, color=colors[mode]).save(out, kind, **save)
    return out.getvalue()


def images():
    return {
        "rgb.jpg": image("JPEG", "RGB", quality=50),
        "grey.jpg": image("JPEG", "L"),
        "progressive.jpg": image("JPEG", "RGB", progressive=True),
        "cmyk.jpg": image("JPEG", "CMYK"),
        "rgb.png": image("PNG", "RGB"),
        "rgba.png": image("PNG", "RGBA"),
        "palette.png": image("PNG", "P"),
        "grey16.png": image("PNG", "I;16"),
    }


def shard(fmt, long_names=False):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=fmt) as tar:
        pictures = images()
        for i, key in enumerate(["rgb.jpg", "rgb.png", "grey.jpg"]):
            stem = ("d" * 120 + "/" if long_names else "cls/") + "%06d" % i
            for suffix, data in ((key[key.index("."):], pictures[key]), (".cls", b"%d" % i)):
                info = tarfile.TarInfo(stem + suffix)
                info.size = len(data)
                if fmt == tarfile.PAX_FORMAT:
                    info.pax_headers = {"comment": "seed"}
                tar.addfile(info, io.BytesIO(data))
        meta = tarfile.TarInfo("cls/meta.json")
        meta.size = 2
        tar.addfile(meta, io.BytesIO(b"{}"))
    return out.getvalue()


def main():
    # Remake the seeds, but keep every finding's input (libFuzzer's artifact names): each
    # is a regression test that `ctest -L fuzz` replays.
    for root, _, files in os.walk(os.path.join(HERE, "corpus")):
        for name in files:
            if not name.startswith(FINDINGS):
                os.remove(os.path.join(root, name))
    for name, data in images().items():
        put("image", name, data)
    put("image", "rgb.webp", image("WEBP", "RGB", quality=50))
    put("image", "rgba-lossless.webp", image("WEBP", "RGBA", lossless=True))
    tars = {"ustar.tar": shard(tarfile.USTAR_FORMAT), "pax.tar": shard(tarfile.PAX_FORMAT),
            "gnu.tar": shard(tarfile.GNU_FORMAT), "gnu-long.tar": shard(tarfile.GNU_FORMAT, True),
            "pax-long.tar": shard(tarfile.PAX_FORMAT, True)}
    for name, data in tars.items():
        put("tar", name, data)
    put("shard_stream", "ustar.tar.gz", gzip.compress(tars["ustar.tar"], mtime=0))
    put("shard_stream", "pax.tar.gz", gzip.compress(tars["pax.tar"], mtime=0))
    for name in ("ustar.tar", "gnu-long.tar"):
        put("shard_stream", name + ".zst",
            subprocess.run(["zstd", "-q", "-c", "-3"], input=tars[name], check=True,
                           stdout=subprocess.PIPE).stdout)
    # token files: first byte = sequence length (mod 9), then the file
    tokens16 = struct.pack("<17H", *range(17))
    put("token_file", "u16.bin", bytes([4]) + tokens16)
    put("token_file", "u32.bin", bytes([3]) + struct.pack("<9I", *range(9)))
    header = "{'descr': '<u2', 'fortran_order': False, 'shape': (17,), }"
    header += " " * (64 - 10 - len(header) - 1) + "\n"
    put("token_file", "u16.npy", bytes([4]) + b"\x93NUMPY\x01\x00" +
        struct.pack("<H", len(header)) + header.encode() + tokens16)
    header = "{'descr': '<u4', 'fortran_order': False, 'shape': (9,), }"
    header += " " * (64 - 10 - len(header) - 1) + "\n"
    put("token_file", "u32.npy", bytes([2]) + b"\x93NUMPY\x01\x00" +
        struct.pack("<H", len(header)) + header.encode() + struct.pack("<9I", *range(9)))
    # record files: record size, labels length, labels, records
    put("record_file", "plain", bytes([4, 0]) + bytes(range(16)))
    put("record_file", "labels", bytes([4, 32]) + struct.pack("<4q", 0, 1, 2, 3) + bytes(range(16)))
    # text formats
    with open(os.path.join(SOURCE, "sbatch_templates/admin/stoker.conf")) as f:
        put("profiles", "admin.conf", f.read())
    put("profiles", "short.conf",
        'Defaults DefaultProfile=cv MaxPrefetch=32 AllowOverride=no\n'
        'Profile=cv Description="large images" WorkerFraction=0.8 Stream=yes\n')
    put("plugstack", "admin", "profiles=/etc/slurm/stoker.conf\nenable=opt-in\n")
    put("plugstack", "every", "default_profile=cv\nenable=always\ntopology_xml=/x.xml\n"
        "topology_cache=/run/stoker\nbatch_step=yes\n")
    put("plugstack", "flags", "stoker=on\nstoker-workers=6\nstoker-prefetch=auto\n"
        "stoker-bind=even\nstoker-mem-bind=strict\nstoker-pin-memory=yes\nstoker-profile=cv\n")
    put("env_plan", "full",
        "STOKER_PLAN_VERSION=1\nSTOKER_PROFILE=cv\nSTOKER_WORKERS=6\nSTOKER_PREFETCH=12\n"
        "STOKER_PREFETCH_MAX=48\nSTOKER_CPUS=8-15,136-143\nSTOKER_MAIN_CPUS=8,136\n"
        "STOKER_WORKER_CPUS=9-15,137-143\nSTOKER_NUMA=1,3\nSTOKER_GPU=0000:47:00.0\n"
        "STOKER_PIN_MEMORY=1\nSTOKER_STREAM=1\nSTOKER_SHUFFLE_BUFFER=512\n"
        "STOKER_MEM_BUDGET=34359738368\nSTOKER_BATCH_BYTES=134217728\nSTOKER_NICS=mlx5_1,eth0\n"
        "STOKER_BIND=even\nSTOKER_MEM_BIND=none\nSTOKER_LOCAL_RANK=2\nSTOKER_LOCAL_SIZE=4\n")
    put("env_plan", "small",
        "STOKER_PLAN_VERSION=1\nSTOKER_PROFILE=balanced\nSTOKER_WORKERS=1\nSTOKER_PREFETCH=2\n"
        "STOKER_PREFETCH_MAX=2\nSTOKER_CPUS=0\nSTOKER_MAIN_CPUS=0\nSTOKER_WORKER_CPUS=0\n"
        "STOKER_MEM_BUDGET=1048576\nSTOKER_BATCH_BYTES=1024\nSTOKER_LOCAL_RANK=0\n"
        "STOKER_LOCAL_SIZE=1\n")
    put("sampler_state", "plain",
        "stoker-sampler v1 seed=7 epoch=2 consumed=40 size=100 fingerprint=0x1f shuffle=1 "
        "block=0 group=0")
    put("sampler_state", "block",
        "stoker-sampler v1 seed=1 epoch=0 consumed=8 size=50 fingerprint=0x0 shuffle=0 "
        "block=10 group=2")
    put("sampler_state", "stream",
        "stoker-sampler v1 seed=3 epoch=1 consumed=12 size=64 fingerprint=0xabc shuffle=1 "
        "block=0 group=0 buffer=16 phases=2:4,4:1")
    topologies = os.path.join(SOURCE, "..", "shared", "topologies")
    for name in ("16em64t-4s2c2t-offlines.xml", "16amd64-8n2c-cpusets.xml",
                 "24em64t-2n6c2t-pci.xml", "power8gpudistances.xml"):
        with open(os.path.join(topologies, name), "rb") as f:
            put("hwloc_xml", name, f.read())


if __name__ == "__main__":
    main()
