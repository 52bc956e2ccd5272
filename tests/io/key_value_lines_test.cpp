// The strict reader of slurm.conf-style key=value lines.
#include "io/key_value_lines.hpp"

#include <gtest/gtest.h>

#include "tests/io/error_of.hpp"

namespace capsim::io {
namespace {

using capsim::testing::error_of;

TEST(KeyValueLinesTest, ReadsPairsCommentsContinuationsAndQuotes) {
  const auto lines = read_key_value_lines(
      "# power saving\nSuspendTime=600   # seconds\n\nNodeName=a[1-2] \\\n  Gres=gpu:8\n"
      "ResumeProgram=\"/opt/my scripts/resume.sh\"\n",
      "slurm.conf");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].line, 2);
  EXPECT_EQ(lines[0].pairs[0].key, "SuspendTime");
  EXPECT_EQ(lines[0].pairs[0].value, "600");
  EXPECT_EQ(lines[1].line, 4);
  ASSERT_EQ(lines[1].pairs.size(), 2u);
  EXPECT_EQ(lines[1].pairs[1].value, "gpu:8");
  EXPECT_EQ(lines[2].pairs[0].value, "/opt/my scripts/resume.sh");
}

TEST(KeyValueLinesTest, RejectsWithFileAndLine) {
  EXPECT_EQ(error_of([] { (void)read_key_value_lines("A=1\nB 2\n", "s.conf"); }),
            "s.conf:line 2: expected Key=Value, got \"B\"");
  EXPECT_EQ(error_of([] { (void)read_key_value_lines("A=\n", "s.conf"); }),
            "s.conf:line 1: A: empty value");
  EXPECT_EQ(error_of([] { (void)read_key_value_lines("A=\"x\n", "s.conf"); }),
            "s.conf:line 1: A: unterminated double quote");
  EXPECT_EQ(error_of([] { (void)read_key_value_lines("Include /etc/slurm/x.conf\n", "s.conf"); }),
            "s.conf:line 1: Include lines are not read; inline the included file");
  EXPECT_EQ(error_of([] { (void)read_key_value_lines("=1\n", "s.conf"); }),
            "s.conf:line 1: a value without a key (\"=\" at column 1)");
}

}  // namespace
}  // namespace capsim::io
