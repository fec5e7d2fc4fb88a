/* stoker's flat C interface: libstoker.so, what the Python package (runtime/python/stoker,
 * through ctypes) and any other language call. One interface for every CPython from 3.9 on
 * (and free-threaded builds): the library holds no Python, so the wheel is py3-none.
 *
 * Three kinds of call:
 *  - stoker_call(NAME, args, out): everything that is not per batch. The named arguments and
 *    the result are JSON objects (UTF-8; a path travels as the hex of its bytes, so that any
 *    file name round-trips), plus bytes in and out (an image, a listing message) and objects
 *    (opaque handles: a plan, a sampler, a loader, a listed folder, a pinner). The calls and
 *    their arguments are listed in the tables of runtime/capi/capi_*.cpp (capi.hpp names them).
 *  - the per-batch calls, typed: stoker_loader_next, stoker_batch_release,
 *    stoker_sampler_indices.
 *  - stoker_pinner_new: callbacks that page-lock the batch slots (Python: torch's cudart).
 *
 * A call that fails returns a nonzero status and leaves the error's text for
 * stoker_last_error() on the calling thread. Nothing a call returns is owned by the caller
 * until it says so: JSON and bytes are freed with stoker_free, objects with
 * stoker_object_free (a loader's batches stay valid after it is freed). */
#ifndef STOKER_C_H
#define STOKER_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a call, its arguments or a struct below changes meaning: the Python layer
 * refuses a library of another version with one line. */
#define STOKER_ABI 1

enum {
  STOKER_OK = 0,
  STOKER_ERROR = 1,       /* stoker::Error: the input at fault, what is wrong, what to do */
  STOKER_VALUE_ERROR = 2, /* a value the caller gave is out of range or malformed */
  STOKER_TYPE_ERROR = 3,  /* a value the caller gave is of the wrong kind */
  STOKER_NO_MEMORY = 4,
  STOKER_OTHER_ERROR = 5, /* anything else thrown inside: its what() */
  STOKER_END = -1,        /* stoker_loader_next: the epoch is over */
  STOKER_NOT_YET = -2     /* stoker_loader_next: no batch within the limit (nothing consumed) */
};

/* The calls below are the library's only exported symbols (exports.map; the rest is built
 * hidden). */
#if defined(__GNUC__)
#define STOKER_API __attribute__((visibility("default")))
#else
#define STOKER_API
#endif

typedef struct stoker_object stoker_object;

typedef struct stoker_args {
  const char* json; /* a JSON object of named arguments; NULL: {} */
  size_t json_len;
  const char* data; /* bytes, for the calls that take them */
  size_t data_len;
  stoker_object* const* objects; /* the objects the call works on, in the order it names */
  size_t n_objects;
} stoker_args;

typedef struct stoker_out {
  char* json; /* a JSON value, or NULL; stoker_free */
  size_t json_len;
  char* data; /* bytes, or NULL; stoker_free */
  size_t data_len;
  stoker_object* object; /* a new object, or NULL; stoker_object_free */
} stoker_out;

STOKER_API int stoker_abi(void);
STOKER_API int stoker_call(const char* name, const stoker_args* args, stoker_out* out);
/* The text of this thread's last failed call (UTF-8; bytes of a file name that are not are
 * written as \xNN), its length in *len when len is not NULL. */
STOKER_API const char* stoker_last_error(size_t* len);
STOKER_API void stoker_free(void* p);
STOKER_API void stoker_object_free(stoker_object* o);

/* Page-locks the batch slots of a loader made with this object among its objects. pin:
 * 0 on success, else nonzero with a one-line reason in why (why_size bytes, NUL-ended).
 * Both are called on whatever thread makes or frees the slots, never after
 * stoker_callbacks_off(). */
typedef int (*stoker_pin_fn)(void* ctx, void* base, size_t bytes, char* why, size_t why_size);
typedef void (*stoker_unpin_fn)(void* ctx, void* base);
STOKER_API int stoker_pinner_new(stoker_pin_fn pin, stoker_unpin_fn unpin, void* ctx,
                                 const char* description, stoker_object** out);
/* No pinner callback runs after this (the caller's runtime is shutting down). */
STOKER_API void stoker_callbacks_off(void);

/* One batch, viewing its slot until stoker_batch_release(handle). With mixup_alpha or
 * cutmix_alpha each label is a float32 row of the classes (mixed one-hot targets). */
typedef struct stoker_batch {
  void* handle;
  void* data;              /* size samples of the loader's sample spec, contiguous */
  const void* labels;      /* size labels: int64, or rows (loader_info's label_dtype/shape) */
  const uint64_t* indices; /* size dataset indices */
  uint64_t size, epoch, number;
} stoker_batch;

/* The next batch of the loader's epoch (STOKER_OK), its end (STOKER_END), or STOKER_NOT_YET
 * when none came within limit_ns nanoseconds (< 0: no limit): nothing is consumed then, and
 * the next call waits for the same batch. */
STOKER_API int stoker_loader_next(stoker_object* loader, int64_t limit_ns, stoker_batch* out);
STOKER_API void stoker_batch_release(void* handle);

/* Indices first .. first+count-1 of the sampler's shard into out; *written: how many. */
STOKER_API int stoker_sampler_indices(stoker_object* sampler, uint64_t first, uint64_t count,
                                      uint64_t* out, uint64_t* written);

#ifdef __cplusplus
}
#endif

#endif /* STOKER_C_H */
