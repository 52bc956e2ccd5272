#pragma once

#include <string>
#include <vector>

namespace capsim::io {

// One word of a training program's argument list and where it came from.
struct ScriptWord {
  std::string text;
  int line = 0;  // 1-based line of the file
  // Shell variables the word names that the file does not set ("TP" for $TP, "1" for $1,
  // "$(...)" for a command substitution); their text is left in `text` as written.
  std::vector<std::string> unresolved;
};

// Returns the arguments a Megatron-LM launch script or argument file passes to the training
// program. A script (a line running a `.py` program, e.g. `torchrun ... pretrain_gpt.py ...`)
// gives the words after the program (the first training program, pretrain*.py or train*.py,
// else the last program run, redirections left out); any other file gives all its words. Lines
// continued with a backslash are joined, `#` comments dropped, quotes removed, and variables the
// file assigns
// (`TP=8`, `ARGS=( ... )`, `export X=...`) expanded as bash would (`$TP`, `${TP}`,
// `${ARGS[@]}`). Throws InputError naming `file` and the line for an unterminated quote.
[[nodiscard]] std::vector<ScriptWord> launch_arguments(const std::string& text,
                                                       const std::string& file);

}  // namespace capsim::io
