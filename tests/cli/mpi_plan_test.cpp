// `mpirun -np 2 capsim plan` (registered only when CMake found MPI): the confirmations are
// sharded over two ranks, and the output is byte for byte the one-process output; rank 0 alone
// prints and writes the winner; bad input still exits 2, reported once. `capsim whatif` under
// mpirun runs on rank 0 only.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli/run_capsim.hpp"
#include "tests/test_paths.hpp"
#include <unistd.h>

namespace capsim {
namespace {

using capsim::testing::kTestDataDir;

namespace fs = std::filesystem;
using testing::CommandResult;

const std::string kBinary = CAPSIM_BINARY;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `command` through the shell with stdout captured and stderr written to `err`.
CommandResult run_shell(const std::string& command, const fs::path& err) {
  return testing::run_shell(command + " 2>" + err.string());
}

// `capsim plan ARGS` as 2 MPI ranks, each in its own folder DIR/rR (Open MPI as root and on
// fewer cores than ranks needs the variables; other MPIs ignore them).
std::string mpirun_plan(const fs::path& dir, const std::string& args) {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
         "OMPI_MCA_rmaps_base_oversubscribe=1 " CAPSIM_MPIEXEC " 2 sh -c 'd=" +
         dir.string() + "/r${OMPI_COMM_WORLD_RANK:-$PMI_RANK}; mkdir -p $d && cd $d && exec " +
         kBinary + " plan " + args + "'";
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1))
    ++n;
  return n;
}

// Per process, so that test runs of two build trees at once do not share it.
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / (name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(MpiPlanTest, TwoRanksGiveTheOneProcessBytes) {
  const fs::path dir = fresh_dir("capsim_mpi_plan");
  const std::string args = kTestDataDir + "/plans/small.json --json --top 0 --jobs 1";
  const CommandResult one = run_shell(
      "cd " + dir.string() + " && " + kBinary + " plan " + args + " --out-scenario one.json",
      dir / "one.err");
  const CommandResult two =
      run_shell(mpirun_plan(dir, args + " --out-scenario best.json"), dir / "two.err");
  ASSERT_EQ(one.exit_code, 0) << read_text(dir / "one.err");
  ASSERT_EQ(two.exit_code, 0) << read_text(dir / "two.err");
  EXPECT_EQ(two.out, one.out);
  // Both ranks confirmed (the probe on rank 0, the rest shared), and the engine was available.
  const auto j = nlohmann::json::parse(one.out);
  EXPECT_GE(j.at("search").at("confirmations").get<int>(), 2);
  EXPECT_TRUE(j.at("search").at("event_engine").get<bool>());
  // Rank 0 alone reports and writes the winner.
  EXPECT_EQ(count(read_text(dir / "two.err"), "capsim plan: screened"), 1u)
      << read_text(dir / "two.err");
  ASSERT_TRUE(fs::exists(dir / "r0" / "best.json"));
  EXPECT_EQ(read_text(dir / "r0" / "best.json"), read_text(dir / "one.json"));
  EXPECT_FALSE(fs::exists(dir / "r1" / "best.json"));
}

TEST(MpiPlanTest, BadInputExitsTwoReportedOnce) {
  const fs::path dir = fresh_dir("capsim_mpi_plan_bad");
  const CommandResult r =
      run_shell(mpirun_plan(dir, kTestDataDir + "/bad/plan_instance_unknown.json"), dir / "err");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  const std::string err = read_text(dir / "err");
  EXPECT_EQ(count(err, "capsim plan: error: "), 1u) << err;
  EXPECT_NE(err.find("unknown instance"), std::string::npos) << err;
}

// `capsim whatif` does not shard: under `mpirun -np 2` rank 0 alone runs it and prints one
// report, the one-process bytes.
TEST(MpiWhatIfTest, TwoRanksPrintOneReport) {
  const fs::path dir = fresh_dir("capsim_mpi_whatif");
  const std::string args = kTestDataDir + "/whatif/tiny.json --json";
  const CommandResult one = run_shell(kBinary + " whatif " + args, dir / "one.err");
  const CommandResult two = run_shell(
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
      "OMPI_MCA_rmaps_base_oversubscribe=1 " CAPSIM_MPIEXEC " 2 " +
          kBinary + " whatif " + args,
      dir / "two.err");
  ASSERT_EQ(one.exit_code, 0) << read_text(dir / "one.err");
  ASSERT_EQ(two.exit_code, 0) << read_text(dir / "two.err");
  EXPECT_EQ(two.out, one.out);
}

}  // namespace
}  // namespace capsim
