// Output files: written whole or not at all, never through a link planted at a temporary's name,
// devices and pipes written directly, and what would fail after the work caught before it.
#include "io/output_files.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "io/input_error.hpp"
#include "tests/io/error_of.hpp"
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace capsim {
namespace {

namespace fs = std::filesystem;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

using testing::error_of;

bool is_link(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

mode_t file_type(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

// Each test works in a folder of its own, so that every file it leaves is visible.
class OutputFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("capsim_output_files_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  [[nodiscard]] std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // The names in the folder, sorted: temporaries left behind show up here.
  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& entry : fs::directory_iterator(dir_))
      out.push_back(entry.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path dir_;
};

TEST_F(OutputFilesTest, WritesAndReplacesAFileKeepingItsPermissions) {
  const std::string out = path("x.json");
  io::write_file_atomically(out, "first\n");
  EXPECT_EQ(read(out), "first\n");
  ASSERT_EQ(chmod(out.c_str(), 0640), 0);
  io::write_file_atomically(out, "second\n");
  EXPECT_EQ(read(out), "second\n");
  EXPECT_EQ(fs::status(out).permissions(), static_cast<fs::perms>(0640));
  EXPECT_EQ(names(), std::vector<std::string>{"x.json"});
}

// A temporary named after the process id could be predicted, and a link planted there followed:
// the write would land in the file the link points at.
TEST_F(OutputFilesTest, ALinkPlantedAtATemporaryNameIsNotFollowed) {
  const std::string victim = path("victim");
  write(victim, "keep");
  const std::string out = path("x.json");
  const std::string planted = out + ".capsim-" + std::to_string(getpid()) + ".tmp";
  fs::create_symlink(victim, planted);
  io::write_file_atomically(out, "written");
  EXPECT_EQ(read(victim), "keep");
  EXPECT_EQ(read(out), "written");
  EXPECT_TRUE(is_link(planted));
  EXPECT_EQ(names().size(), 3U);  // victim, x.json and the planted link: no temporary
}

// The choice for a link to a file: the file it points at is replaced, the link stays.
TEST_F(OutputFilesTest, ALinkToAFileKeepsTheLinkAndReplacesTheFile) {
  fs::create_directories(dir_ / "sub");
  write(path("sub/real.json"), "old");
  fs::create_symlink("sub/real.json", path("link.json"));
  fs::create_symlink("link.json", path("link-to-link.json"));
  io::write_file_atomically(path("link-to-link.json"), "new");
  EXPECT_TRUE(is_link(path("link.json")));
  EXPECT_TRUE(is_link(path("link-to-link.json")));
  EXPECT_EQ(read(path("sub/real.json")), "new");
  EXPECT_EQ(names(), (std::vector<std::string>{"link-to-link.json", "link.json", "sub"}));
  // A link to nothing yet creates the file it names.
  fs::create_symlink("made.json", path("dangling.json"));
  io::write_file_atomically(path("dangling.json"), "made");
  EXPECT_TRUE(is_link(path("dangling.json")));
  EXPECT_EQ(read(path("made.json")), "made");
}

TEST_F(OutputFilesTest, APipeIsWrittenDirectly) {
  const std::string fifo = path("pipe");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // A reader that is already open lets the write start; the text fits the pipe's buffer.
  const int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  io::write_file_atomically(fifo, "through the pipe\n");
  std::string got(64, '\0');
  const ssize_t n = ::read(reader, got.data(), got.size());
  close(reader);
  got.resize(n > 0 ? static_cast<size_t>(n) : 0);
  EXPECT_EQ(got, "through the pipe\n");
  EXPECT_EQ(file_type(fifo), static_cast<mode_t>(S_IFIFO));
  EXPECT_EQ(names(), std::vector<std::string>{"pipe"});
}

// /dev/stdout and /dev/fd/N name the process's own descriptors, written as they are (their
// /proc link text, "pipe:[123]", is no file to replace).
TEST_F(OutputFilesTest, ADescriptorNameWritesToTheDescriptor) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const std::string name = "/dev/fd/" + std::to_string(fds[1]);
  io::write_file_atomically(name, "one ");
  fs::create_symlink(name, path("to-the-pipe"));
  io::write_file_atomically(path("to-the-pipe"), "two");
  close(fds[1]);
  std::string got(64, '\0');
  const ssize_t n = ::read(fds[0], got.data(), got.size());
  close(fds[0]);
  got.resize(n > 0 ? static_cast<size_t>(n) : 0);
  EXPECT_EQ(got, "one two");
  EXPECT_TRUE(is_link(path("to-the-pipe")));
}

// Device nodes of this test's own (the null and full devices, Linux's major 1, minors 3 and 7):
// a regression replaces them, never /dev's. Creating them needs root (as CI runs).
TEST_F(OutputFilesTest, DeviceNodesAreWrittenDirectlyAndAFullOneFails) {
  const std::string null_node = path("null");
  const std::string full_node = path("full");
  if (mknod(null_node.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0 ||
      mknod(full_node.c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0)
    GTEST_SKIP() << "mknod needs root";
  const int probe = open(null_node.c_str(), O_WRONLY);
  if (probe < 0)
    GTEST_SKIP() << "device nodes cannot be opened here";
  close(probe);
  io::write_file_atomically(null_node, "discarded");
  EXPECT_EQ(file_type(null_node), static_cast<mode_t>(S_IFCHR));
  const std::string error = error_of([&] { io::write_file_atomically(full_node, "no room"); });
  EXPECT_EQ(error, full_node + ": cannot write file: No space left on device");
  EXPECT_EQ(file_type(full_node), static_cast<mode_t>(S_IFCHR));
  EXPECT_EQ(names(), (std::vector<std::string>{"full", "null"}));
}

// A device that fails (/dev/full, reached through a link in this folder so that a regression
// replaces the link, not the device) leaves the other outputs as they were.
TEST_F(OutputFilesTest, AFailedDeviceWriteReplacesNoFile) {
  if (file_type("/dev/full") != S_IFCHR)
    GTEST_SKIP() << "no /dev/full";
  write(path("a.json"), "old");
  fs::create_symlink("/dev/full", path("full"));
  const std::string error = error_of([&] {
    io::write_files_atomically(
        {{path("a.json"), "new"}, {path("b.json"), "new"}, {path("full"), "x"}});
  });
  EXPECT_EQ(error, path("full") + ": cannot write file: No space left on device");
  EXPECT_EQ(read(path("a.json")), "old");
  EXPECT_EQ(names(), (std::vector<std::string>{"a.json", "full"}));
  EXPECT_TRUE(is_link(path("full")));
}

// A write that fails half-way (here the file size limit) leaves neither the file nor a
// temporary, and names the file with the system's reason.
TEST_F(OutputFilesTest, AFailedWriteLeavesNoTemporary) {
  const std::string out = path("x.json");
  write(out, "old");
  // In a child process: the limit would stay for the other tests.
  const auto write_over_the_limit = [&] {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{4, 4};
    setrlimit(RLIMIT_FSIZE, &limit);
    const std::string error = error_of([&] { io::write_file_atomically(out, "longer than 4"); });
    return error == out + ": cannot write file: File too large" && read(out) == "old" &&
                   names() == std::vector<std::string>{"x.json"}
               ? 0
               : 1;
  };
  EXPECT_EXIT(std::exit(write_over_the_limit()), ::testing::ExitedWithCode(0), "");
}

// A name the system cannot take fails the check, before the work, not the write after it.
TEST_F(OutputFilesTest, CheckCatchesNamesTooLongForTheSystem) {
  const std::string too_long = path(std::string(300, 'n') + ".json");
  EXPECT_EQ(error_of([&] {
              io::check_output_path({"-o", too_long});
            }),
            too_long +
                ": cannot write file: its name has 305 bytes, more than the 255 a file "
                "name may have there");
  const std::string deep = path(std::string(5000, 'd'));
  EXPECT_NE(error_of([&] {
              io::check_output_path({"-o", deep});
            }).find("bytes, more than the 4095 a path"),
            std::string::npos);
  // A name near the limit is fine: the temporary's name is cut to fit beside it.
  const std::string long_name = path(std::string(250, 'n') + ".json");
  io::check_output_path({"-o", long_name});
  io::write_file_atomically(long_name, "fits");
  EXPECT_EQ(read(long_name), "fits");
  EXPECT_EQ(names().size(), 1U);
}

TEST_F(OutputFilesTest, CheckCatchesFoldersThatTakeNoFile) {
  EXPECT_EQ(error_of([&] {
              io::check_output_path({"-o", dir_.string()});
            }),
            dir_.string() + ": cannot write file: it is a folder");
  EXPECT_EQ(error_of([&] {
              io::check_output_path({"-o", path("none/x.json")});
            }),
            path("none/x.json") + ": cannot write file: no folder " + path("none"));
  EXPECT_EQ(error_of([&] {
              io::check_output_path({"-o", ""});
            }),
            "-o: an output file name is empty");
  EXPECT_EQ(error_of([&] {
              io::check_outputs({{"--report", ""}}, {});
            }),
            "--report: an output file name is empty");
  // As root every permission check passes, so the check runs as nobody in a child process.
  fs::create_directories(dir_ / "read-only");
  fs::create_directories(dir_ / "open");
  write(path("open/locked.json"), "locked");
  ASSERT_EQ(chmod(path("read-only").c_str(), 0555), 0);
  ASSERT_EQ(chmod(path("open").c_str(), 0777), 0);
  ASSERT_EQ(chmod(path("open/locked.json").c_str(), 0444), 0);
  const auto check_as_nobody = [&] {
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
      return 2;
    const std::string folder = error_of([&] {
      io::check_output_path({"-o", path("read-only/x.json")});
    });
    const std::string file = error_of([&] {
      io::check_output_path({"-o", path("open/locked.json")});
    });
    return folder == path("read-only/x.json") +
                           ": cannot write file: cannot create a file in folder " +
                           path("read-only") + " (Permission denied)" &&
                   file == path("open/locked.json") + ": cannot write file: it is read-only"
               ? 0
               : 1;
  };
  EXPECT_EXIT(std::exit(check_as_nobody()), ::testing::ExitedWithCode(0), "");
  EXPECT_EQ(names(), (std::vector<std::string>{"open", "read-only"}));
}

// One file named twice (directly, through "." or a link), or an output over an input, is
// refused before anything is written; devices may repeat.
TEST_F(OutputFilesTest, CheckOutputsRefusesOneFileTwiceAndInputs) {
  const std::string x = path("x.json");
  const std::string same = (dir_ / "." / "x.json").string();
  fs::create_symlink("x.json", path("link.json"));
  for (const std::string& other : {same, path("link.json")}) {
    EXPECT_EQ(error_of([&] {
                io::check_outputs({{"-o", x}, {"--report", other}}, {});
              }),
              other +
                  ": cannot write file: -o and --report name the same file; give each output "
                  "its own");
  }
  write(x, "exists");
  fs::create_hard_link(x, path("hard.json"));
  EXPECT_NE(error_of([&] {
              io::check_outputs({{"-o", x}, {"--report", path("hard.json")}}, {});
            }),
            "no error");
  EXPECT_EQ(error_of([&] {
              io::check_outputs({{"--trace", same}}, {{"the scenario", x}});
            }),
            same + ": cannot write file: --trace names an input of the command (the scenario " + x +
                "); write the output elsewhere");
  EXPECT_EQ(error_of([&] {
              io::check_outputs({{"-o", x}, {"--report", path("r.html")}},
                                {{"the input", path("in.txt")}, {"the profile", ""}});
            }),
            "no error");
  EXPECT_EQ(error_of([&] {
              io::check_outputs({{"--trace", "/dev/null"}, {"--report", "/dev/null"}}, {});
            }),
            "no error");
  EXPECT_EQ(names(), (std::vector<std::string>{"hard.json", "link.json", "x.json"}));
}

}  // namespace
}  // namespace capsim
