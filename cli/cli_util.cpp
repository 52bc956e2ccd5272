#include "cli/cli_util.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "models/io/input_error.hpp"

namespace capsim::cli {

int guarded(const char* command, const std::function<int()>& body) {
  try {
    return body();
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s: error: %s\n", command, e.what());
    return 2;
  } catch (const cxxopts::exceptions::exception& e) {
    std::fprintf(stderr, "%s: error: %s (see %s --help)\n", command, e.what(), command);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", command, e.what());
    return 1;
  }
}

bool parse_or_help(cxxopts::Options& options, int argc, char** argv, cxxopts::ParseResult& result) {
  options.add_options()("h,help", "show this help");
  result = options.parse(argc, argv);
  if (result.count("help") > 0) {
    std::cout << options.help() << std::flush;
    return false;
  }
  // Arguments beyond the positional ones the command takes would otherwise go unread.
  if (!result.unmatched().empty())
    throw InputError("", "", "unexpected argument \"" + result.unmatched().front() + "\"");
  return true;
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      throw InputError(path, "", "cannot write file");
    out << text;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw InputError(path, "", "cannot write file");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw InputError(path, "", "cannot write file: " + ec.message());
  }
}

}  // namespace capsim::cli
