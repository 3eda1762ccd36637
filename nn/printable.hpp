// User text (a config value, an override, a path, a token of input) as an error message shows it.
#pragma once

#include <string>

namespace relpos::nn {

// `text` with every byte a terminal would not show as itself escaped, so that an error message is one
// visible line: control bytes (U+0000-U+001F, U+007F) and bytes that are not part of valid UTF-8 become
// \xNN ("1\x01", "caf\xE9"); the C1 controls (U+0080-U+009F), the line and paragraph separators and the
// bidirectional formatting characters (U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) become \uNNNN.
// Everything else, valid UTF-8 included, is kept as it is; text that needs no escape comes back unchanged.
std::string printable(const std::string& text);

}  // namespace relpos::nn
