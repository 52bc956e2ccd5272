#pragma once

#include <string>
#include <utility>
#include <vector>

namespace capsim {

// Output files of every command: checked before the work, written whole or not at all.

// Throws InputError naming `path` unless a file could be written there: a non-empty name, not
// a folder, in a folder that exists. Commands call it before their work, so a long run does not
// end in an error about its output.
void check_output_path(const std::string& path);

// Writes `text` to `path` atomically (temp file + rename), so a failure never leaves a
// half-written file; throws InputError naming the path when it cannot.
void write_file_atomically(const std::string& path, const std::string& text);
// Writes several files so that either all are written or none is (each to a temporary first,
// renamed into place once every one was written); throws InputError naming the file.
void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace capsim
