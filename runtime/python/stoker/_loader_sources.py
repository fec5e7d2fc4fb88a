"""Loader.images, Loader.tokens and Loader.records: the three sources a stoker.Loader
reads. Their arguments go to the C++ side as given (runtime/python/src/loader_sources.cpp),
which checks each one and names it in its TypeError or ValueError."""

__all__ = ["LoaderSources"]


class LoaderSources:
    """The constructors of stoker.Loader, one per source (a base of Loader)."""

    @classmethod
    def images(cls, root=None, *, shards=None, stream=None, labels=True, batch_size=64, size=224,
               train=True, dtype="float32", layout="CHW", resize_shorter=256, scale=(0.08, 1.0),
               ratio=(3 / 4, 4 / 3), flip_p=0.5, mean=(0.485, 0.456, 0.406),
               std=(0.229, 0.224, 0.225), antialias=True, dct_scaling=True,
               auto_augment_policy=None, ra_magnitude=9, random_erase_prob=0.0,
               interpolation="bilinear", mixup_alpha=0.0, cutmix_alpha=0.0, num_classes=None,
               **options):
        """An image folder (root/<class>/<image>.jpg, classes sorted by name as torchvision's
        ImageFolder), or WebDataset-style tar `shards` (a path or a list of .tar, .tar.gz,
        .tar.zst files or folders of them; <key>.jpg|png + <key>.cls|cls2|txt members),
        through RandomResizedCrop + flip + Normalize (train=True) or
        Resize(resize_shorter) + CenterCrop(size) + Normalize (train=False).
        Images are files named .jpg, .jpeg or .png (any case); their first bytes choose the
        decoder, and every JPEG and PNG kind gives PIL's Image.open(f).convert('RGB') pixels
        (grey, CMYK, YCCK, 16-bit, palette, alpha dropped).
        stream: read the shards as streams (whole shards, 4 MiB reads, a shuffle buffer);
        None: when the plan's profile says Stream=yes, or a shard is compressed.
        labels=False reads shards without label members (every label -1); with labels=True a
        sample without one, or with one outside 0..2^31-1, is a stoker.Error.
        dtype float32/float16 (normalized) or uint8 (0..255, not normalized); layout CHW/HWC.
        interpolation ("bilinear", "bicubic", "nearest") is the reference preset's
        --interpolation: PIL's filter for the resize of both passes (bilinear and bicubic
        antialiased when downscaling, bicubic clamped to 0..255; nearest PIL's pixels) and the
        one the augmentation's geometric operations sample with. dct_scaling lets the
        JPEG decoder shrink by 2, 4 or 8 first when the crop is that much larger than `size`
        (faster; pixels then differ slightly from a full decode + resize).
        auto_augment_policy ("ta_wide", "ra", "imagenet", "cifar10", "svhn", "augmix"; None:
        none; augmix refuses interpolation="bicubic", as torchvision's AugMix does) and
        random_erase_prob are the reference preset's --auto-augment (after the flip, sampling
        with `interpolation`; ra_magnitude is its --ra-magnitude) and --random-erase (after Normalize),
        in training, each sample's draws a function of its key (a resumed epoch repeats them).
        mixup_alpha and cutmix_alpha (0: off) are the reference script's --mixup-alpha and
        --cutmix-alpha: each batch, once its samples are written, is mixed with itself rolled
        by one (MixUp, or CutMix's box; one of the two per batch when both are set), lambda
        ~ Beta(alpha, alpha) from the batch's own key; the labels are then float32 one-hot
        rows of num_classes (None: the image folder's class count; tar shards must give it).
        """
        source = {"root": root, "shards": shards, "stream": stream, "labels": labels,
                  "train": train, "size": size, "resize_shorter": resize_shorter,
                  "scale": scale, "ratio": ratio, "flip_p": flip_p, "mean": mean, "std": std,
                  "dtype": dtype, "layout": layout, "antialias": antialias,
                  "dct_scaling": dct_scaling, "auto_augment_policy": auto_augment_policy,
                  "ra_magnitude": ra_magnitude, "random_erase_prob": random_erase_prob,
                  "interpolation": interpolation, "mixup_alpha": mixup_alpha,
                  "cutmix_alpha": cutmix_alpha, "num_classes": num_classes}
        return cls("images", source, batch_size=batch_size, **options)

    @classmethod
    def tokens(cls, path, *, seq_len=2048, batch_size=16, dtype=None, widen=True, **options):
        """Token files: flat uint16/uint32 token ids, or one-dimensional .npy arrays. `path`
        is a file, a folder (its files in name order: one set) or a list of them. Sample i
        is a window of seq_len + 1 tokens (stride seq_len; inputs = w[:-1], targets =
        w[1:]); windows never straddle two files. dtype: None takes the .npy headers'
        (uint16 for raw files); every file of a set must hold the same type. widen=True
        (default) yields int64 windows, the dtype embeddings take; widen=False yields the
        raw tokens (only with as_numpy=True: PyTorch has no uint16/uint32 tensors)."""
        source = {"path": path, "seq_len": seq_len, "dtype": dtype, "widen": widen}
        return cls("tokens", source, batch_size=batch_size, **options)

    @classmethod
    def records(cls, path, *, record_bytes, batch_size, dtype="uint8", shape=None,
                labels_path=None, **options):
        """A file of fixed-size binary records; `shape`/`dtype` say how to view one (default
        (record_bytes,) uint8); labels from an optional file of int64 (numpy .tofile)."""
        source = {"path": path, "record_bytes": record_bytes, "labels_path": labels_path,
                  "dtype": dtype, "shape": shape}
        return cls("records", source, batch_size=batch_size, **options)
