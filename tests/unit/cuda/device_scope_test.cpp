// DeviceScope and the CUDA engine's use of the caller's current device, on simulated devices
// (sim_devices.hpp: a current device per thread, primary contexts made by cudaSetDevice
// under CUDA 12 and by the first use before). The same on real GPUs needs two of them
// (gpu.FaultsFeederOrder.FeedingGpu1MakesNoContextOnGpu0, gpu.FaultsFeeder.Pinning...).
#include <gtest/gtest.h>

#if STOKER_HAVE_CUDA
#include <functional>
#include <thread>

#include "cuda/copy_engine.hpp"
#include "gpu_probe.hpp"
#include "sim_devices.hpp"
#include "stoker/common/error.hpp"

namespace stoker {
namespace {

using cuda::DeviceScope;
using test::SimDevices;

// torch built for CUDA 11.8 runs on an H200: there cudaSetDevice makes no context, so a
// device the caller chose but has not used yet has none, and the scope, which restored only
// devices with a context, left the caller on the feeder's GPU.
TEST(FaultsDeviceScope, UnderCuda11ADeviceChosenButNotUsedYetIsRestored) {
  SimDevices devices(2, /*cuda12=*/false);
  devices.set(1);
  {
    DeviceScope on(0, "GPU 0");
    devices.use();  // stoker's call
  }
  EXPECT_EQ(devices.current(), 1) << "the caller's choice was lost";
  EXPECT_FALSE(devices.context(1)) << "restoring made a context";
}

// A thread that never chose a device reads device 0. Under CUDA 12 restoring it would make
// GPU 0's context (hundreds of MiB on every rank), so the thread stays on the scope's device;
// before CUDA 12 it is restored, which makes nothing.
TEST(DeviceScope, AThreadThatNeverChoseADeviceGetsNoContextOnGpu0) {
  for (bool cuda12 : {true, false}) {
    SimDevices devices(2, cuda12);
    std::thread([&] {
      {
        DeviceScope on(1, "GPU 1");
        devices.use();
      }
      EXPECT_EQ(devices.current(), cuda12 ? 1 : 0) << "CUDA 12: " << cuda12;
    }).join();
    EXPECT_FALSE(devices.context(0)) << "CUDA 12: " << cuda12;
    EXPECT_TRUE(devices.context(1));
  }
}

TEST(DeviceScope, ADeviceInUseIsRestored) {
  for (bool cuda12 : {true, false}) {
    SimDevices devices(2, cuda12);
    devices.set(1);
    devices.use();
    {
      DeviceScope on(0, "GPU 0");
      EXPECT_EQ(devices.current(), 0);
      devices.use();
    }
    EXPECT_EQ(devices.current(), 1) << "CUDA 12: " << cuda12;
    EXPECT_EQ(devices.take_sets(), (std::vector<int>{1, 0, 1}));
  }
}

TEST(DeviceScope, TheCallersOwnDeviceIsNotSetAgain) {
  SimDevices devices(2, true);
  devices.set(1);
  devices.take_sets();
  { DeviceScope on(1, "GPU 1"); }
  EXPECT_EQ(devices.take_sets(), std::vector<int>{});
}

TEST(DeviceScope, ADeviceThatCannotBeSetIsAnErrorNamingTheGpuAndTheCallerStays) {
  SimDevices devices(2, true);
  devices.set(1);
  try {
    DeviceScope on(5, "GPU 0000:99:00.0");
    FAIL() << "a scope on a device that does not exist";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "GPU 0000:99:00.0");
    EXPECT_NE(e.problem().find("cudaSetDevice"), std::string::npos) << e.what();
  }
  EXPECT_EQ(devices.current(), 1);
}

// The default-stream handles name the default stream of the device the caller works on;
// the engine's calls, in its own scope, would take its device's one instead. A caller on
// GPU 1 passing one to a GPU 0 batch (wait_on(nullptr)) got a wait queued on GPU 0's default
// stream, which its kernels on GPU 1 do not run on: the engine took every such handle as its
// own.
TEST(FaultsCudaEngine, ADefaultStreamHandleOfAnotherDevicesCallerIsNotTheEngines) {
  SimDevices devices(2, true);
  std::shared_ptr<CopyEngine> engine = make_cuda_engine(0, "GPU 0");
  const CopyEngine::Stream handles[] = {nullptr, cudaStreamLegacy, cudaStreamPerThread};
  devices.set(1);
  for (CopyEngine::Stream s : handles) EXPECT_FALSE(engine->on_device(s)) << s;
  devices.set(0);
  for (CopyEngine::Stream s : handles) EXPECT_TRUE(engine->on_device(s)) << s;
  EXPECT_EQ(devices.current(), 0);
}

// Each call of the CUDA engine runs on its device and leaves the caller's as it was, also
// when the call fails (on this machine every runtime call fails: there is no driver).
TEST(CudaEngine, EachCallRunsOnTheEnginesDeviceAndLeavesTheCallersDevice) {
  if (test::machine_has_gpu()) GTEST_SKIP() << "a GPU would run the calls; tests/gpu do";
  SimDevices devices(2, true);
  std::shared_ptr<CopyEngine> engine = make_cuda_engine(1, "GPU 1");
  std::byte host[64] = {};
  const std::vector<std::function<void()>> calls = {
      [&] { engine->create_stream(); },
      [&] { engine->create_event(true); },
      [&] { engine->free_bytes(nullptr); },
      [&] { engine->allocate(256); },
      [&] { engine->copy(nullptr, host, sizeof host, nullptr); },
      [&] { engine->record(nullptr, nullptr); },
      [&] { engine->stream_wait(nullptr, nullptr); },
      [&] { engine->done(nullptr); },
      [&] { engine->wait(nullptr); },
      [&] { engine->elapsed_ms(nullptr, nullptr); },
      [&] { engine->synchronize(nullptr); },
      [&] { engine->synchronize_device(); },
  };
  devices.set(0);
  devices.use();
  devices.take_sets();
  for (size_t i = 0; i < calls.size(); ++i) {
    try {
      calls[i]();
    } catch (const Error& e) {
      EXPECT_EQ(e.where(), "GPU 1") << "call " << i;
    }
    EXPECT_EQ(devices.take_sets(), (std::vector<int>{1, 0})) << "call " << i;
    EXPECT_EQ(devices.current(), 0) << "call " << i;
  }
}

// The feeder's engine on GPU 1, used from a thread that never chose a device (a worker, or
// the main thread of a rank that never called cudaSetDevice): GPU 0 gets no context.
TEST(CudaEngine, OnGpu1FromAThreadThatNeverChoseADeviceMakesNoContextOnGpu0) {
  if (test::machine_has_gpu()) GTEST_SKIP() << "a GPU would run the calls; tests/gpu do";
  SimDevices devices(2, true);
  std::shared_ptr<CopyEngine> engine = make_cuda_engine(1, "GPU 1");
  std::thread([&] {
    for (int i = 0; i < 3; ++i) {
      try {
        engine->synchronize_device();
      } catch (const Error&) {
      }
    }
  }).join();
  EXPECT_EQ(devices.take_sets(), std::vector<int>{1}) << "one switch, nothing restored";
  EXPECT_FALSE(devices.context(0));
}

}  // namespace
}  // namespace stoker
#endif  // STOKER_HAVE_CUDA
