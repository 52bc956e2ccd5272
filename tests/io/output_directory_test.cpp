// A folder of output files: new, empty or holding the same files is taken; other files or other
// content is refused before anything is written.
#include "io/output_directory.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "tests/io/error_of.hpp"
#include <unistd.h>

namespace capsim::io {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class OutputDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("capsim_outdir_" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(OutputDirectoryTest, NewFolderIsCreatedWithTheFiles) {
  check_output_directory("--emit-dir", dir_.string(), {"a.txt", "b.txt"});
  EXPECT_FALSE(fs::exists(dir_));
  write_output_directory(dir_.string(), {{"a.txt", "A"}, {"b.txt", "B"}});
  EXPECT_EQ(read_text(dir_ / "a.txt"), "A");
  EXPECT_EQ(read_text(dir_ / "b.txt"), "B");
}

TEST_F(OutputDirectoryTest, SameFilesAreLeftOtherContentIsRefused) {
  write_output_directory(dir_.string(), {{"a.txt", "A"}});
  check_output_directory("--emit-dir", dir_.string(), {"a.txt", "b.txt"});
  write_output_directory(dir_.string(), {{"a.txt", "A"}, {"b.txt", "B"}});
  EXPECT_EQ(read_text(dir_ / "b.txt"), "B");
  EXPECT_EQ(testing::error_of([&] {
              write_output_directory(dir_.string(), {{"b.txt", "B"}, {"a.txt", "changed"}});
            }),
            (dir_ / "a.txt").string() +
                ": exists with other content; capsim does not overwrite it (remove it, or give "
                "an empty or new folder)");
  EXPECT_EQ(read_text(dir_ / "a.txt"), "A");
}

TEST_F(OutputDirectoryTest, OtherEntriesAndFilesAreRefused) {
  fs::create_directory(dir_);
  std::ofstream(dir_ / "notes.md") << "mine";
  EXPECT_EQ(
      testing::error_of([&] { check_output_directory("--emit-dir", dir_.string(), {"a.txt"}); }),
      dir_.string() +
          ": the folder holds notes.md, which this command does not write; give an empty "
          "or new folder (it writes a.txt)");
  const fs::path file = dir_ / "notes.md";
  EXPECT_EQ(
      testing::error_of([&] { check_output_directory("--emit-dir", file.string(), {"a.txt"}); }),
      file.string() + ": expected a folder for the launch files, got a file");
  EXPECT_NE(testing::error_of([&] {
              check_output_directory("--emit-dir", (dir_ / "no" / "such").string(), {"a.txt"});
            }).find("is not a folder"),
            std::string::npos);
}

}  // namespace
}  // namespace capsim::io
