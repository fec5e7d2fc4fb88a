// MPI loaded at run time (mpi_api.hpp), and the check that Open MPI can start.
//
// Why a check before MPI_Init_thread, and why this one. Open MPI 4.1 (Debian 12's, and the
// 4.1 in NVIDIA's HPC-X) cannot make a failed MPI_Init non-fatal: before init no error
// handler can be set (MPI 4.0's sessions and MPI_Comm_set_errhandler before init came with
// Open MPI 5), so a failure prints "An error occurred in MPI_Init_thread ...
// MPI_ERRORS_ARE_FATAL" and ends the process with exit 1. Three ways were weighed:
//  - MPI_Init in a short-lived child first: under srun --mpi=pmix or mpirun the child would
//    register with the PMIx server as this very rank and enter the job's wire-up fence (the
//    modex) twice; a fork of a threaded Python process may deadlock, and MPI_Init costs
//    0.1-1 s per rank. Rejected.
//  - catching the exit (atexit, longjmp): undefined behaviour. Rejected.
//  - checking what Open MPI needs and a bare or half-copied image lacks (chosen): its
//    libmpi.so.40 and the libraries it links (the dlopen below fails with dlerror's text),
//    every function and handle stoker uses (dlsym), and its MCA components, which it
//    dlopens at MPI_Init from its compiled-in folder pkglibdir (moved with OPAL_PREFIX or
//    OPAL_PKGLIBDIR, as Open MPI documents for relocated installs): libmpi copied or
//    mounted without its installation (as seen in a container image) fails there, in
//    ess/pmix selection. The folder is read from libopen-pal's own record of it, the
//    "config" installdirs component (the same strings `ompi_info --path pkglibdir` prints),
//    expanded with Open MPI's OPAL_* overrides; Open MPI 3.x/4.x need mca_ess_pmi.so (how a
//    launched rank finds its place) and a mca_pmix_*.so there, unless built statically.
//    Cost, only on ranks launched under MPI (measured on Debian 12, Open MPI 4.1.4, 2 cores):
//    detect_world() takes about 4.5 ms for the dlopen and this check, 1-2 ms when there is
//    no libmpi, against about 0.5 s for MPI_Init_thread itself (a singleton). `import
//    stoker` loads no libmpi at all (about 22 ms, was 25 ms with libmpi linked).
//  What this cannot see (a complete Open MPI that still fails, e.g. a PMIx server of an
//  incompatible version) stays fatal, as it is for any MPI program on that cluster.
#include "mpi_api.hpp"

#ifdef STOKER_HAVE_MPI
#include <dirent.h>
#include <dlfcn.h>
#include <link.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>

namespace stoker::distributed {

namespace {

// Open MPI's installdirs fields, in opal_install_dirs_t's order (opal/mca/installdirs).
constexpr std::array<const char*, 17> kInstallDirs = {
    "prefix",  "exec_prefix", "bindir",         "sbindir",       "libexecdir",   "datarootdir",
    "datadir", "sysconfdir",  "sharedstatedir", "localstatedir", "libdir",       "includedir",
    "infodir", "mandir",      "pkgdatadir",     "pkglibdir",     "pkgincludedir"};
constexpr size_t kPkglibdir = 15;

// Whether [p, p+n) lies in a readable loaded segment of the object that holds `anchor`.
struct Segments {
  uintptr_t base = 0;  // the object's load address
  const void* anchor = nullptr;
  std::array<std::pair<uintptr_t, uintptr_t>, 16> ranges{};
  size_t count = 0;
};

int collect_segments(dl_phdr_info* info, size_t, void* data) {
  auto* s = static_cast<Segments*>(data);
  const auto a = reinterpret_cast<uintptr_t>(s->anchor);
  std::array<std::pair<uintptr_t, uintptr_t>, 16> ranges{};
  size_t n = 0;
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum && n < ranges.size(); ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_R)) continue;
    const uintptr_t lo = info->dlpi_addr + ph.p_vaddr, hi = lo + ph.p_memsz;
    ranges[n++] = {lo, hi};
    holds = holds || (a >= lo && a < hi);
  }
  if (!holds) return 0;
  s->ranges = ranges;
  s->count = n;
  return 1;
}

bool readable(const Segments& s, uintptr_t p, size_t n) {
  for (size_t i = 0; i < s.count; ++i) {
    if (p >= s.ranges[i].first && p + n <= s.ranges[i].second) return true;
  }
  return false;
}

// The compiled-in install folders, from libopen-pal's "config" installdirs component (the
// struct ends with opal_install_dirs_t: 17 string pointers in Open MPI 3.x and 4.x). Each
// pointer is checked to lie in the library's readable segments and to name a path before it
// is used; nullopt when the layout is not the one expected.
std::optional<std::array<std::string, 17>> compiled_install_dirs(void* handle) {
  void* component = dlsym(handle, "mca_installdirs_config_component");
  Dl_info info;
  void* entry = nullptr;  // the symbol's ElfW(Sym)
  if (!component || !dladdr1(component, &info, &entry, RTLD_DL_SYMENT) || !entry) {
    return std::nullopt;
  }
  const auto* sym = static_cast<const ElfW(Sym)*>(entry);
  if (sym->st_size < kInstallDirs.size() * sizeof(char*)) {
    return std::nullopt;
  }
  Segments segs;
  segs.anchor = component;
  if (!dl_iterate_phdr(collect_segments, &segs)) return std::nullopt;
  const auto* words = reinterpret_cast<const uintptr_t*>(
      static_cast<const char*>(component) + sym->st_size - kInstallDirs.size() * sizeof(char*));
  std::array<std::string, 17> dirs;
  for (size_t i = 0; i < dirs.size(); ++i) {
    const uintptr_t p = words[i];
    if (!p || !readable(segs, p, 1)) return std::nullopt;
    const char* text = reinterpret_cast<const char*>(p);
    size_t n = 0;  // a path of at most 4095 bytes, all inside the segment
    while (n < 4096 && readable(segs, p + n, 1) && text[n]) ++n;
    if (n == 0 || n == 4096 || text[n] != '\0' || (text[0] != '/' && text[0] != '$')) {
      return std::nullopt;
    }
    dirs[i] = std::string(text, n);
  }
  return dirs;
}

template <typename Fn>
Fn resolve(void* handle, const char* name, std::string* missing) {
  void* p = dlsym(handle, name);
  if (!p && missing->empty()) *missing = name;
  return reinterpret_cast<Fn>(p);
}

std::mutex g_mutex;
std::optional<MpiApi> g_api;
void* g_handle = nullptr;

std::string library_name(const EnvGetter& env) {
  if (auto v = env_nonempty(env, "STOKER_MPI_LIBRARY")) return *v;
  return kMpiLibrary;
}

}  // namespace

std::string expand_install_dir(const std::string& value,
                               const std::function<std::string(const std::string&)>& dirs) {
  std::string out = value;
  for (int depth = 0; depth < 16; ++depth) {  // ${a} may name ${b}: a few rounds, no cycles
    const size_t open = out.find("${");
    if (open == std::string::npos) return out;
    const size_t close = out.find('}', open);
    if (close == std::string::npos) return out;
    out.replace(open, close + 1 - open, dirs(out.substr(open + 2, close - open - 2)));
  }
  return out;
}

std::string open_mpi_components_missing(const std::string& version, const std::string& pkglibdir) {
  // Open MPI 5 builds its components into its libraries by default and has no ess or pmix
  // framework: only 3.x and 4.x (HPC-X 2.x) are checked.
  if (version.rfind("Open MPI v3.", 0) != 0 && version.rfind("Open MPI v4.", 0) != 0) return "";
  DIR* dir = opendir(pkglibdir.c_str());
  if (!dir) {
    return "Open MPI's components folder " + pkglibdir + " is missing (" + std::strerror(errno) +
           "; OPAL_PREFIX names a moved installation)";
  }
  bool ess = false, pmix = false;
  while (const dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    ess = ess || name == "mca_ess_pmi.so";
    pmix = pmix || (name.rfind("mca_pmix_", 0) == 0 && name.size() > 12 &&
                    name.compare(name.size() - 3, 3, ".so") == 0);
  }
  closedir(dir);
  if (ess && pmix) return "";
  return "Open MPI's components folder " + pkglibdir + " has no " +
         (ess ? "mca_pmix_*.so" : "mca_ess_pmi.so") + ": Open MPI is not completely installed here";
}

const MpiApi* mpi_api(const EnvGetter& env, bool load, std::string* why) {
  std::lock_guard lock(g_mutex);
  if (g_api) return &*g_api;
  const std::string name = library_name(env);
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_GLOBAL | (load ? 0 : RTLD_NOLOAD));
  if (!handle) {
    if (load) {
      const char* e = dlerror();
      *why = e ? e : name + ": cannot be loaded";
    }
    return nullptr;
  }
  MpiApi api;
  std::string missing;
  // Each function by its MPI name: api.Init_thread from "MPI_Init_thread", and so on.
#define STOKER_MPI_RESOLVE(f) api.f = resolve<decltype(api.f)>(handle, "MPI_" #f, &missing)
  STOKER_MPI_RESOLVE(Init_thread);
  STOKER_MPI_RESOLVE(Initialized);
  STOKER_MPI_RESOLVE(Finalized);
  STOKER_MPI_RESOLVE(Finalize);
  STOKER_MPI_RESOLVE(Abort);
  STOKER_MPI_RESOLVE(Comm_dup);
  STOKER_MPI_RESOLVE(Comm_free);
  STOKER_MPI_RESOLVE(Comm_rank);
  STOKER_MPI_RESOLVE(Comm_size);
  STOKER_MPI_RESOLVE(Comm_split_type);
  STOKER_MPI_RESOLVE(Iallgather);
  STOKER_MPI_RESOLVE(Ibcast);
  STOKER_MPI_RESOLVE(Isend);
  STOKER_MPI_RESOLVE(Irecv);
  STOKER_MPI_RESOLVE(Test);
  STOKER_MPI_RESOLVE(Waitall);
  STOKER_MPI_RESOLVE(Get_library_version);
  STOKER_MPI_RESOLVE(Query_thread);
  STOKER_MPI_RESOLVE(Is_thread_main);
#undef STOKER_MPI_RESOLVE
  // The handles mpi.h's OMPI_PREDEFINED_GLOBAL makes of these objects' addresses. Looked up
  // in the global scope first: an executable that links libmpi and names MPI_COMM_WORLD
  // (the example trainer) holds a copy of the object (a copy relocation) that libmpi itself
  // uses; libmpi's own definition, which dlsym(handle) finds, is then never initialised
  // (measured: MPI_Comm_size on it crashed). libmpi is in the global scope (RTLD_GLOBAL).
  const auto object = [handle](const char* symbol) {
    void* p = dlsym(RTLD_DEFAULT, symbol);
    return p ? p : dlsym(handle, symbol);
  };
  api.comm_world = static_cast<MPI_Comm>(object("ompi_mpi_comm_world"));
  api.comm_null = static_cast<MPI_Comm>(object("ompi_mpi_comm_null"));
  api.byte = static_cast<MPI_Datatype>(object("ompi_mpi_byte"));
  api.uint64 = static_cast<MPI_Datatype>(object("ompi_mpi_uint64_t"));
  api.info_null = static_cast<MPI_Info>(object("ompi_mpi_info_null"));
  if (missing.empty()) {
    const std::pair<const void*, const char*> handles[] = {{api.comm_world, "ompi_mpi_comm_world"},
                                                           {api.comm_null, "ompi_mpi_comm_null"},
                                                           {api.byte, "ompi_mpi_byte"},
                                                           {api.uint64, "ompi_mpi_uint64_t"},
                                                           {api.info_null, "ompi_mpi_info_null"}};
    for (const auto& [p, symbol] : handles) {
      if (!p && missing.empty()) missing = symbol;
    }
  }
  if (!missing.empty()) {
    *why = name + " has no " + missing + " (not Open MPI's ABI)";
    dlclose(handle);
    return nullptr;
  }
  g_handle = handle;
  g_api = api;
  return &*g_api;
}

std::string thread_level_problem(const MpiApi& api, int provided) {
  if (provided >= MPI_THREAD_SERIALIZED) return "";
  int main = 0;
  api.Is_thread_main(&main);
  if (provided == MPI_THREAD_FUNNELED && main) return "";
  const char* level = provided == MPI_THREAD_FUNNELED ? "MPI_THREAD_FUNNELED" : "MPI_THREAD_SINGLE";
  return std::string("MPI provides ") + level + ", and stoker " +
         (provided == MPI_THREAD_FUNNELED
              ? "calls MPI from another thread than MPI's main thread: it needs "
                "MPI_THREAD_SERIALIZED there"
              : "runs threads beside the one that calls MPI: it needs MPI_THREAD_FUNNELED");
}

std::string mpi_start_problem(const MpiApi& api, const EnvGetter& env) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  api.Get_library_version(version, &length);  // allowed before MPI_Init (MPI 3.0, 8.1.1)
  if (dlsym(g_handle, "mca_ess_pmi_component")) return "";  // components built in
  std::string pkglibdir;
  if (auto v = env_nonempty(env, "OPAL_PKGLIBDIR")) {
    pkglibdir = *v;
  } else {
    const auto dirs = compiled_install_dirs(g_handle);
    if (!dirs) return "";  // another layout: Open MPI's own start decides
    std::function<std::string(const std::string&)> lookup = [&](const std::string& field) {
      for (size_t i = 0; i < kInstallDirs.size(); ++i) {
        if (field != kInstallDirs[i]) continue;
        std::string upper = field;
        for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        const auto over = env_nonempty(env, "OPAL_" + upper);  // installdirs' env component
        return expand_install_dir(over ? *over : (*dirs)[i], lookup);
      }
      return std::string();
    };
    pkglibdir = lookup(kInstallDirs[kPkglibdir]);
  }
  return open_mpi_components_missing(std::string(version, std::strlen(version)), pkglibdir);
}

}  // namespace stoker::distributed
#endif
