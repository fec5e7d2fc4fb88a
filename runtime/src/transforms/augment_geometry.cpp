// The geometric augmentations as torchvision runs them on a PIL image: the inverse affine
// matrix torchvision (_get_inverse_affine_matrix) or PIL (Image.rotate) computes, in the
// same double operations, then Pillow 9.4's Image.transform (libImaging/Geometry.c): nearest
// sampling through its scale path (no rotation or shear), its 16.16 fixed-point path (or
// its double path where fixed point would overflow), and its bilinear and bicubic samplers
// for other interpolations. Built with -ffp-contract=off: a fused multiply-add would round
// differently from Pillow's separate operations.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "transforms/augment_geometry.hpp"

namespace stoker {

namespace {

using Matrix = AffineMatrix;

// CPython's math.radians and math.degrees.
constexpr double kPi = 3.14159265358979323846;
double radians(double degrees) {
  return degrees * (kPi / 180.0);
}
double degrees(double radians) {
  return radians * (180.0 / kPi);
}

// Python's round(x, 15): the nearest 15-decimal number, as the nearest double (glibc's
// printf rounds exactly, as CPython's dtoa does).
double round15(double x) {
  char text[64];
  std::snprintf(text, sizeof text, "%.15f", x);
  return std::strtod(text, nullptr);
}

// Python's float x % m: the sign of m.
double python_mod(double x, double m) {
  double r = std::fmod(x, m);
  if (r != 0) {
    if ((m < 0) != (r < 0)) r += m;
  } else {
    r = std::copysign(0.0, m);
  }
  return r;
}

// Pillow's COORD and FLOOR (Geometry.c); values past int's range (Pillow's undefined
// conversion, which x86 turns into INT_MIN) land outside every image here too.
int coord(double v) {
  return v < 0.0 ? -1 : v < 2147483647.0 ? static_cast<int>(v) : 2147483647;
}
int pil_floor(double v) {
  return v < 0.0 ? static_cast<int>(std::floor(v)) : static_cast<int>(v);
}

struct Sampler {
  const uint8_t* in;
  int w, h;
  const uint8_t* px(int x, int y) const { return in + (static_cast<size_t>(y) * w + x) * 3; }
  int xclip(int x) const { return x < 0 ? 0 : x < w ? x : w - 1; }
  int yclip(int y) const { return y < 0 ? 0 : y < h ? y : h - 1; }
};

// Pillow's BILINEAR(v, a, b, d) along a row of one channel (every third byte).
inline double lerp(const uint8_t* row, int x0, int x1, double d) {
  return row[3 * x0] + (row[3 * x1] - row[3 * x0]) * d;
}

// Pillow's bilinear_filter32RGB: false outside the image (the fill stays).
bool bilinear(const Sampler& s, double xin, double yin, uint8_t* out) {
  if (xin < 0.0 || xin >= s.w || yin < 0.0 || yin >= s.h) return false;
  xin -= 0.5;
  yin -= 0.5;
  const int x = pil_floor(xin), y = pil_floor(yin);
  const double dx = xin - x, dy = yin - y;
  const int x0 = s.xclip(x), x1 = s.xclip(x + 1);
  const uint8_t* r0 = s.px(0, s.yclip(y));
  // A fraction of 0 adds (difference) * 0.0, which leaves the byte as it is: the shears
  // sample whole rows (ShearX) or columns (ShearY), and skip that half of the work.
  if (dy == 0.0 || y + 1 >= s.h) {  // y + 1 >= 0 always: y >= -1
    for (int b = 0; b < 3; ++b) {
      const double v = dx == 0.0 ? r0[3 * x0 + b] : lerp(r0 + b, x0, x1, dx);
      out[b] = static_cast<uint8_t>(v);
    }
    return true;
  }
  const uint8_t* r1 = s.px(0, y + 1);
  for (int b = 0; b < 3; ++b) {
    const double v1 = dx == 0.0 ? r0[3 * x0 + b] : lerp(r0 + b, x0, x1, dx);
    const double v2 = dx == 0.0 ? r1[3 * x0 + b] : lerp(r1 + b, x0, x1, dx);
    out[b] = static_cast<uint8_t>(v1 + (v2 - v1) * dy);
  }
  return true;
}

// Pillow's BICUBIC macro: integers for the first pass, doubles for the second, as there.
template <class T>
double cubic(T v1, T v2, T v3, T v4, double d) {
  const double p1 = v2;
  const double p2 = -v1 + v3;
  const double p3 = 2 * (v1 - v2) + v3 - v4;
  const double p4 = -v1 + v2 - v3 + v4;
  return p1 + d * (p2 + d * (p3 + d * p4));
}

// Pillow's bicubic_filter32RGB.
bool bicubic(const Sampler& s, double xin, double yin, uint8_t* out) {
  if (xin < 0.0 || xin >= s.w || yin < 0.0 || yin >= s.h) return false;
  xin -= 0.5;
  yin -= 0.5;
  int x = pil_floor(xin), y = pil_floor(yin);
  const double dx = xin - x, dy = yin - y;
  --x;
  --y;
  const int xs[4] = {s.xclip(x), s.xclip(x + 1), s.xclip(x + 2), s.xclip(x + 3)};
  for (int b = 0; b < 3; ++b) {
    auto row = [&](int yy) {
      const uint8_t* r = s.px(0, yy) + b;
      return cubic<int>(r[3 * xs[0]], r[3 * xs[1]], r[3 * xs[2]], r[3 * xs[3]], dx);
    };
    const double v1 = row(s.yclip(y));
    const double v2 = y + 1 >= 0 && y + 1 < s.h ? row(y + 1) : v1;
    const double v3 = y + 2 >= 0 && y + 2 < s.h ? row(y + 2) : v2;
    const double v4 = y + 3 >= 0 && y + 3 < s.h ? row(y + 3) : v3;
    const double v = cubic<double>(v1, v2, v3, v4, dy);
    out[b] = v <= 0.0 ? 0 : v >= 255.0 ? 255 : static_cast<uint8_t>(v);
  }
  return true;
}

// ImagingGenericTransform with affine_transform and a filter.
template <class Filter>
void generic_affine(const Sampler& s, uint8_t* out, const Matrix& a, Filter filter) {
  for (int y = 0; y < s.h; ++y) {
    for (int x = 0; x < s.w; ++x, out += 3) {
      const double xin = x + 0.5, yin = y + 0.5;
      filter(s, a[0] * xin + a[1] * yin + a[2], a[3] * xin + a[4] * yin + a[5], out);
    }
  }
}

// ImagingScaleAffine: nearest sampling when the matrix neither rotates nor shears.
void scale_affine(const Sampler& s, uint8_t* out, const Matrix& a) {
  thread_local std::vector<int> xintab;  // grows to the widest image, then reused
  xintab.assign(s.w, 0);
  double xo = a[2] + a[0] * 0.5, yo = a[5] + a[4] * 0.5;
  int xmin = s.w, xmax = 0;
  for (int x = 0; x < s.w; ++x) {
    const int xin = coord(xo);
    if (xin >= 0 && xin < s.w) {
      xmax = x + 1;
      xmin = std::min(xmin, x);
      xintab[x] = xin;
    }
    xo += a[0];
  }
  for (int y = 0; y < s.h; ++y) {
    const int yi = coord(yo);
    if (yi >= 0 && yi < s.h) {
      uint8_t* row = out + static_cast<size_t>(y) * s.w * 3;
      for (int x = xmin; x < xmax; ++x) std::memcpy(row + 3 * x, s.px(xintab[x], yi), 3);
    }
    yo += a[4];
  }
}

bool fits_fixed(const Matrix& a, int x, int y) {
  return std::fabs(x * a[0] + y * a[1] + a[2]) < 32768.0 &&
         std::fabs(x * a[3] + y * a[4] + a[5]) < 32768.0;
}

// affine_fixed: nearest sampling in 16.16 fixed point.
void fixed_affine(const Sampler& s, uint8_t* out, const Matrix& a) {
  auto fix = [](double v) { return pil_floor(v * 65536.0 + 0.5); };
  const int a0 = fix(a[0]), a1 = fix(a[1]), a3 = fix(a[3]), a4 = fix(a[4]);
  int a2 = fix(a[2] + a[0] * 0.5 + a[1] * 0.5), a5 = fix(a[5] + a[3] * 0.5 + a[4] * 0.5);
  for (int y = 0; y < s.h; ++y) {
    int xx = a2, yy = a5;
    for (int x = 0; x < s.w; ++x, out += 3) {
      const int xin = xx >> 16, yin = yy >> 16;
      if (xin >= 0 && xin < s.w && yin >= 0 && yin < s.h) std::memcpy(out, s.px(xin, yin), 3);
      xx += a0;
      yy += a3;
    }
    a2 += a1;
    a5 += a4;
  }
}

// ImagingTransformAffine's double path, where fixed point would overflow.
void double_affine(const Sampler& s, uint8_t* out, const Matrix& a) {
  double xo = a[2] + a[1] * 0.5 + a[0] * 0.5, yo = a[5] + a[4] * 0.5 + a[3] * 0.5;
  for (int y = 0; y < s.h; ++y) {
    double xx = xo, yy = yo;
    for (int x = 0; x < s.w; ++x, out += 3) {
      const int xin = coord(xx);
      if (xin >= 0 && xin < s.w) {
        const int yin = coord(yy);
        if (yin >= 0 && yin < s.h) std::memcpy(out, s.px(xin, yin), 3);
      }
      xx += a[0];
      yy += a[3];
    }
    xo += a[1];
    yo += a[4];
  }
}

// Whether `a` translates by whole pixels (the translations' matrices): then each output
// pixel's sampling point is an input pixel's centre, where the bilinear and bicubic samplers
// give that pixel's bytes exactly (their fractions are 0), and the transform is a shift.
bool whole_shift(const Matrix& a, int& dx, int& dy) {
  if (a[0] != 1.0 || a[1] != 0.0 || a[3] != 0.0 || a[4] != 1.0) return false;
  if (!(std::fabs(a[2]) < 1e9 && std::fabs(a[5]) < 1e9)) return false;
  if (a[2] != std::trunc(a[2]) || a[5] != std::trunc(a[5])) return false;
  dx = static_cast<int>(a[2]);
  dy = static_cast<int>(a[5]);
  return true;
}

// Output (x, y) takes input (x + dx, y + dy) where that is in the image (the fill elsewhere).
void shift(const Sampler& s, uint8_t* out, int dx, int dy) {
  const int x_lo = std::max(0, -dx), x_hi = std::min(s.w, s.w - dx);
  if (x_lo >= x_hi) return;
  for (int y = std::max(0, -dy); y < std::min(s.h, s.h - dy); ++y) {
    std::memcpy(out + (static_cast<size_t>(y) * s.w + x_lo) * 3, s.px(x_lo + dx, y + dy),
                static_cast<size_t>(x_hi - x_lo) * 3);
  }
}

// PIL's img.transform(img.size, AFFINE, matrix, resample, fillcolor=fill), in place.
void pil_affine(RgbPixels image, uint8_t* spare, const Matrix& a, Interpolation interpolation,
                const Fill& fill) {
  std::memcpy(spare, image.data, image.bytes());
  if (fill[0] == fill[1] && fill[1] == fill[2]) {  // grey (the policies' black): one memset
    std::memset(image.data, fill[0], image.bytes());
  } else {
    for (size_t i = 0; i < image.bytes(); i += 3) std::memcpy(image.data + i, fill.data(), 3);
  }
  const Sampler s{spare, image.width, image.height};
  int dx = 0, dy = 0;
  if (interpolation != Interpolation::Nearest && whole_shift(a, dx, dy)) {
    return shift(s, image.data, dx, dy);
  }
  if (interpolation == Interpolation::Bilinear) {
    return bilinear_affine(spare, image.width, image.height, image.data, a);
  }
  if (interpolation == Interpolation::Bicubic) return generic_affine(s, image.data, a, bicubic);
  if (a[1] == 0 && a[3] == 0) return scale_affine(s, image.data, a);
  const int w = image.width, h = image.height;
  if (fits_fixed(a, 0, 0) && fits_fixed(a, w, h) && fits_fixed(a, 0, h) && fits_fixed(a, w, 0)) {
    return fixed_affine(s, image.data, a);
  }
  double_affine(s, image.data, a);
}

// PIL's Image.transpose: ROTATE_90 and ROTATE_270 (square images here), ROTATE_180 and the
// flips. `to(x, y)` is where input pixel (x, y) goes.
template <class To>
void transpose(RgbPixels image, uint8_t* spare, To to) {
  std::memcpy(spare, image.data, image.bytes());
  const uint8_t* in = spare;
  for (int y = 0; y < image.height; ++y) {
    for (int x = 0; x < image.width; ++x, in += 3) {
      const auto [ox, oy] = to(x, y);
      std::memcpy(image.data + (static_cast<size_t>(oy) * image.width + ox) * 3, in, 3);
    }
  }
}

struct Point {
  int x, y;
};

}  // namespace

void bilinear_affine(const uint8_t* in, int w, int h, uint8_t* out, const AffineMatrix& a,
                     ResampleKernel kernel) {
  if (kernel == ResampleKernel::Avx2 && resample_kernel_available(kernel) &&
      bilinear_affine_avx2(in, w, h, out, a)) {
    return;
  }
  generic_affine(Sampler{in, w, h}, out, a, bilinear);
}

AffineMatrix inverse_affine(double cx, double cy, double angle, double tx, double ty,
                            double shear_x, double shear_y) {
  const double rot = radians(angle), sx = radians(shear_x), sy = radians(shear_y);
  const double a = std::cos(rot - sy) / std::cos(sy);
  const double b = -std::cos(rot - sy) * std::tan(sx) / std::cos(sy) - std::sin(rot);
  const double c = std::sin(rot - sy) / std::cos(sy);
  const double d = -std::sin(rot - sy) * std::tan(sx) / std::cos(sy) + std::cos(rot);
  Matrix m = {d, -b, 0.0, -c, a, 0.0};
  m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty);
  m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty);
  m[2] += cx;
  m[5] += cy;
  return m;
}

void affine_op(AugmentOp op, double magnitude, RgbPixels image, uint8_t* spare,
               Interpolation interpolation, const Fill& fill) {
  Matrix m{};
  if (op == AugmentOp::ShearX || op == AugmentOp::ShearY) {
    // center=[0, 0], shear = degrees(atan(magnitude)) on one axis.
    const double shear = degrees(std::atan(magnitude));
    m = op == AugmentOp::ShearX ? inverse_affine(0, 0, 0.0, 0, 0, shear, 0.0)
                                : inverse_affine(0, 0, 0.0, 0, 0, 0.0, shear);
  } else {
    // The image's centre, translate=[int(magnitude), 0] or [0, int(magnitude)]; a shift past
    // the image (any larger one fills it all the same) keeps int() defined.
    const double t = std::trunc(std::clamp(magnitude, -1e9, 1e9));
    const bool x = op == AugmentOp::TranslateX;
    m = inverse_affine(image.width * 0.5, image.height * 0.5, 0.0, x ? t : 0, x ? 0 : t, 0.0, 0.0);
  }
  pil_affine(image, spare, m, interpolation, fill);
}

void rotate_op(double magnitude, RgbPixels image, uint8_t* spare, Interpolation interpolation,
               const Fill& fill) {
  const double angle = python_mod(magnitude, 360.0);
  const int w = image.width, h = image.height;
  // Image.rotate's fast paths, whatever the filter (no centre or translation given).
  if (angle == 0) return;
  if (angle == 180) {
    return transpose(image, spare, [&](int x, int y) { return Point{w - 1 - x, h - 1 - y}; });
  }
  if ((angle == 90 || angle == 270) && w == h) {
    if (angle == 90) {
      return transpose(image, spare, [&](int x, int y) { return Point{y, w - 1 - x}; });
    }
    return transpose(image, spare, [&](int x, int y) { return Point{h - 1 - y, x}; });
  }
  const double cx = w / 2.0, cy = h / 2.0, a = -radians(angle);
  Matrix m = {round15(std::cos(a)),  round15(std::sin(a)), 0.0,
              round15(-std::sin(a)), round15(std::cos(a)), 0.0};
  const double x = -cx - 0, y = -cy - 0;
  m[2] = m[0] * x + m[1] * y + m[2];
  m[5] = m[3] * x + m[4] * y + m[5];
  m[2] += cx;
  m[5] += cy;
  pil_affine(image, spare, m, interpolation, fill);
}

void flip_op(bool horizontal, RgbPixels image, uint8_t* spare) {
  const int w = image.width, h = image.height;
  if (horizontal) {
    return transpose(image, spare, [&](int x, int y) { return Point{w - 1 - x, y}; });
  }
  transpose(image, spare, [&](int x, int y) { return Point{x, h - 1 - y}; });
}

}  // namespace stoker
