// Writing a file so that readers see the old content or the whole new one, never half of it.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace relpos {

// A file relpos writes could not be written (disk full, read-only, removed under the run): the
// machine, not the input, so it exits with code 1, not 2. The message names the file.
struct WriteError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Writes `text` to <path>.tmp, checks the write, then renames it onto `path`. A failed write removes
// the .tmp file, leaves `path` as it was and throws WriteError naming the file ("... (disk full?)").
void write_file_atomic(const std::filesystem::path& path, const std::string& text);
// The same for several files at once: every one is written to its .tmp first, and only when all are
// complete are they renamed into place (a failure leaves every old file as it was).
void write_files_atomic(const std::vector<std::pair<std::filesystem::path, std::string>>& files);

// A symbolic link checked out or copied as a plain file (git with core.symlinks=false, an archive or a
// copy that does not keep links) holds the link's target as its whole text. Returns that text when
// `entry` is such a file (a regular file, not a link, under 4 KiB, one line, a relative path), else "".
std::string link_left_as_text(const std::filesystem::path& entry);

}  // namespace relpos
