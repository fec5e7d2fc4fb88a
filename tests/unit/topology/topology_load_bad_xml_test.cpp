// Unreadable or invalid topology files give stoker::Error naming the file, never a crash.
#include <gtest/gtest.h>

#include "stoker/common/error.hpp"
#include "stoker/topology/topology.hpp"
#include "temp_tree.hpp"
#include "topology_fixtures.hpp"

namespace stoker {
namespace {

void expect_error_naming(const std::string& path, const std::string& problem) {
  try {
    load_topology_xml(path);
    ADD_FAILURE() << "no error for " << path;
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), path);
    EXPECT_NE(e.problem().find(problem), std::string::npos) << e.what();
    EXPECT_FALSE(e.todo().empty());
  }
}

TEST(BadXml, MissingFile) {
  expect_error_naming("/nonexistent/stoker/topo.xml", "cannot read the topology file");
}

TEST(BadXml, Directory) {
  test::TempTree tree;
  expect_error_naming(tree.root(), "");
}

TEST(BadXml, GarbageAndEmpty) {
  test::TempTree tree;
  tree.write("garbage.xml", "this is \x01\x02 not xml at all <<<");
  tree.write("empty.xml", "");
  tree.write("wrong.xml", "<?xml version=\"1.0\"?><html><body/></html>");
  expect_error_naming(tree.path("garbage.xml"), "not a valid hwloc XML topology");
  expect_error_naming(tree.path("empty.xml"), "not a valid hwloc XML topology");
  expect_error_naming(tree.path("wrong.xml"), "not a valid hwloc XML topology");
}

TEST(BadXml, TruncatedAtEveryTenthOfTheFile) {
  test::TempTree tree;
  std::string xml = test::four_gpu_two_socket(true);
  for (int tenth = 1; tenth < 10; ++tenth) {
    tree.write("t.xml", xml.substr(0, xml.size() * tenth / 10));
    expect_error_naming(tree.path("t.xml"), "");
  }
}

// hwloc 2.9 crashed (SEGV in hwloc_bitmap_compare_first) on an object with a cpuset but no
// complete_cpuset: found by the fuzz target hwloc_xml; stoker now refuses such a file first.
TEST(FaultsBadXml, AnObjectWithoutItsCompleteSetIsRefusedNotACrash) {
  test::TempTree tree;
  const std::string xml = test::four_gpu_two_socket(true);
  for (const std::string attribute : {"complete_cpuset=", "complete_nodeset="}) {
    SCOPED_TRACE(attribute);
    const size_t at = xml.rfind(attribute);
    ASSERT_NE(at, std::string::npos);
    std::string broken = xml;
    broken.replace(at, attribute.size(), "renamed_attribute=");
    tree.write("broken.xml", broken);
    expect_error_naming(tree.path("broken.xml"),
                        "has a " + attribute.substr(9, attribute.size() - 10) + " but no " +
                            attribute.substr(0, attribute.size() - 1));
    EXPECT_THROW(load_topology_xml_text(broken, "broken"), Error);
  }
  EXPECT_NO_THROW(load_topology_xml_text(xml, "whole"));
}

TEST(BadXml, TextLoaderNamesItsSource) {
  try {
    load_topology_xml_text("<topology>", "fixture-x");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "fixture-x");
  }
}

}  // namespace
}  // namespace stoker
