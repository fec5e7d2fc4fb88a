// The Python stack: package roots by path, the rule on crafted module maps, the real
// interpreter of this machine, and a real mix made with PYTHONPATH.
#include "doctor_fixture.hpp"
#include "stoker/common/error.hpp"
#include "stoker/doctor/doctor.hpp"

namespace stoker::doctor {
namespace {

using test::DoctorDir;
using test::EnvGuard;

TEST(PythonRoots, KindsByPath) {
  PackageRoot deb = package_root("/usr/lib/python3/dist-packages/torch/__init__.py");
  EXPECT_EQ(deb.path, "/usr/lib/python3/dist-packages");
  EXPECT_EQ(deb.kind, "Debian package");
  EXPECT_EQ(package_root("/usr/local/lib/python3.11/dist-packages/numpy/__init__.py").kind,
            "pip, system Python");
  EXPECT_EQ(package_root("/home/u/.local/lib/python3.11/site-packages/PIL/__init__.py").kind,
            "pip --user");
  EXPECT_EQ(package_root("/opt/venv/lib/python3.11/site-packages/torch/__init__.py").path,
            "/opt/venv/lib/python3.11/site-packages");
  EXPECT_EQ(package_root("/opt/miniconda3/lib/python3.11/site-packages/numpy/__init__.py").kind,
            "conda");
  PackageRoot src = package_root("/src/numpy/numpy/__init__.py");
  EXPECT_EQ(src.path, "/src/numpy");
  EXPECT_EQ(src.kind, "PYTHONPATH or a source tree");
}

TEST(PythonSources, OneRootIsOkMixedWarnsMissingIsInfo) {
  const std::string deb = "/usr/lib/python3/dist-packages/";
  Finding same = check_python_sources({{"torch", deb + "torch/__init__.py"},
                                       {"numpy", deb + "numpy/__init__.py"},
                                       {"PIL", deb + "PIL/__init__.py"}});
  EXPECT_EQ(same.check, "python");
  EXPECT_EQ(same.severity, Severity::Ok) << same.message;
  Finding mixed =
      check_python_sources({{"torch", "/usr/local/lib/python3.11/dist-packages/torch/__init__.py"},
                            {"numpy", deb + "numpy/__init__.py"},
                            {"PIL", deb + "PIL/__init__.py"}});
  EXPECT_EQ(mixed.severity, Severity::Warn);
  EXPECT_NE(mixed.message.find("torch from /usr/local/lib/python3.11/dist-packages (pip"),
            std::string::npos)
      << mixed.message;
  EXPECT_NE(mixed.message.find("(Debian package)"), std::string::npos) << mixed.message;
  EXPECT_FALSE(mixed.fix.empty());
  Finding missing = check_python_sources({{"torch", std::nullopt}, {"numpy", deb + "numpy/x.py"}});
  EXPECT_EQ(missing.severity, Severity::Info);
  EXPECT_NE(missing.message.find("not installed: torch"), std::string::npos);
}

const char* kPython = "/usr/bin/python3";

TEST(PythonSources, RealInterpreterOfThisMachine) {
  if (access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " is not installed";
  EnvGuard no_path("PYTHONPATH", std::nullopt);
  auto files = python_module_files(kPython);
  ASSERT_EQ(files.size(), 3u);
  if (!files["numpy"]) GTEST_SKIP() << "numpy is not installed for " << kPython;
  // What Python itself says, through a different route (importing the module).
  EXPECT_NE(files["numpy"]->find("numpy/__init__.py"), std::string::npos) << *files["numpy"];
  Finding f = check_python_sources(files);
  EXPECT_NE(f.severity, Severity::Error) << f.message;
}

TEST(PythonSources, RealMixMadeWithPythonpath) {
  if (access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " is not installed";
  DoctorDir dir;
  // A numpy that shadows the installed one, as a stray PYTHONPATH or a pip --target would.
  dir.write("site-packages/numpy/__init__.py", "");
  EnvGuard path("PYTHONPATH", dir.file("site-packages"));
  auto files = python_module_files(kPython);
  ASSERT_TRUE(files["numpy"].has_value());
  EXPECT_EQ(*files["numpy"], dir.file("site-packages/numpy/__init__.py"));
  if (!files["torch"] && !files["PIL"]) GTEST_SKIP() << "neither torch nor PIL is installed";
  Finding f = check_python_sources(files);
  EXPECT_EQ(f.severity, Severity::Warn) << f.message;
  EXPECT_NE(f.message.find(dir.file("site-packages")), std::string::npos) << f.message;
}

TEST(PythonSources, MissingInterpreterThrowsAndTheDoctorReportsIt) {
  EXPECT_THROW(python_module_files("/nonexistent/python3"), Error);
  Options o;
  o.python = true;
  o.python_exe = "/nonexistent/python3";
  Report r = run_doctor(o);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings.back().check, "python");
  EXPECT_EQ(r.findings.back().severity, Severity::Error);
  EXPECT_EQ(r.exit_code(), 1);
}

}  // namespace
}  // namespace stoker::doctor
