// The thread that keeps the metrics file fresh, and the atomic rewrite it uses.
#include <fcntl.h>
#include <unistd.h>

#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "stoker/common/error.hpp"
#include "stoker/common/launch_env.hpp"
#include "stoker/common/values.hpp"
#include "stoker/loader/metrics.hpp"
#include "topology/thread_start.hpp"

namespace stoker {

namespace {

constexpr double kDefaultIntervalSeconds = 5.0;

std::chrono::duration<double> interval_from_environment() {
  const std::string name = "STOKER_METRICS_INTERVAL";
  const auto v = process_env()(name);
  if (!v || v->empty()) return std::chrono::duration<double>(kDefaultIntervalSeconds);
  const auto s = values::parse_decimal(*v);  // plain decimals only: no hex, inf or nan
  if (!s || !(*s > 0) || *s > 86400)
    throw_garbled_env(name, *v, "seconds, a decimal above 0 and at most 86400, e.g. 5 or 0.5");
  return std::chrono::duration<double>(*s);
}

std::string replace_all(std::string text, const std::string& key, const std::string& value) {
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
    text.replace(at, key.size(), value);
  return text;
}

// "{rank}" and "{job}" in the path become the rank and the Slurm job id ("nojob" outside
// Slurm), so every rank of every job can share one setting in one textfile folder.
std::string expand_path(const std::string& path, const MetricLabels& labels) {
  return replace_all(replace_all(path, "{rank}", labels.rank), "{job}",
                     labels.job_id.empty() ? "nojob" : labels.job_id);
}

double unix_seconds_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// What to do when the metrics file cannot be written.
const char* const kTodo = "point STOKER_METRICS at a writable folder (the textfile collector's)";

}  // namespace

void write_file_atomically(const std::string& path, const std::string& text,
                           const std::string& todo) {
  // A temporary of its own per call: two writers of one path (two loaders given the same
  // STOKER_METRICS, in one process or two) must not write into each other's half a file. Made
  // fresh (mkostemp: O_CREAT | O_EXCL, so never through a link) under a name no one can guess:
  // a textfile folder is shared, and a record folder may hold what its user planted.
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) throw Error(tmp, std::string("cannot create: ") + std::strerror(errno), todo);
  // Readable by node-exporter (another user) whatever the job's umask (077 would hide it).
  (void)::fchmod(fd, 0644);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error(tmp, std::string("cannot write: ") + std::strerror(err), todo);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw Error(path, std::string("cannot replace: ") + std::strerror(err));
  }
}

MetricsWriter::MetricsWriter(std::string path, MetricLabels labels, Snapshot snapshot,
                             std::chrono::duration<double> interval)
    : path_(std::move(path)),
      labels_(std::move(labels)),
      snapshot_(std::move(snapshot)),
      interval_(interval) {
  if (path_.empty()) throw Error("metrics path", "is empty", "name the file to write");
  if (!(interval_.count() > 0))
    throw Error("metrics interval", "must be above 0 seconds", "e.g. 5 seconds");
  write_file_atomically(path_, prometheus_text(snapshot_(), labels_, unix_seconds_now()), kTodo);
  writes_ = 1;
  thread_ = start_thread("the metrics writer thread (STOKER_METRICS)", "unset STOKER_METRICS",
                         [this] { run(); });
}

MetricsWriter::~MetricsWriter() {
  if (made_in_.forked()) {  // the thread is the parent's
    if (thread_.joinable()) thread_.detach();
    (void)cv_.release();
    return;
  }
  stop();
}

void MetricsWriter::run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_->wait_for(lock, interval_, [this] { return stopping_; })) {
    lock.unlock();
    write_now();
    lock.lock();
  }
}

void MetricsWriter::write_now() {
  std::lock_guard<std::mutex> one_at_a_time(write_mu_);
  bool ok = true;
  try {
    write_file_atomically(path_, prometheus_text(snapshot_(), labels_, unix_seconds_now()), kTodo);
  } catch (const Error&) {
    ok = false;  // a full disk must not stop training; failures() tells
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++(ok ? writes_ : failures_);
}

void MetricsWriter::flush() {
  write_now();
}

void MetricsWriter::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_->notify_all();
  if (thread_.joinable()) thread_.join();
  write_now();  // the final numbers
}

uint64_t MetricsWriter::writes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return writes_;
}

uint64_t MetricsWriter::failures() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failures_;
}

std::unique_ptr<MetricsWriter> MetricsWriter::from_environment(Snapshot snapshot,
                                                               std::optional<uint64_t> rank) {
  const std::optional<std::string> path = env_nonempty(process_env(), "STOKER_METRICS");
  if (!path) return nullptr;
  MetricLabels labels = MetricLabels::from_environment(rank);
  return std::make_unique<MetricsWriter>(expand_path(*path, labels), std::move(labels),
                                         std::move(snapshot), interval_from_environment());
}

}  // namespace stoker
