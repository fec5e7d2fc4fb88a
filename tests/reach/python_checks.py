"""The checks tests/reach/python_venv.py runs with the venv's python, in a Debian root, on the
wheel installed there:

    python_checks.py basics DATA            import stoker, plan(), Loader.tokens, Loader.images
    python_checks.py sampler                stoker.DistributedSampler against torch's
    python_checks.py job IMAGES PORT RANK   one rank of a 2-rank gloo job (tcp://127.0.0.1:PORT)
    python_checks.py pil_kinds OUTDIR       writes image kinds with the root's PIL

Prints one line per check; a failed check raises (exit 1)."""
import json
import os
import sys


def ok(what):
    print(f"ok   {what}", flush=True)


def loaded():
    """The files mapped into this process."""
    return {line.split()[-1] for line in open("/proc/self/maps").read().splitlines()
            if "/" in line}


def image_items(root):
    """(path, label) in ImageFolder order: classes sorted by name, files by name within."""
    classes = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    return [(os.path.join(root, c, f), label) for label, c in enumerate(classes)
            for f in sorted(os.listdir(os.path.join(root, c)))
            if f.lower().endswith((".jpg", ".jpeg", ".png"))]


def as_numpy(a):
    return a.numpy() if hasattr(a, "numpy") else a  # a torch tensor, or already an array


def check_image_batches(loader, items, size):
    """Every batch: (B, 3, size, size) float32, each label its file's class; returns the
    indices seen."""
    seen = []
    for batch in loader:
        data, labels, indices = (as_numpy(a) for a in batch)
        assert data.shape == (len(indices), 3, size, size), data.shape
        assert str(data.dtype) == "float32", data.dtype
        for label, i in zip(labels.tolist(), indices.tolist()):
            assert label == items[i][1], (i, items[i], label)
        seen += indices.tolist()
    return seen


def basics(data):
    import stoker
    venv = sys.prefix
    assert stoker.__file__.startswith(venv), f"stoker came from {stoker.__file__}, not {venv}"
    assert "torch" not in sys.modules, "import stoker imported torch"
    ok(f"import stoker from the venv ({os.path.dirname(stoker.__file__)})")
    plan = stoker.plan()
    assert plan.workers >= 1, plan
    ok(f"stoker.plan(): {plan.workers} workers, profile {plan.profile}")
    # libstoker.so is loaded now, and nothing else that could bring a libstdc++ (numpy 2
    # links one: checked before the first batch imports it).
    paths = loaded()
    mine = [p for p in paths if os.path.basename(p).startswith("libstoker")]
    assert mine and all(p.startswith(venv) for p in mine), mine
    assert "numpy" not in sys.modules, "import stoker or plan() imported numpy"
    assert not [p for p in paths if "libstdc++" in p], "a libstdc++ is loaded with libstoker.so"
    ok("libstoker.so loaded from the venv, and no libstdc++ with it (static and hidden)")

    # Tokens: 40 windows of 8 + 1 (stride 8) from a raw uint16 file.
    import array
    path = "/tmp/tokens.bin"
    tokens = array.array("H", ((i * 7) % 65521 for i in range(40 * 8 + 1)))
    with open(path, "wb") as f:
        tokens.tofile(f)
    loader = stoker.Loader.tokens(path, seq_len=8, batch_size=4, seed=3, world_size=1, rank=0,
                                  as_numpy=True, return_indices=True)
    assert len(loader) == 10, len(loader)
    seen = []
    for batch, labels, indices in loader:
        assert batch.shape == (4, 9) and str(batch.dtype) == "int64", (batch.shape, batch.dtype)
        assert labels.tolist() == [0] * 4, labels
        for row, i in zip(batch.tolist(), indices.tolist()):
            assert row == tokens.tolist()[i * 8:(i + 1) * 8 + 1], (i, row)
        seen += indices.tolist()
    assert sorted(seen) == list(range(40)) and seen != sorted(seen), seen
    ok("Loader.tokens: 10 batches of (4, 9) int64 windows, each sample once, shuffled")

    # Images: the build's JPEGs and a PNG per class (python_venv.py), ImageFolder labels.
    root = os.path.join(data, "images")
    items = image_items(root)
    loader = stoker.Loader.images(root, batch_size=5, size=16, train=False, world_size=1,
                                  rank=0, as_numpy=True, return_indices=True)
    assert loader.dataset_size == len(items), (loader.dataset_size, len(items))
    seen = check_image_batches(loader, items, 16)
    assert sorted(seen) == list(range(len(items))), seen
    kinds = sorted({os.path.splitext(p)[1] for p, _ in items})
    ok(f"Loader.images: {len(items)} images ({', '.join(kinds)}) in "
       f"{len(set(l for _, l in items))} classes, (B, 3, 16, 16) float32, labels by class")

    # The wheel's libraries are the ones loaded for libstoker.so (their hashed names: the
    # interpreter's own zlib may be there beside them).
    paths = loaded()
    bundled = {os.path.basename(p).split("-")[0] for p in paths if "/stoker.libs/" in p}
    want = {"libhwloc", "libjpeg", "libpng16", "libwebp", "libzstd", "libz", "libudev"}
    assert bundled == want, f"loaded from stoker.libs/: {sorted(bundled)}, not {sorted(want)}"
    assert not [p for p in paths if "/libmpi" in p], "libmpi is loaded"
    ok(f"{', '.join(sorted(bundled))} loaded from stoker.libs/; no MPI")


def sampler():
    import torch.utils.data.distributed as tud
    import stoker
    for size, drop_last in ((50, False), (51, False), (51, True)):
        for rank in (0, 1):
            ours = stoker.DistributedSampler(range(size), 2, rank, shuffle=False,
                                             drop_last=drop_last)
            theirs = tud.DistributedSampler(range(size), 2, rank, shuffle=False,
                                            drop_last=drop_last)
            assert isinstance(ours, tud.DistributedSampler)
            assert list(ours) == list(theirs) and len(ours) == len(theirs), (size, rank)
    ok("shuffle=False: torch's order and lengths on 2 ranks (50, 51, drop_last)")
    orders = []
    for epoch in (0, 1):
        shards = []
        for rank in (0, 1):
            s = stoker.DistributedSampler(range(50), 2, rank, seed=5)
            s.set_epoch(epoch)
            shards.append(list(s))
        assert sorted(shards[0] + shards[1]) == list(range(50)), shards
        orders.append(shards[0])
    assert orders[0] != orders[1], "set_epoch did not change the order"
    ok("shuffle=True: 2 ranks cover the 50 samples once each epoch; epochs differ")


class CountingStore:
    """The group's store, counting the pieces of a shared listing this rank put or took
    (stoker/_listing_share.py: stoker/listing/N/piece/I)."""

    def __init__(self, store):
        self.store, self.puts, self.takes = store, 0, 0

    @staticmethod
    def piece(key):
        return key.startswith("stoker/listing/") and "/piece/" in key

    def set(self, key, value):
        self.puts += self.piece(key)
        return self.store.set(key, value)

    def get(self, key):
        self.takes += self.piece(key)
        return self.store.get(key)

    def __getattr__(self, name):
        return getattr(self.store, name)


def job(images, port, rank):
    import datetime
    import torch.distributed as dist
    import torch.utils.data.distributed as tud
    import stoker
    # Debian's torch has no libuv, which torch 2.4 and later ask the TCP store for by default
    # ("use_libuv was requested but PyTorch was build without libuv support"); 1.13 ignores it.
    os.environ["USE_LIBUV"] = "0"
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"  # the loopback only
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=2, timeout=datetime.timedelta(seconds=120))
    store = CountingStore(dist.distributed_c10d._get_default_store())
    dist.distributed_c10d._get_default_store = lambda: store
    items = image_items(images)
    loader = stoker.Loader.images(images, batch_size=4, size=16, seed=2, return_indices=True)
    assert (loader.rank, loader.world_size) == (rank, 2), (loader.rank, loader.world_size)
    assert loader.dataset_size == len(items), loader.dataset_size
    seen = check_image_batches(loader, items, 16)
    loader.close()
    shards = [None, None]
    dist.all_gather_object(shards, seen)
    everyone = sorted(shards[0] + shards[1])
    # drop_last=False pads the tail by wrapping (torch's rule): each sample at least once.
    assert set(everyone) == set(range(len(items))) and len(shards[0]) == len(shards[1]), shards
    ok(f"rank {rank}: Loader.images over gloo: {len(seen)} of {len(items)} samples, labels "
       "by class; the 2 ranks cover the dataset")
    # Rank 0 listed the folder and put it in the store; rank 1 took it from there.
    assert (store.puts > 0 and store.takes == 0) if rank == 0 else \
        (store.takes > 0 and store.puts == 0), (store.puts, store.takes)
    ok(f"rank {rank}: the folder's listing went through the group's store ({store.puts} "
       f"pieces put, {store.takes} taken)")
    sampler = stoker.DistributedSampler(range(30), seed=1)  # the group's world
    assert isinstance(sampler, tud.DistributedSampler)
    assert (sampler.num_replicas, sampler.rank) == (2, rank), (sampler.num_replicas, rank)
    mine = list(sampler)
    dist.all_gather_object(shards, mine)
    assert sorted(shards[0] + shards[1]) == list(range(30)), shards
    ok(f"rank {rank}: DistributedSampler takes the group's world; the ranks cover 30 once")
    dist.barrier()  # rank 0 holds the store: it leaves last
    print(json.dumps({"rank": rank, "samples": len(seen)}))


def pil_kinds(out):
    """JPEG and PNG kinds PIL writes (its encoder: the root's libjpeg, libpng, zlib)."""
    import numpy as np
    from PIL import Image
    os.makedirs(out, exist_ok=True)
    y, x = np.mgrid[0:45, 0:67]
    rgb = np.stack([x * 3, y * 5, (x + y) * 2], axis=-1).astype(np.uint8)
    image = Image.fromarray(rgb)
    image.save(f"{out}/q90_420.jpg", quality=90)
    image.save(f"{out}/q95_444.jpg", quality=95, subsampling=0)
    image.save(f"{out}/progressive.jpg", quality=85, progressive=True)
    image.convert("L").save(f"{out}/grey.jpg", quality=90)
    image.save(f"{out}/rgb.png")
    image.convert("RGBA").save(f"{out}/rgba.png")
    image.convert("P").save(f"{out}/palette.png")
    image.convert("L").save(f"{out}/grey.png")
    Image.fromarray((y * 1000 + x).astype(np.uint16)).save(f"{out}/grey16.png")
    ok(f"PIL wrote {len(os.listdir(out))} image kinds in {out}")


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "job":
        job(args[0], int(args[1]), int(args[2]))
    else:
        {"basics": basics, "sampler": sampler, "pil_kinds": pil_kinds}[mode](*args)
