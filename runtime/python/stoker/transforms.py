"""stoker's image augmentations one at a time, as torchvision runs them.

    from stoker.transforms import apply_op
    out = apply_op(image, "Rotate", 30.0, interpolation="bilinear")
    space = augmentation_space("ta_wide")      # {op: (magnitudes, signed)}
    steps = sub_policies("imagenet")           # AutoAugment's ((op, p, bin), (op, p, bin))

`apply_op` is torchvision.transforms.autoaugment._apply_op for an RGB image held as a uint8
numpy array of shape (height, width, 3): the same operation names and magnitudes, and the
bytes torchvision gives on the PIL image of the same pixels (the operations are C++, the
library's). augmentation_space and sub_policies are the tables stoker's policies draw from,
as torchvision's _augmentation_space and AutoAugment's policies hold them. Importing this
module imports no numpy.
"""
import math
import numbers

from . import _stoker
from ._arguments import check_int, choice, number, shown

__all__ = ["apply_op", "augmix", "augmentation_space", "sub_policies", "mix_draw", "OP_NAMES",
           "INTERPOLATIONS", "POLICIES"]

_tables = _stoker.augment_tables()
# torchvision's operation names, and the two flips (HorizontalFlip, VerticalFlip).
OP_NAMES = tuple(_tables["ops"])
INTERPOLATIONS = tuple(_tables["interpolations"])  # InterpolationMode's values
# The reference scripts' --auto-augment names: TrivialAugmentWide, RandAugment, AutoAugment's
# ImageNet, CIFAR-10 and SVHN policies, AugMix.
POLICIES = tuple(_tables["policies"])


def _number(value):
    """A real number, numpy's included; not a bool (Rotate by True is a mistake)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _fill(fill):
    """torchvision's fill for an RGB image: None (0), a number or 3 numbers, each int()'d as
    torchvision does for a PIL image."""
    if fill is None:
        return [0, 0, 0]
    values = [fill] * 3 if _number(fill) else fill
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or len(values) != 3 \
            or not all(_number(v) for v in values):
        raise TypeError(f"fill must be None, a number or 3 numbers, got {shown(fill)}")
    if not all(math.isfinite(v) and 0 <= int(v) <= 255 for v in values):
        raise ValueError(f"fill={fill!r}: each value must be 0..255")
    return [int(v) for v in values]


def apply_op(image, op_name, magnitude, interpolation="nearest", fill=None):
    """`op_name` with `magnitude` on `image` (a uint8 numpy array, height x width x 3, RGB),
    as torchvision's _apply_op(img, op_name, magnitude, interpolation, fill) on the PIL
    image of those pixels; returns a new array of the same shape. op_name is one of
    OP_NAMES; interpolation one of INTERPOLATIONS (or a torchvision InterpolationMode), for
    the geometric operations; fill the colour they leave where no pixel lands (None:
    black)."""
    _check_image(image)
    choice("op_name", op_name, OP_NAMES)
    if not _number(magnitude):
        raise TypeError(f"magnitude must be a number, got {shown(magnitude)}")
    if not math.isfinite(magnitude):
        raise ValueError(f"magnitude={magnitude!r}: must be finite")
    if op_name == "Posterize" and not 0 <= int(magnitude) <= 8:
        raise ValueError(f"magnitude={magnitude!r}: Posterize keeps int(magnitude) bits, 0..8")
    height, width = image.shape[:2]
    pixels = _stoker.apply_op(_bytes(image), height, width, op_name, float(magnitude),
                              _mode(interpolation), _fill(fill))
    return _array(pixels, height, width)


def augmix(image, key, *, seed=0, epoch=0, interpolation="bilinear"):
    """What Loader.images(auto_augment_policy="augmix", interpolation=...) does to the
    resized crop of the sample `key` in `epoch` of a loader of `seed`: torchvision's
    AugMix(severity=3, mixture_width=3, chain_depth=-1, alpha=1.0, all_ops=True) on `image`
    (a uint8 numpy array, height x width x 3, RGB), with stoker's draw. Returns (the mixed
    array, the draw: {"m": Beta(1, 1)'s pair, "weights": the chains' Dirichlet weights,
    "chains": per chain its operations, each {"op", "op_index", "bin", "negate",
    "magnitude"}}). interpolation bilinear or nearest (bicubic: stoker.Error, as
    torchvision's AugMix refuses it for the tensors it works on)."""
    _check_image(image)
    height, width = image.shape[:2]
    sample = {"key": check_int("key", key, 0, 2**64 - 1),
              "seed": check_int("seed", seed, 0, 2**64 - 1),
              "epoch": check_int("epoch", epoch, 0, 2**64 - 1)}
    draw, pixels = _stoker.augmix(_bytes(image), height, width, _mode(interpolation), sample)
    return _array(pixels, height, width), draw


def _check_image(image):
    """TypeError or ValueError unless `image` is a uint8 numpy array, height x width x 3."""
    import numpy

    if not isinstance(image, numpy.ndarray):
        raise TypeError(f"image must be a numpy array (height, width, 3) of uint8, got "
                        f"{type(image).__name__}")
    if image.dtype != numpy.uint8:
        raise TypeError(f"image must be of dtype uint8 (RGB bytes), got {image.dtype}")
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"image must be of shape (height, width, 3), got {image.shape}")


def _mode(interpolation):
    """An interpolation's name, checked: one of INTERPOLATIONS or an InterpolationMode."""
    mode = getattr(interpolation, "value", interpolation)  # InterpolationMode's value: its name
    choice("interpolation", mode, INTERPOLATIONS)
    return mode


def _bytes(image):
    import numpy

    return numpy.ascontiguousarray(image).tobytes()


def _array(pixels, height, width):
    import numpy

    return numpy.frombuffer(bytearray(pixels), dtype=numpy.uint8).reshape(height, width, 3)


def _policy(policy, num_bins=None, image_size=(224, 224)):
    choice("policy", policy, POLICIES)
    if num_bins is not None:
        check_int("num_bins", num_bins, 2, 4096)
    if isinstance(image_size, (str, bytes)) or not hasattr(image_size, "__len__") \
            or len(image_size) != 2:
        raise TypeError(f"image_size must be (height, width), got {shown(image_size)}")
    height, width = (check_int("image_size", v, 1, 1 << 30) for v in image_size)
    return _stoker.augment_policy(policy, num_bins, height, width)


def augmentation_space(policy, num_bins=None, image_size=(224, 224)):
    """The operations `policy` draws from, as torchvision's _augmentation_space(num_bins,
    image_size) of its class: {op_name: (magnitudes, signed)} in torchvision's order, the
    magnitudes a tuple of floats (torch.linspace's float32 values; empty for the operations
    that take none) and signed when the magnitude is negated half the time. num_bins: the
    policy's (31 for "ta_wide" and "ra", 10 for AutoAugment's and "augmix") when None;
    image_size (height, width) sets the translations of all but "ta_wide"."""
    space = _policy(policy, num_bins, image_size)["space"]
    return {op: (tuple(magnitudes), signed) for op, magnitudes, signed in space}


def sub_policies(policy):
    """AutoAugment's sub-policies for "imagenet", "cifar10" or "svhn", as torchvision lists
    them: [((op_name, probability, magnitude bin or None), (...)), ...]; [] for "ta_wide",
    "ra" and "augmix"."""
    return [tuple(tuple(step) for step in sub) for sub in _policy(policy)["sub_policies"]]


def mix_draw(key, *, mixup_alpha=0.0, cutmix_alpha=0.0, size=224, seed=0, epoch=0):
    """What Loader.images(mixup_alpha=..., cutmix_alpha=..., size=...) draws for the batch of
    `key` in `epoch` of a loader of `seed`: {"kind": "mixup" or "cutmix", "beta": the Beta
    (alpha, alpha) draw, "r_x", "r_y": CutMix's centre, "box": (x1, y1, x2, y2) of the pasted
    region, "lambda": the targets' weight of the sample itself (beta, or CutMix's 1 - box
    area / image area)}. A batch's key is its first sample's place in the epoch's order as
    dealt to the ranks: number * batch_size * world_size + rank from the epoch's start (a
    resumed epoch keeps it). With both alphas on, each batch takes one of the two."""
    alphas = {}
    for name, value in (("mixup_alpha", mixup_alpha), ("cutmix_alpha", cutmix_alpha)):
        alphas[name] = float(number(name, value, 0.0, 1000.0))
    if alphas["mixup_alpha"] <= 0 and alphas["cutmix_alpha"] <= 0:
        raise ValueError("mixup_alpha=0, cutmix_alpha=0: give either a value above 0")
    args = {"key": check_int("key", key, 0, 2**64 - 1), "size": check_int("size", size, 1, 1 << 15),
            "seed": check_int("seed", seed, 0, 2**64 - 1),
            "epoch": check_int("epoch", epoch, 0, 2**64 - 1), **alphas}
    draw = _stoker.mix_draw(args)
    draw["box"] = tuple(draw["box"])
    return draw

