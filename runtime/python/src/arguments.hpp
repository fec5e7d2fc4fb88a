// The public API's arguments (stoker.Loader and its constructors), read and checked once,
// where they become C++ values: stoker/_loader.py passes them as the caller gave them. Each
// error names the argument and what it allows: TypeError for the wrong type, ValueError
// for a value out of range (tests/python/test_arguments.py). The Python layer's own checks
// are these too (bind() below).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

namespace stoker::python::arg {

// Raises unless `value` is an int (a bool is refused: batch_size=True is a mistake, not a
// 1) within [lo, hi] (a bound that is None: none that way); None passes when allow_none.
void check_integer(const std::string& name, pybind11::handle value, pybind11::handle lo,
                   pybind11::handle hi, bool allow_none);

// An int within [lo, hi].
template <class T>
T integer(const std::string& name, pybind11::handle value, T lo,
          T hi = std::numeric_limits<T>::max()) {
  check_integer(name, value, pybind11::int_(lo), pybind11::int_(hi), false);
  return pybind11::cast<T>(value);
}

// None (-> `none`) or an int within [lo, hi].
template <class T>
T integer_or_none(const std::string& name, pybind11::handle value, T lo, T hi, T none) {
  check_integer(name, value, pybind11::int_(lo), pybind11::int_(hi), true);
  return value.is_none() ? none : pybind11::cast<T>(value);
}

// repr(value), for the messages that show an argument as the caller gave it.
std::string repr(pybind11::handle value);

// True or False.
bool boolean(const std::string& name, pybind11::handle value);

// An int or a float within [lo, hi].
double number(const std::string& name, pybind11::handle value, double lo, double hi);

// A string, one of `choices`.
std::string choice(const std::string& name, pybind11::handle value,
                   std::initializer_list<const char*> choices);

// A sequence of `length` numbers, each greater than `above`, ascending when `ordered`.
std::vector<double> numbers(const std::string& name, pybind11::handle value, size_t length,
                            double above, bool ordered);

// A str or os.PathLike naming an existing file, folder or either.
enum class PathKind { File, Folder, Any };
std::string path(const std::string& name, pybind11::handle value, PathKind kind);

// A path, or a non-empty list of paths (each a file or folder; `what` names one).
std::vector<std::string> paths(const std::string& name, pybind11::handle value, const char* what);

// _stoker.check_int and _stoker.check_bool: the same checks for the arguments that stay in
// Python (stoker/_checks.py), so that every argument error has one wording.
void bind(pybind11::module_& m);

}  // namespace stoker::python::arg
