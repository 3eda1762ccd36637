// Raw text -> the form of the bundled Multi30k training text (data/multi30k/tok/*.lc.norm.tok.*), so that
// `relpos translate` and `relpos eval` can take ordinary sentences. The bundled files were made with Moses
// lowercase.perl | normalize-punctuation.perl -l L | tokenizer.perl -l L; the rules here were derived by
// comparing the raw and the tokenized files line by line (data/multi30k/README.md, "Normalizing raw input",
// gives how many lines come out identical and the kinds of difference left).
#pragma once

#include <string>

namespace relpos {

// Lowercases (ASCII, the Latin-1 letters such as Ä Ö Ü É, and ẞ -> ß) and tokenizes one line of raw text
// the way the Multi30k files are: punctuation split off ("frau." -> "frau ."), except a period kept on an
// abbreviation or before a lowercase word; quotes unified to " („ “ ” and ’ or ‘ outside a word); en dash
// to "-"; hyphens inside words kept; apostrophes split ("woman's" -> "woman 's" for en, "woman ' s"
// otherwise); and the Moses XML escapes &amp; &lt; &gt; &apos; &quot; &#91; &#93; &#124;.
// `lang` is "de" or "en" (any other language gets the German rules, which are Moses' defaults).
// Invalid UTF-8 bytes are passed through as they are.
std::string normalize_like_multi30k(const std::string& line, const std::string& lang);

// True when a line looks already normalized: a Moses escape (&apos; &quot; &amp; &lt; &gt;) or a space
// before its final . ! ?. About 95% of the lines of the bundled tokenized files look so, and 1 in 2,000
// of the raw ones.
bool looks_tokenized(const std::string& line);

}  // namespace relpos
