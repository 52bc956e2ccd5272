// Launch scripts and argument files as bash reads them: continuations, comments, quotes,
// arrays and variables.
#include "io/launch_script.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/io/error_of.hpp"

namespace capsim::io {
namespace {

std::vector<std::string> texts(const std::vector<ScriptWord>& words) {
  std::vector<std::string> out;
  for (const ScriptWord& w : words)
    out.push_back(w.text);
  return out;
}

TEST(LaunchScriptTest, ArgumentFileGivesEveryWord) {
  const auto words =
      launch_arguments("# comment\n--num-layers 32 --bf16\n\n--lr 1e-4 # why\n", "a");
  EXPECT_EQ(texts(words),
            (std::vector<std::string>{"--num-layers", "32", "--bf16", "--lr", "1e-4"}));
  EXPECT_EQ(words[0].line, 2);
  EXPECT_EQ(words[3].line, 4);
}

TEST(LaunchScriptTest, ScriptGivesTheProgramsArguments) {
  const std::string script =
      "#!/bin/bash\n"
      "TP=8\n"
      "export PP=${PP:-4}\n"
      "MODEL=(\n"
      "  --num-layers 96  # the depth\n"
      "  --hidden-size \"12288\"\n"
      ")\n"
      "declare -a EXTRA=(--sequence-parallel)\n"
      "EXTRA+=(--bf16)\n"
      "torchrun --nproc_per_node 8 pretrain_gpt.py \\\n"
      "    ${MODEL[@]} \\\n"
      "    --tensor-model-parallel-size $TP --pipeline-model-parallel-size=${PP} \\\n"
      "    ${EXTRA[@]} --data-path '$DATA'\n"
      "echo done\n";
  const auto words = launch_arguments(script, "train.sh");
  EXPECT_EQ(texts(words),
            (std::vector<std::string>{"--num-layers", "96", "--hidden-size", "12288",
                                      "--tensor-model-parallel-size", "8",
                                      "--pipeline-model-parallel-size=4", "--sequence-parallel",
                                      "--bf16", "--data-path", "$DATA"}));
  EXPECT_EQ(words[0].line, 5);   // where the array element is written
  EXPECT_EQ(words[4].line, 12);  // after a continuation
  for (const ScriptWord& w : words)
    EXPECT_TRUE(w.unresolved.empty()) << w.text;  // '$DATA' is quoted text
}

TEST(LaunchScriptTest, UnsetVariablesStayAsWrittenAndNamed) {
  const auto words = launch_arguments(
      "N=$1\nW=$((N*8))\npython pretrain_gpt.py --a $TP --b ${N} --c $W --d \"$(date)\"\n", "s");
  ASSERT_EQ(words.size(), 8u);
  EXPECT_EQ(words[1].text, "$TP");
  EXPECT_EQ(words[1].unresolved, std::vector<std::string>{"TP"});
  EXPECT_EQ(words[3].unresolved, std::vector<std::string>{"1"});
  EXPECT_EQ(words[5].unresolved, std::vector<std::string>{"$((...))"});
  EXPECT_EQ(words[7].unresolved, std::vector<std::string>{"$(...)"});
}

TEST(LaunchScriptTest, BareExpansionsSplitQuotedOnesDoNot) {
  const auto words = launch_arguments("A=\"--x 1\"\npython t.py $A \"$A\" --y \"\"\n", "s");
  EXPECT_EQ(texts(words), (std::vector<std::string>{"--x", "1", "--x 1", "--y", ""}));
}

// bash expands "${A[@]}" of an empty array to no field, unlike "" or "$S" of an empty string.
TEST(LaunchScriptTest, QuotedEmptyArrayIsNoField) {
  const auto words = launch_arguments("A=(\n)\nS=\npython t.py --x \"${A[@]}\" --y \"$S\"\n", "s");
  EXPECT_EQ(texts(words), (std::vector<std::string>{"--x", "--y", ""}));
}

TEST(LaunchScriptTest, RedirectionsAreNotArguments) {
  const auto words = launch_arguments("python pretrain_gpt.py --bf16 2>&1 | tee log.txt\n", "s");
  EXPECT_EQ(texts(words), (std::vector<std::string>{"--bf16"}));
  EXPECT_EQ(
      texts(launch_arguments("python train.py --a 1 > out.log 2>> err.log &> all.log\n", "s")),
      (std::vector<std::string>{"--a", "1"}));
}

// Data preparation and checkpoint conversion run beside training in one script.
TEST(LaunchScriptTest, TheTrainingProgramIsChosen) {
  EXPECT_EQ(texts(launch_arguments("python tools/preprocess_data.py --input x\n"
                                   "torchrun pretrain_gpt.py --bf16\n"
                                   "python tools/checkpoint/convert.py --load y\n",
                                   "s")),
            (std::vector<std::string>{"--bf16"}));
  EXPECT_EQ(texts(launch_arguments("python prepare.py --a\npython run.py --b\n", "s")),
            (std::vector<std::string>{"--b"}));
}

TEST(LaunchScriptTest, UnterminatedQuotesAreNamedWithTheirLine) {
  EXPECT_EQ(testing::error_of([] { (void)launch_arguments("--a 1\n--b \"x\n", "f.args"); }),
            "f.args:line 2: unterminated double quote (its closing one is missing)");
  EXPECT_EQ(testing::error_of([] { (void)launch_arguments("--a 'x", "f.args"); }),
            "f.args:line 1: unterminated single quote (its closing one is missing)");
  EXPECT_EQ(testing::error_of([] { (void)launch_arguments("A=(\n--x\n", "f.sh"); }),
            "f.sh:line 1: unterminated array A=( (its closing parenthesis is missing)");
}

}  // namespace
}  // namespace capsim::io
