#include "arguments.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace py = pybind11;

namespace stoker::python::arg {

namespace {

// "int 5", "str '8'": the type's name and the value's repr, as the messages show them.
std::string shown(py::handle value) {
  return py::str(py::type::handle_of(value).attr("__name__")).cast<std::string>() + " " +
         py::repr(value).cast<std::string>();
}

// str(value); a double as Python writes it (0.0, -inf).
std::string text(py::handle value) {
  return py::str(value).cast<std::string>();
}
std::string text(double x) {
  return text(py::float_(x));
}

bool is_number(py::handle value) {
  return (PyLong_Check(value.ptr()) || PyFloat_Check(value.ptr())) && !PyBool_Check(value.ptr());
}

bool is_path(py::handle value) {
  return py::isinstance<py::str>(value) || py::isinstance<py::bytes>(value) ||
         py::isinstance(value, py::module_::import("os").attr("PathLike"));
}

// Why stat() failed, true to its errno: only ENOENT is "no such ..."; a name too long, a
// link loop, a file where a folder should be or a permission are said as they are.
std::string stat_problem(int err, const char* what) {
  switch (err) {
    case ENOENT:
      return std::string("no such ") + what;
    case ENOTDIR:
      return std::string(std::strerror(err)) + ": a part of the path before the last is a file";
    case ELOOP:
      return std::string(std::strerror(err)) + ": a symbolic link that leads back to itself?";
    case EACCES:
      return std::string(std::strerror(err)) + ": a folder of the path may not be searched";
    default:
      return std::strerror(err);
  }
}

}  // namespace

std::string repr(py::handle value) {
  return py::repr(value).cast<std::string>();
}

void check_integer(const std::string& name, py::handle value, py::handle lo, py::handle hi,
                   bool allow_none) {
  if (value.is_none() && allow_none) return;
  if (!PyLong_Check(value.ptr()) || PyBool_Check(value.ptr())) {
    throw py::type_error(name + " must be " + (allow_none ? "an int or None" : "an int") +
                         ", got " + shown(value));
  }
  if (!lo.is_none() && value < lo) {
    throw py::value_error(name + "=" + text(value) + ": must be at least " + text(lo));
  }
  if (!hi.is_none() && value > hi) {
    throw py::value_error(name + "=" + text(value) + ": must be at most " + text(hi));
  }
}

bool boolean(const std::string& name, py::handle value) {
  if (!PyBool_Check(value.ptr())) {
    throw py::type_error(name + " must be True or False, got " + shown(value));
  }
  return value.ptr() == Py_True;
}

double number(const std::string& name, py::handle value, double lo, double hi) {
  if (!is_number(value)) throw py::type_error(name + " must be a number, got " + shown(value));
  if (!(py::float_(lo) <= value && value <= py::float_(hi))) {
    throw py::value_error(name + "=" + text(value) + ": must be in [" + text(lo) + ", " + text(hi) +
                          "]");
  }
  return value.cast<double>();
}

std::string choice(const std::string& name, py::handle value,
                   std::initializer_list<const char*> choices) {
  std::string listed;
  for (const char* c : choices) listed += (listed.empty() ? "" : ", ") + std::string(c);
  if (!py::isinstance<py::str>(value)) {
    throw py::type_error(name + " must be a string, one of " + listed + "; got " + shown(value));
  }
  const auto s = value.cast<std::string>();
  for (const char* c : choices) {
    if (s == c) return s;
  }
  throw py::value_error(name + "=" + arg::repr(value) + ": expected one of " + listed);
}

std::vector<double> numbers(const std::string& name, py::handle value, size_t length, double above,
                            bool ordered) {
  const std::string count = std::to_string(length);
  if (py::isinstance<py::str>(value) || py::isinstance<py::bytes>(value) ||
      !py::hasattr(value, "__len__")) {
    throw py::type_error(name + " must be a sequence of " + count + " numbers, got " +
                         arg::repr(value));
  }
  if (py::len(value) != length) {
    throw py::value_error(name + "=" + arg::repr(value) + ": expected " + count + " numbers");
  }
  std::vector<double> out;
  for (py::handle v : value) {
    const std::string item = name + "[" + std::to_string(out.size()) + "]";
    if (!is_number(v)) throw py::type_error(item + " must be a number, got " + shown(v));
    if (v <= py::float_(above)) {
      throw py::value_error(item + "=" + text(v) + ": must be greater than " + text(above));
    }
    out.push_back(v.cast<double>());
  }
  if (ordered && !std::is_sorted(out.begin(), out.end())) {
    throw py::value_error(name + "=" + arg::repr(value) + ": expected (min, max) with min <= max");
  }
  return out;
}

std::string path(const std::string& name, py::handle value, PathKind kind) {
  if (!is_path(value)) {
    throw py::type_error(name + " must be a path (str or os.PathLike), got " + shown(value));
  }
  const py::module_ os = py::module_::import("os");
  const py::object p = os.attr("fspath")(value);
  // The bytes the OS takes (a str name that is not UTF-8 holds surrogate escapes).
  const std::string bytes = os.attr("fsencode")(p).cast<std::string>();
  const std::string shown_path = name + "=" + arg::repr(p);
  if (bytes.find('\0') != std::string::npos) {
    throw py::value_error(shown_path + ": holds a NUL byte, which no file name can");
  }
  const char* what = kind == PathKind::Folder ? "directory"
                     : kind == PathKind::File ? "file"
                                              : "file or directory";
  struct stat st {};
  if (::stat(bytes.c_str(), &st) != 0)
    throw py::value_error(shown_path + ": " + stat_problem(errno, what));
  if (kind == PathKind::Folder && !S_ISDIR(st.st_mode)) {
    throw py::value_error(shown_path + ": is a file, not a directory");
  }
  if (kind == PathKind::File && !S_ISREG(st.st_mode)) {
    throw py::value_error(shown_path + (S_ISDIR(st.st_mode) ? ": is a directory, not a file"
                                                            : ": is not a regular file"));
  }
  return bytes;
}

std::vector<std::string> paths(const std::string& name, py::handle value, const char* what) {
  if (is_path(value)) return {path(name, value, PathKind::Any)};
  if (!py::hasattr(value, "__iter__")) {
    throw py::type_error(name + " must be a path or a list of paths, got " + arg::repr(value));
  }
  const py::list items(py::reinterpret_borrow<py::object>(value));  // any iterable
  if (items.empty()) throw py::value_error(name + "=[]: give at least one " + std::string(what));
  std::vector<std::string> out;
  for (py::handle p : items) {
    out.push_back(path(name + "[" + std::to_string(out.size()) + "]", p, PathKind::Any));
  }
  return out;
}

void bind(py::module_& m) {
  m.def(
      "check_int",
      [](const std::string& name, py::object value, py::object minimum, py::object maximum,
         bool allow_none) {
        check_integer(name, value, minimum, maximum, allow_none);
        return value;
      },
      py::arg("name"), py::arg("value"), py::arg("minimum") = py::none(),
      py::arg("maximum") = py::none(), py::arg("allow_none") = false,
      "value, when it is an int (not a bool) within [minimum, maximum] (None: no bound) or "
      "None with allow_none; else TypeError or ValueError naming the argument");
  m.def(
      "check_bool",
      [](const std::string& name, py::object value) {
        boolean(name, value);
        return value;
      },
      py::arg("name"), py::arg("value"),
      "value, when it is True or False; else TypeError naming the argument");
}

}  // namespace stoker::python::arg
