#pragma once

#include <string>
#include <vector>

namespace capsim::cli {

// One git-style subcommand: `capsim <name> ...`. run() gets the arguments after the name
// (argv[0] is "capsim <name>") and returns the exit code: 0 ok, 2 bad input, 1 internal error.
struct Command {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);
};

int run_simulate(int argc, char** argv);
int run_validate(int argc, char** argv);
int run_calibrate(int argc, char** argv);
int run_plan(int argc, char** argv);
int run_whatif(int argc, char** argv);
int run_import(int argc, char** argv);
int run_export(int argc, char** argv);

// Every subcommand, in the order `capsim --help` lists them.
[[nodiscard]] const std::vector<Command>& commands();

}  // namespace capsim::cli
