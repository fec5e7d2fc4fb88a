// A loader's arguments from JSON, by the options' tables (loader_fields.hpp,
// image_fields.hpp): the Python layer checked each against its row, so a value here that
// does not fit its row is that layer's bug; it is still refused by name, never taken.
#include "capi_options.hpp"

#include <algorithm>

#include "stoker/loader/loader_fields.hpp"
#include "stoker/transforms/image_fields.hpp"

namespace stoker::capi {

namespace {

std::string shown(const json& v) {
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

template <class T>
OptionValue value_for(const OptionField<T>& row, const json& v) {
  const std::string name = row.name;
  if (v.is_null()) {
    if (row.none == nullptr) throw TypeError(name + " must not be None");
    return std::monostate{};
  }
  switch (row.kind) {
    case OptionKind::Flag:
      if (!v.is_boolean()) throw TypeError(name + " must be True or False, got " + shown(v));
      return v.get<bool>();
    case OptionKind::Whole: {
      if (!v.is_number_unsigned())
        throw ValueError(name + "=" + shown(v) + ": expected a whole number");
      const auto x = v.get<uint64_t>();
      if (x < row.min)
        throw ValueError(name + "=" + shown(v) + ": must be at least " + std::to_string(row.min));
      if (x > row.max)
        throw ValueError(name + "=" + shown(v) + ": must be at most " + std::to_string(row.max));
      return x;
    }
    case OptionKind::Fraction: {
      if (!v.is_number()) throw TypeError(name + " must be a number, got " + shown(v));
      const auto x = v.get<double>();
      if (!(x >= row.lo && x <= row.hi)) throw ValueError(name + "=" + shown(v) + ": out of range");
      return x;
    }
    case OptionKind::Choice:
      for (const char* c : row.choices) {
        if (v.is_string() && v.get<std::string>() == c) return v.get<std::string>();
      }
      throw ValueError(name + "=" + shown(v) + ": not one of its choices");
    case OptionKind::Range:
    case OptionKind::Triple: {
      const size_t n = row.kind == OptionKind::Range ? 2 : 3;
      if (!v.is_array() || v.size() != n)
        throw ValueError(name + "=" + shown(v) + ": expected " + std::to_string(n) + " numbers");
      std::vector<double> x;
      for (const json& e : v) {
        if (!e.is_number() || !(e.get<double>() > row.lo))
          throw ValueError(name + "=" + shown(v) + ": out of range");
        x.push_back(e.get<double>());
      }
      if (row.kind == OptionKind::Range && !(x[0] <= x[1] && x[1] <= row.hi)) {
        throw ValueError(name + "=" + shown(v) + ": out of range");
      }
      return x;
    }
  }
  throw TypeError(name + ": unknown kind");
}

// Sets `target` from the keys of `d` that `rows` knows; the others are left to the caller
// (returned, in order).
template <class T>
std::vector<std::string> set_known(const std::vector<OptionField<T>>& rows, const json& d,
                                   T& target) {
  std::vector<std::string> rest;
  for (const auto& [key, value] : d.items()) {
    if (const OptionField<T>* row = find_option(rows, key)) {
      row->set(target, value_for(*row, value));
    } else {
      rest.push_back(key);
    }
  }
  return rest;
}

void refuse_unknown(const std::vector<std::string>& keys, const char* what) {
  if (!keys.empty()) throw TypeError(std::string(what) + ": unknown option " + keys.front());
}

}  // namespace

LoaderOptions loader_options(const json& d) {
  LoaderOptions o;
  json rest = json::object();
  for (const std::string& key : set_known(loader_fields(), d, o)) rest[key] = d[key];
  // Set by the Python layer itself: pin the calling thread when it plans here.
  if (rest.contains("pin_main_thread")) {
    o.pin_main_thread = rest["pin_main_thread"].get<bool>();
    rest.erase("pin_main_thread");
  }
  std::vector<std::string> unknown;
  for (const auto& [key, value] : rest.items()) unknown.push_back(key);
  refuse_unknown(unknown, "Loader");
  o.corrupt_names = {"on_corrupt='skip'", "max_skip_fraction"};  // as stoker.Loader spells them
  return o;
}

ImageTransformOptions image_options(const json& d, const std::vector<std::string>& others) {
  ImageTransformOptions o;
  std::vector<std::string> unknown;
  for (const std::string& key : set_known(image_fields(), d, o)) {
    if (std::find(others.begin(), others.end(), key) == others.end()) unknown.push_back(key);
  }
  refuse_unknown(unknown, "image transform");
  return o;
}

}  // namespace stoker::capi
