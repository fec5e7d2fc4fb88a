// The page's tables of the loader's and the image pipeline's options (reference.hpp).
#include <cmath>
#include <cstdio>
#include <limits>

#include "reference.hpp"
#include "stoker/loader/loader_fields.hpp"
#include "stoker/transforms/image_fields.hpp"

namespace stoker::reference {

namespace {

std::string number(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

std::string numbers(const std::vector<double>& v) {
  std::string out = "(";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + number(v[i]);
  return out + ")";
}

template <class T>
std::string bounds(const OptionField<T>& f) {
  switch (f.kind) {
    case OptionKind::Flag:
      return "True, False";
    case OptionKind::Whole:
      return f.max == std::numeric_limits<uint64_t>::max()
                 ? std::to_string(f.min) + " or more"
                 : std::to_string(f.min) + " to " + std::to_string(f.max);
    case OptionKind::Fraction:
      return number(f.lo) + " to " + number(f.hi);
    case OptionKind::Choice: {
      std::string out;
      for (const char* c : f.choices) out += (out.empty() ? "'" : ", '") + std::string(c) + "'";
      return out;
    }
    case OptionKind::Range:
      return "(min, max), min <= max, each above " + number(f.lo) +
             (std::isinf(f.hi) ? "" : ", max at most " + number(f.hi));
    case OptionKind::Triple:
      return std::isinf(f.lo) ? "three numbers" : "three numbers, each above " + number(f.lo);
  }
  return "?";
}

// The default of a C++ default-constructed options struct, as Python writes it. A whole
// number below its row's minimum is no default (""): each constructor has its own
// (batch_size).
template <class T>
std::string default_of(const OptionField<T>& f) {
  const OptionValue v = f.get(T{});
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "True" : "False";
  if (const auto* n = std::get_if<uint64_t>(&v)) {
    if (*n == 0 && f.none) return "None";
    return *n < f.min ? "" : std::to_string(*n);
  }
  if (const auto* d = std::get_if<double>(&v)) return number(*d);
  if (const auto* s = std::get_if<std::string>(&v)) return "'" + *s + "'";
  if (const auto* list = std::get_if<std::vector<double>>(&v)) return numbers(*list);
  return "None";
}

template <class T>
void options(std::ostream& out, const std::vector<OptionField<T>>& rows) {
  std::vector<std::vector<std::string>> cells;
  for (const OptionField<T>& f : rows) {
    std::string flag = f.bench ? std::string("--") + f.name : "";
    for (char& c : flag) c = c == '_' ? '-' : c;
    cells.push_back({code(f.name), to_string(f.kind), cell(bounds(f)), cell(f.none ? f.none : ""),
                     default_of(f).empty() ? "each constructor's" : code(default_of(f)), code(flag),
                     cell(f.help)});
  }
  table(out, {"keyword", "kind", "takes", "None means", "default", "`stoker bench`", "meaning"},
        cells);
}

}  // namespace

void loader_options(std::ostream& out) {
  out << "## The loader's keyword arguments\n\n";
  paragraph(out,
            "`stoker.Loader.images`, `.tokens` and `.records` take these, each checked against "
            "its row of `loader_fields()` (`runtime/src/loader/loader_fields.cpp`) before it "
            "reaches the library: a TypeError or ValueError names the argument. The C++ "
            "`LoaderOptions` has the same members; `stoker bench` offers the rows it names as "
            "flags.");
  options(out, loader_fields());
  paragraph(out,
            "`Loader.images` also takes the image pipeline's, the rows of `image_fields()` "
            "(`runtime/src/transforms/image_fields.cpp`; C++: `ImageTransformOptions`):");
  options(out, image_fields());
  paragraph(out,
            "No table holds the rest: each source's own arguments and the ones the Python "
            "layer keeps. Their docstrings document them "
            "(`runtime/python/stoker/_loader_sources.py`, `_loader.py`; "
            "`help(stoker.Loader.images)`):");
  for (const char* item :
       {"- `Loader.images(root=None, shards=None, stream=None, labels=True, batch_size=64)`: "
        "an image folder or tar shards (a path or a list of .tar, .tar.gz, .tar.zst files or "
        "folders); `stream` None: the plan's profile, always for compressed shards; "
        "`labels=False` reads label-free shards (labels -1).",
        "- `Loader.tokens(path, seq_len=2048, batch_size=16, dtype=None, widen=True)`: a "
        "file, a folder or a list of them, one set; `dtype` None: the `.npy` headers', else "
        "uint16; `widen` yields int64 windows.",
        "- `Loader.records(path, record_bytes, batch_size, dtype='uint8', shape=None, "
        "labels_path=None)`: fixed-size records, labels from an optional int64 file.",
        "- Every constructor: `plan=None` (this process's plan), `to_device=None` (a torch "
        "device: batches arrive there), `as_numpy=False` (numpy arrays instead of tensors), "
        "`return_indices=False` (also yield the dataset indices)."}) {
    wrap(out, item, "  ");
  }
}

}  // namespace stoker::reference
