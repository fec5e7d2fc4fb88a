// The inside of the C interface (stoker_c.h): the objects behind stoker_object, what a call
// receives and returns, and the tables of calls, one per file (capi_plan.cpp, ...). A call
// is a C++ function that throws as the runtime does; capi.cpp turns what it throws into the
// status and the error text, so no exception crosses into C.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stoker_c.h"

// Every handle is one of these; the calls cast it to what they expect (TypeError if not).
struct stoker_object {
  virtual ~stoker_object() = default;
};

namespace stoker::capi {

using json = nlohmann::json;

// A value the caller gave, out of range or malformed (Python: ValueError), or of the wrong
// kind (TypeError). The runtime's own failures are stoker::Error.
struct ValueError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct TypeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Call {
  json args;  // an object
  std::string_view data;
  std::vector<stoker_object*> objects;

  // Object `i` as a T; TypeError naming `what` when it is missing or of another kind.
  template <class T>
  T& object(size_t i, const char* what) const {
    T* o = i < objects.size() ? dynamic_cast<T*>(objects[i]) : nullptr;
    if (o == nullptr)
      throw TypeError(std::string("expected ") + what + " as object " + std::to_string(i));
    return *o;
  }
  // The first object that is a T, or nullptr.
  template <class T>
  T* find(const char*) const {
    for (stoker_object* o : objects) {
      if (auto* t = dynamic_cast<T*>(o)) return t;
    }
    return nullptr;
  }
  // A named argument; ValueError naming it when it is missing.
  const json& at(const char* key) const;
  // A path argument: the hex of its bytes (any file name round-trips).
  std::string path(const char* key) const;
};

struct Result {
  json value;  // null: none
  std::string data;
  bool has_data = false;
  std::unique_ptr<stoker_object> object;
  void bytes(std::string d) {
    data = std::move(d);
    has_data = true;
  }
};

using Handler = std::function<void(const Call&, Result&)>;
using Calls = std::vector<std::pair<const char*, Handler>>;

Calls plan_calls();     // capi_plan.cpp: plans, the launcher's world, CPU shares
Calls sampler_calls();  // capi_sampler.cpp: the sampler, the epoch agreement's pieces
Calls loader_calls();   // capi_loader.cpp: opening a loader, its state and stats
Calls misc_calls();     // capi_misc.cpp: the library's facts, images, listings
Calls augment_calls();  // capi_augment.cpp: the augmentations one at a time, their tables

// Sets this thread's error text (stoker_last_error) and returns `status`.
int fail(int status, std::string_view what);
// Runs `body`; what it throws becomes a status and the thread's error text (capi.cpp).
int guarded(const std::function<void()>& body);

// `text` with every byte that is not part of valid UTF-8 written as \xNN, so that JSON and
// the error text can hold it and a person can read it.
std::string shown_text(std::string_view text);
// Bytes <-> the hex that carries them in JSON.
std::string hex_of(std::string_view bytes);
std::string bytes_of_hex(std::string_view hex, const char* what);
// A path list argument: each the hex of its bytes.
std::vector<std::string> paths_of(const json& value, const char* what);

}  // namespace stoker::capi
