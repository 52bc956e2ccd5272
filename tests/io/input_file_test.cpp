#include "io/input_file.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "io/input_error.hpp"
#include "io/json_reader.hpp"
#include <sys/stat.h>
#include <unistd.h>

namespace capsim {
namespace {

std::string error_of(const std::string& path, io::InputKind kind) {
  try {
    (void)io::read_input_file(path, kind);
  } catch (const io::InputError& e) {
    return e.what();
  }
  return "no error";
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / name).string();
}

TEST(InputFileTest, ReadsARegularFileWhole) {
  const std::string path = temp_path("input_file_test_small.json");
  std::ofstream(path, std::ios::binary) << std::string("{\"a\": 1}\n");
  EXPECT_EQ(io::read_input_file(path, io::InputKind::kJson), "{\"a\": 1}\n");
  std::filesystem::remove(path);
}

TEST(InputFileTest, MissingFileAndFolderAreNamed) {
  EXPECT_EQ(error_of("/nonexistent/x.json", io::InputKind::kJson),
            "/nonexistent/x.json: cannot open file");
  const std::string dir = ::testing::TempDir();
  EXPECT_EQ(error_of(dir, io::InputKind::kJson), dir + ": is a folder, not a file");
}

// A device never ends (reading /dev/zero would grow to gigabytes until bad_alloc) and a FIFO blocks
// until a writer comes: both are refused before a byte is read.
TEST(InputFileTest, DevicesAndFifosAreRefused) {
  EXPECT_EQ(error_of("/dev/zero", io::InputKind::kJson),
            "/dev/zero: is not a regular file (a FIFO, device or socket); capsim reads its "
            "inputs from files");
  const std::string fifo = temp_path("input_file_test_fifo");
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(error_of(fifo, io::InputKind::kJobTrace),
            fifo +
                ": is not a regular file (a FIFO, device or socket); capsim reads its inputs "
                "from files");
  EXPECT_THROW((void)io::JsonReader::parse_file(fifo), io::InputError);
  std::filesystem::remove(fifo);
}

// The size is checked before reading: a sparse file one byte over the limit costs no memory.
TEST(InputFileTest, FilesBeyondTheirKindsLimitAreRefused) {
  const std::string path = temp_path("input_file_test_large");
  for (const auto& [kind, name] : {std::pair{io::InputKind::kJson, "a JSON input"},
                                   std::pair{io::InputKind::kLog, "a log or table"},
                                   std::pair{io::InputKind::kJobTrace, "a job trace"}}) {
    std::filesystem::remove(path);
    std::ofstream(path, std::ios::binary) << "x";
    std::filesystem::resize_file(path, io::max_input_bytes(kind) + 1);
    EXPECT_EQ(error_of(path, kind),
              path + ": is larger than " + std::to_string(io::max_input_bytes(kind) >> 20) +
                  " MiB, the most " + name + " may hold (docs/scenario.md, \"Input files\")");
  }
  // At the limit a file is read (its bytes are the file's: zeros here).
  std::filesystem::resize_file(path, io::max_input_bytes(io::InputKind::kLog));
  EXPECT_EQ(io::read_input_file(path, io::InputKind::kLog).size(),
            io::max_input_bytes(io::InputKind::kLog));
  std::filesystem::remove(path);
}

TEST(InputFileTest, JobTracesMayBeLargerThanJsonInputs) {
  EXPECT_EQ(io::max_input_bytes(io::InputKind::kJson), std::size_t{64} << 20);
  EXPECT_GT(io::max_input_bytes(io::InputKind::kJobTrace),
            io::max_input_bytes(io::InputKind::kJson));
}

}  // namespace
}  // namespace capsim
