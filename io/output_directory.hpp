#pragma once

#include <string>
#include <utility>
#include <vector>

namespace capsim::io {

// A folder of output files (`capsim plan --emit DIR`): checked before the work, then written
// whole or not at all. A folder that exists may hold only files the command writes, each with
// the text it would write again: re-running the same command leaves it as it is, and nothing a
// user put there is overwritten.

// Throws InputError naming `dir` (by `role` when empty) unless the files `names` could be
// written there: `dir` does not exist and its parent folder takes a new folder, or it is a
// folder that holds no entries but files of `names`.
void check_output_directory(const std::string& role, const std::string& dir,
                            const std::vector<std::string>& names);

// Writes `files` (name, text) into `dir`, creating it when missing: throws InputError naming the
// file when one exists with other text, before writing anything; files with the same text are
// left as they are; the others are written with write_files_atomically. A folder this call
// created is removed again when the writing fails.
void write_output_directory(const std::string& dir,
                            const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace capsim::io
