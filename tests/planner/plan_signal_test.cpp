// `capsim plan` stopped by a signal while it confirms: it ends by that signal, no child process
// of it outlives it, and it leaves nothing in its TMPDIR.
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli/capsim_process.hpp"
#include "tests/cli/run_capsim.hpp"
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace capsim {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A fresh private TMPDIR.
fs::path fresh_tmpdir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / (name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Starts the default plan (39 confirmations, two at a time), sends `signal` to the plan alone
// or to its whole process group (a terminal's Ctrl-C) once it confirms, and checks that it ends
// by that signal, that its children end with it, and that its TMPDIR stays empty.
void expect_clean_stop(int signal, bool to_group, const std::string& name) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);  // the plan's orphans become this test's
  const fs::path tmpdir = fresh_tmpdir(name);
  testing::CapsimProcess plan({"plan", "--jobs", "2", "--json"}, tmpdir.string());
  const std::set<pid_t> children = plan.first_children();
  ASSERT_FALSE(children.empty()) << "the plan ended before it confirmed anything";
  ASSERT_EQ(kill(to_group ? -plan.pid() : plan.pid(), signal), 0);
  const int status = plan.wait();
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), signal);
  EXPECT_TRUE(testing::all_end_within_a_second(children)) << "a child outlived the plan";
  EXPECT_TRUE(fs::is_empty(tmpdir)) << "left in TMPDIR: " << fs::directory_iterator(tmpdir)->path();
  fs::remove_all(tmpdir);
}

TEST(PlanSignalTest, SigtermLeavesNoChildAndNoFiles) {
  expect_clean_stop(SIGTERM, false, "capsim_plan_sigterm");
}

TEST(PlanSignalTest, CtrlCToTheGroupLeavesNoChildAndNoFiles) {
  expect_clean_stop(SIGINT, true, "capsim_plan_sigint");
}

TEST(PlanSignalTest, SighupLeavesNoChildAndNoFiles) {
  expect_clean_stop(SIGHUP, false, "capsim_plan_sighup");
}

// SIGKILL runs no code in the plan: the kernel ends its children (their parent-death signal).
TEST(PlanSignalTest, SigkillLeavesNoChildAndNoFiles) {
  expect_clean_stop(SIGKILL, false, "capsim_plan_sigkill");
}

// A child killed from outside (as the kernel's OOM killer would) fails its confirmation: the
// plan still reports, lists the failure, and exits 3.
TEST(PlanSignalTest, AKilledChildIsReportedAndTheExitCodeIsThree) {
  const fs::path dir = fresh_tmpdir("capsim_plan_killed_child");
  const fs::path out = dir / "plan.json";
  // The kill can miss a child that has just ended; a few tries make that vanishingly rare.
  for (int attempt = 0; attempt < 5; ++attempt) {
    testing::CapsimProcess plan({"plan", "--jobs", "1", "--json"}, dir.string(), out.string());
    std::set<pid_t> children = plan.first_children();
    std::erase_if(children, testing::is_zombie);
    if (children.empty())
      continue;
    ASSERT_EQ(kill(*children.begin(), SIGKILL), 0);
    const int status = plan.wait();
    ASSERT_TRUE(WIFEXITED(status));
    const nlohmann::json j = nlohmann::json::parse(read_text(out));
    if (!j.contains("confirmation_failures"))
      continue;
    EXPECT_EQ(WEXITSTATUS(status), 3);
    ASSERT_EQ(j.at("confirmation_failures").size(), 1u);
    EXPECT_EQ(j.at("confirmation_failures")[0].at("error"), "killed by signal 9 (Killed)");
    EXPECT_EQ(j.at("search").at("failed_confirmations"), 1);
    fs::remove_all(dir);
    return;
  }
  FAIL() << "no child could be killed while it ran";
}

// Confirmations need no temporary folder: a TMPDIR that cannot be written changes nothing.
TEST(PlanSignalTest, UnwritableTmpdirChangesNothing) {
  const std::string args = "plan " + std::string(CAPSIM_TEST_DATA_DIR) + "/plans/small.json --json";
  const testing::CommandResult normal = testing::run_capsim(args);
  const testing::CommandResult unwritable = testing::run_shell(
      "TMPDIR=/nonexistent/capsim " + std::string(CAPSIM_BINARY) + " " + args + " 2>/dev/null");
  ASSERT_EQ(normal.exit_code, 0);
  EXPECT_EQ(unwritable.exit_code, 0);
  EXPECT_EQ(unwritable.out, normal.out);
}

}  // namespace
}  // namespace capsim
