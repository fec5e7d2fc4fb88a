// The image transform's random parameters for (seed, epoch, index), so that a Python
// reference (tests, users checking their augmentation) can reproduce exactly what the
// workers did to a sample; and the decoder's RGB, to compare with PIL's.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>

#include "bindings.hpp"
#include "options.hpp"
#include "stoker/transforms/image_transforms.hpp"

namespace py = pybind11;

namespace stoker::python {

namespace {
py::tuple box_tuple(const CropBox& b) {
  return py::make_tuple(b.x, b.y, b.w, b.h);
}
}  // namespace

void bind_transforms(py::module_& m) {
  m.def(
      "crop_box",
      [](int width, int height, uint64_t seed, uint64_t epoch, uint64_t index,
         const py::dict& options) {
        ImageTransformOptions o = image_options(options);
        if (!o.train) return box_tuple(center_crop(width, height, o));
        return box_tuple(random_resized_crop(width, height, SampleKey{seed, epoch, index}, o));
      },
      py::arg("width"), py::arg("height"), py::arg("seed"), py::arg("epoch"), py::arg("index"),
      py::arg("options"),
      "(x, y, w, h) in source pixels: the train crop of sample (seed, epoch, index), or the "
      "eval box (Resize + CenterCrop) when options['train'] is False");
  m.def(
      "flipped",
      [](uint64_t seed, uint64_t epoch, uint64_t index, const py::dict& options) {
        ImageTransformOptions o = image_options(options);
        return o.train && random_flip(SampleKey{seed, epoch, index}, o);
      },
      py::arg("seed"), py::arg("epoch"), py::arg("index"), py::arg("options"),
      "Whether the train pipeline flips sample (seed, epoch, index) horizontally");
  m.def(
      "decode_image",
      [](const py::bytes& data) {
        const std::string_view view(data);
        RgbImage img;
        {
          py::gil_scoped_release unlocked;
          img = decode_rgb(std::as_bytes(std::span(view.data(), view.size())));
        }
        py::array_t<uint8_t> out({img.height, img.width, 3});
        std::memcpy(out.mutable_data(), img.pixels.data(), img.pixels.size());
        return out;
      },
      py::arg("data"),
      "The file's bytes decoded as the image pipeline decodes them: an HxWx3 uint8 array "
      "(RGB), as PIL's Image.open(f).convert('RGB'). stoker.Error when it cannot be decoded");
}

}  // namespace stoker::python
