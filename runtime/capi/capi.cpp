// stoker_call and the C boundary: the one place where what a call throws becomes a status
// and the thread's error text (stoker_last_error).
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>

#include "capi.hpp"
#include "stoker/common/error.hpp"

namespace stoker::capi {

namespace {

thread_local std::string t_error;

const std::map<std::string_view, Handler>& calls() {
  static const std::map<std::string_view, Handler> table = [] {
    std::map<std::string_view, Handler> t;
    for (const Calls& part :
         {plan_calls(), sampler_calls(), loader_calls(), misc_calls(), augment_calls()}) {
      for (const auto& [name, handler] : part) t.emplace(name, handler);
    }
    return t;
  }();
  return table;
}

char* copied(const std::string& s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p == nullptr) throw std::bad_alloc();
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

}  // namespace

int fail(int status, std::string_view what) {
  t_error = shown_text(what);
  return status;
}

const json& Call::at(const char* key) const {
  auto it = args.find(key);
  if (it == args.end()) throw ValueError(std::string("missing argument ") + key);
  return *it;
}

std::string Call::path(const char* key) const {
  return bytes_of_hex(at(key).get<std::string>(), key);
}

int guarded(const std::function<void()>& body) {
  try {
    body();
    return STOKER_OK;
  } catch (const Error& e) {
    return fail(STOKER_ERROR, e.what());
  } catch (const ValueError& e) {
    return fail(STOKER_VALUE_ERROR, e.what());
  } catch (const TypeError& e) {
    return fail(STOKER_TYPE_ERROR, e.what());
  } catch (const json::exception& e) {  // an argument of the wrong JSON type: the caller's bug
    return fail(STOKER_TYPE_ERROR, e.what());
  } catch (const std::bad_alloc&) {
    return fail(STOKER_NO_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(STOKER_OTHER_ERROR, e.what());
  } catch (...) {
    return fail(STOKER_OTHER_ERROR, "an unknown exception");
  }
}

}  // namespace stoker::capi

using namespace stoker::capi;

extern "C" {

int stoker_abi(void) {
  return STOKER_ABI;
}

int stoker_call(const char* name, const stoker_args* args, stoker_out* out) {
  return guarded([&] {
    *out = stoker_out{};
    auto it = calls().find(name == nullptr ? "" : name);
    if (it == calls().end())
      throw TypeError(std::string("no call named ") + (name ? name : "(null)"));
    Call call;
    call.args = args != nullptr && args->json != nullptr && args->json_len > 0
                    ? json::parse(std::string_view(args->json, args->json_len))
                    : json::object();
    if (args != nullptr) {
      if (args->data != nullptr) call.data = std::string_view(args->data, args->data_len);
      call.objects.assign(args->objects, args->objects + args->n_objects);
    }
    Result r;
    it->second(call, r);
    if (!r.value.is_null()) {
      const std::string text = r.value.dump(-1, ' ', false, json::error_handler_t::replace);
      out->json = copied(text);
      out->json_len = text.size();
    }
    if (r.has_data) {
      out->data = copied(r.data);
      out->data_len = r.data.size();
    }
    out->object = r.object.release();
  });
}

const char* stoker_last_error(size_t* len) {
  if (len != nullptr) *len = t_error.size();
  return t_error.c_str();
}

void stoker_free(void* p) {
  std::free(p);
}

void stoker_object_free(stoker_object* o) {
  delete o;
}

}  // extern "C"
