// The one scoring policy of relpos: what the metrics bleu and bleu_tok mean for a run, used alike by the
// runner (results.json), the report (per-sentence statistics for the bootstrap and length buckets) and
// `relpos eval`.
//
//   bleu_tok  the hypotheses against the references in the form the model was trained on (tokenized,
//             lowercased text for data.tokenized), with no further tokenization. The figure papers on
//             small tokenized translation corpora report.
//   bleu      sacreBLEU's 13a against the raw references. A model trained on lowercased Moses-tokenized
//             text is scored after undoing the Moses escapes and apostrophe splits, case-insensitively
//             (signature case:lc); without a full Moses detokenizer this is close to, not equal to, the
//             number a detokenizing pipeline would get.
//
// `tokenized_text`: the run reads lowercased Moses-tokenized text (tasks/task.hpp: reads_tokenized_text).
#pragma once

#include <string>
#include <vector>

#include "experiments/eval/bleu.hpp"

namespace relpos {

bool is_bleu_metric(const std::string& metric);  // bleu | bleu_tok

// The BLEU options of a metric (bleu_tok: no tokenization; bleu: 13a, lowercased for tokenized text).
BleuOptions bleu_options(const std::string& metric, bool tokenized_text);
// The hypotheses as the metric scores them (bleu of tokenized text: Moses tokenization undone).
std::vector<std::string> bleu_hypotheses(const std::string& metric, std::vector<std::string> hyps, bool tokenized_text);
// Corpus BLEU of a metric against the references it is scored against (bleu_tok: the tokenized
// references; bleu: the raw ones).
BleuResult score_bleu(const std::string& metric, const std::vector<std::string>& hyps,
                      const std::vector<std::string>& refs, bool tokenized_text);
// The same per sentence (for paired bootstrap and length buckets).
std::vector<BleuStats> sentence_bleu(const std::string& metric, const std::vector<std::string>& hyps,
                                     const std::vector<std::string>& refs, bool tokenized_text);

// Per-position accuracy in %: reference tokens (whitespace-separated) matched by the hypothesis token
// at the same position, over all reference tokens; a short hypothesis misses its missing positions and
// extra hypothesis tokens count as errors in the denominator (max of the two lengths per sentence).
double token_accuracy(const std::vector<std::string>& hyps, const std::vector<std::string>& refs);

// Undoes Moses' XML escapes and English apostrophe splits ("it 's" -> "it's") for 13a scoring.
std::string moses_untokenize(const std::string& tokenized);

}  // namespace relpos
