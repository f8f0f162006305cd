#pragma once
// "Did you mean" suggestions: the one rule for every diagnostic (snippets, model, runtime, CLI).
#include <cstddef>
#include <string>
#include <vector>

namespace spikeforge {

// Edit distance between two strings (Levenshtein plus swaps of neighbours).
std::size_t editDistance(const std::string& a, const std::string& b, bool ignoreCase = true);

// The candidate closest to `name`, or "" when none is close enough to be a plausible typo (a
// candidate equal to `name` is no suggestion).
std::string closestName(const std::string& name, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" when a candidate is close, otherwise "".
std::string didYouMean(const std::string& name, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" when a candidate is close, otherwise " (expected one of: 'a', 'b')"
// (or " (none are defined)" when there are no candidates).
std::string suggestion(const std::string& name, const std::vector<std::string>& candidates);

// 'a', 'b', 'c'
std::string quotedList(const std::vector<std::string>& names);

} // namespace spikeforge
