// SMT and GPU locality on generated topologies with crafted masks, and a real mask set on
// this process with sched_setaffinity and found by the doctor.
#include "doctor_fixture.hpp"
#include "stoker/doctor/doctor.hpp"
#include "topology_fixtures.hpp"

namespace stoker::doctor {
namespace {

using test::MaskGuard;

const Finding* find(const Report& r, const std::string& check) {
  for (const Finding& f : r.findings)
    if (f.check == check) return &f;
  return nullptr;
}

TEST(Smt, SiblingsInTheMaskAreReportedWithThePlansRule) {
  // 32 cores, core c = PUs c and c+32.
  Topology t = load_topology_xml_text(test::four_gpu_two_socket(true), "4gpu");
  Finding both = check_smt(t, CpuSet::parse("0-3,32-35"), false);
  EXPECT_EQ(both.check, "smt");
  EXPECT_EQ(both.severity, Severity::Info);
  EXPECT_NE(both.message.find("8 CPUs of the mask are 4 physical cores"), std::string::npos)
      << both.message;
  EXPECT_NE(both.message.find("SmtAsCores=no"), std::string::npos) << both.message;
  EXPECT_TRUE(both.fix.empty());
  Finding as_cores = check_smt(t, CpuSet::parse("0-3,32-35"), true);
  EXPECT_NE(as_cores.message.find("SmtAsCores=yes"), std::string::npos);
  EXPECT_FALSE(as_cores.fix.empty());
  // One thread per core: nothing shares.
  EXPECT_EQ(check_smt(t, CpuSet::parse("0-7"), false).severity, Severity::Ok);
  Topology flat = load_topology_xml_text(test::four_gpu_two_socket(false), "4gpu-nosmt");
  EXPECT_EQ(check_smt(flat, CpuSet::parse("0-31"), false).severity, Severity::Ok);
}

TEST(GpuLocality, GpuWithNoAllowedCoreNearItWarns) {
  Topology t = load_topology_xml_text(test::four_gpu_two_socket(false), "4gpu");
  const CpuSet socket0 = CpuSet::parse("0-15");
  Finding near = check_gpu_locality(t, socket0, {"0000:1a:00.0"});
  EXPECT_EQ(near.severity, Severity::Ok) << near.message;
  Finding far = check_gpu_locality(t, socket0, {"0000:88:00.0"});
  EXPECT_EQ(far.check, "gpu");
  EXPECT_EQ(far.severity, Severity::Warn);
  EXPECT_NE(far.message.find("0000:88:00.0 (NUMA 1, CPUs 16-31)"), std::string::npos)
      << far.message;
  // Every GPU of the node: the two on socket 1 are far, the two on socket 0 are not named.
  Finding all = check_gpu_locality(t, socket0, {});
  EXPECT_EQ(all.severity, Severity::Warn);
  EXPECT_NE(all.message.find("0000:b1:00.0"), std::string::npos);
  EXPECT_EQ(all.message.find("0000:1a:00.0"), std::string::npos);
  // One allowed core near the GPU is enough.
  EXPECT_EQ(check_gpu_locality(t, CpuSet::parse("0-15,16"), {"0000:88:00.0"}).severity,
            Severity::Ok);
  Topology cpu_only = load_topology_xml_text(test::cpu_only_single_numa(8, false), "cpu");
  EXPECT_EQ(check_gpu_locality(cpu_only, CpuSet::parse("0-7"), {}).message, "no GPU to check");
}

TEST(Doctor, RealCraftedMaskIsWhatTheChecksSee) {
  const CpuSet mask = current_cpu_mask();
  const CpuSet one = CpuSet::from_list({mask.first()});
  MaskGuard guard(one);
  ASSERT_TRUE(guard.ok()) << "sched_setaffinity failed";
  ASSERT_EQ(current_cpu_mask(), one);
  Report r = run_doctor({});
  const Finding* smt = find(r, "smt");
  ASSERT_NE(smt, nullptr);
  EXPECT_EQ(smt->severity, Severity::Ok);
  EXPECT_NE(smt->message.find("1 CPUs of the mask are 1 physical cores"), std::string::npos)
      << smt->message;
  const Finding* quota = find(r, "cpu_quota");
  ASSERT_NE(quota, nullptr);
  EXPECT_NE(quota->message.find("1 CPUs in the mask"), std::string::npos) << quota->message;
  const Finding* plan = find(r, "plan");
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(plan->severity, Severity::Ok) << plan->message;
  EXPECT_NE(plan->message.find("on CPUs " + one.to_string()), std::string::npos) << plan->message;
}

}  // namespace
}  // namespace stoker::doctor
