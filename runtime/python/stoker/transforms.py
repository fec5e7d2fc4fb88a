"""stoker's image augmentations one at a time, as torchvision runs them.

    from stoker.transforms import apply_op
    out = apply_op(image, "Rotate", 30.0, interpolation="bilinear")

`apply_op` is torchvision.transforms.autoaugment._apply_op for an RGB image held as a uint8
numpy array of shape (height, width, 3): the same operation names and magnitudes, and the
bytes torchvision gives on the PIL image of the same pixels (the C++ code that
stoker.Loader.images runs for auto_augment_policy). Importing this module imports no numpy.
"""
import math

from . import _native
from ._arguments import shown

__all__ = ["apply_op", "OP_NAMES", "INTERPOLATIONS"]

OP_NAMES = ("Identity", "ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Brightness",
            "Color", "Contrast", "Sharpness", "Posterize", "Solarize", "AutoContrast",
            "Equalize", "Invert", "HorizontalFlip", "VerticalFlip")
INTERPOLATIONS = ("nearest", "bilinear", "bicubic")


def _interpolation(value):
    """A name, or torchvision's InterpolationMode (its .value is the name)."""
    name = getattr(value, "value", value)
    if not isinstance(name, str):
        raise TypeError(f"interpolation must be one of {', '.join(INTERPOLATIONS)} or a "
                        f"torchvision InterpolationMode, got {shown(value)}")
    if name not in INTERPOLATIONS:
        raise ValueError(f"interpolation={name!r}: expected one of {', '.join(INTERPOLATIONS)}")
    return name


def _fill(fill):
    """torchvision's fill for an RGB image: None (0), a number or 3 numbers, each int()'d."""
    if fill is None:
        return [0, 0, 0]
    values = [fill] * 3 if isinstance(fill, (int, float)) and not isinstance(fill, bool) \
        else fill
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or len(values) != 3:
        raise TypeError(f"fill must be None, a number or 3 numbers, got {shown(fill)}")
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise TypeError(f"fill must be None, a number or 3 numbers, got {shown(fill)}")
        if not 0 <= int(v) <= 255:
            raise ValueError(f"fill={fill!r}: each value must be 0..255")
        out.append(int(v))
    return out


def apply_op(image, op_name, magnitude, interpolation="nearest", fill=None):
    """`op_name` with `magnitude` on `image` (a uint8 numpy array, height x width x 3, RGB),
    as torchvision's _apply_op(img, op_name, magnitude, interpolation, fill) on the PIL
    image of those pixels; returns a new array of the same shape. op_name is one of
    OP_NAMES (torchvision's, and HorizontalFlip, VerticalFlip); interpolation "nearest",
    "bilinear" or "bicubic" (or an InterpolationMode) for the geometric operations; fill
    the colour they leave where no pixel lands (None: black)."""
    import numpy

    if not isinstance(image, numpy.ndarray):
        raise TypeError(f"image must be a numpy array (height, width, 3) of uint8, got "
                        f"{type(image).__name__}")
    if image.dtype != numpy.uint8 or image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"image must be a uint8 array of shape (height, width, 3), got "
                         f"{image.dtype} {image.shape}")
    if not isinstance(op_name, str):
        raise TypeError(f"op_name must be a string, one of {', '.join(OP_NAMES)}; got "
                        f"{shown(op_name)}")
    if op_name not in OP_NAMES:
        raise ValueError(f"op_name={op_name!r}: expected one of {', '.join(OP_NAMES)}")
    if isinstance(magnitude, bool) or not isinstance(magnitude, (int, float)):
        raise TypeError(f"magnitude must be a number, got {shown(magnitude)}")
    if not math.isfinite(magnitude):
        raise ValueError(f"magnitude={magnitude!r}: must be finite")
    if op_name == "Posterize" and not 0 <= int(magnitude) <= 8:
        raise ValueError(f"magnitude={magnitude!r}: Posterize keeps int(magnitude) bits, 0..8")
    height, width = image.shape[:2]
    args = {"op": op_name, "magnitude": float(magnitude), "width": width, "height": height,
            "interpolation": _interpolation(interpolation), "fill": _fill(fill)}
    pixels = _native.call("apply_op", args, data=numpy.ascontiguousarray(image).tobytes())[1]
    pixels = pixels or b""  # an empty image comes back as no bytes
    return numpy.frombuffer(bytearray(pixels), dtype=numpy.uint8).reshape(height, width, 3)
