// A host folder that container tests mount into an image: the wheel package.wheel wrote
// (scripts/wheel.py), unpacked by tests/package/wheel_install.py into SHARE/stoker/site and
// SHARE/stoker/bin for the image's own /usr/bin/python3, and the probe the ranks run
// (SHARE/probe.py, tests/cluster/container_probe.py). The image stays as a site pulls it,
// with nothing of stoker. Under the cluster's jobs folder (not /tmp: n2 has a private one).
#pragma once

#include <string>

#include "cluster_harness.hpp"

namespace stoker::test {

struct WheelShare {
  bool no_wheel = false;  // package.wheel left none: the caller skips
  std::string problem;    // the install failed: the caller fails, with this
};

inline WheelShare prepare_wheel_share(const fs::path& share) {
  WheelShare w;
  const RunResult wheel = ClusterTest::run("ls " STOKER_PACKAGE_DIR "/stoker-*.whl | head -n 1");
  if (wheel.out.empty()) {
    w.no_wheel = true;
    return w;
  }
  fs::remove_all(share);
  fs::create_directories(share);
  fs::copy_file(STOKER_SOURCE_DIR "/tests/cluster/container_probe.py", share / "probe.py");
  const RunResult setup = ClusterTest::run(
      "python3 " STOKER_SOURCE_DIR "/tests/package/wheel_install.py " +
      wheel.out.substr(0, wheel.out.size() - 1) + " " + (share / "stoker" / "site").string() + " " +
      (share / "stoker" / "bin").string() + " /usr/bin/python3 >/dev/null");
  if (setup.rc != 0) w.problem = setup.out + setup.err;
  return w;
}

}  // namespace stoker::test
