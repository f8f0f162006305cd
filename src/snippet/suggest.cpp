#include "snippet/suggest.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

namespace spikeforge {

std::size_t editDistance(const std::string& a, const std::string& b, bool ignoreCase) {
    // Optimal string alignment: insertions, deletions, substitutions and swaps of two
    // neighbouring characters ("cdua" is one edit from "cuda") each cost 1.
    const auto same = [&](std::size_t i, std::size_t j) {
        if (!ignoreCase) return a[i] == b[j];
        return std::tolower(static_cast<unsigned char>(a[i])) ==
               std::tolower(static_cast<unsigned char>(b[j]));
    };
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i)
        d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j)
        d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            d[i][j] = std::min(
                {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (same(i - 1, j - 1) ? 0 : 1)});
            if (i > 1 && j > 1 && same(i - 1, j - 2) && same(i - 2, j - 1))
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    }
    return d[a.size()][b.size()];
}

std::string closestName(const std::string& name, const std::vector<std::string>& candidates) {
    // A plausible typo changes at most a third of a long name; short names may differ in two
    // characters. A candidate that shares nothing with the name is never suggested. Ties are
    // broken by the case-sensitive distance ("Lifx" suggests "Lif" before "LIF").
    const std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
    std::string best;
    std::pair<std::size_t, std::size_t> bestScore{limit + 1, 0};
    for (const std::string& candidate : candidates) {
        if (candidate == name) continue;
        const std::pair<std::size_t, std::size_t> score{editDistance(name, candidate, true),
                                                        editDistance(name, candidate, false)};
        if (score < bestScore && score.first < std::max(name.size(), candidate.size())) {
            best = candidate;
            bestScore = score;
        }
    }
    return best;
}

std::string didYouMean(const std::string& name, const std::vector<std::string>& candidates) {
    const std::string close = closestName(name, candidates);
    return close.empty() ? "" : " (did you mean '" + close + "'?)";
}

std::string quotedList(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) {
        if (!out.empty()) out += ", ";
        out += "'" + n + "'";
    }
    return out;
}

std::string suggestion(const std::string& name, const std::vector<std::string>& candidates) {
    if (candidates.empty()) return " (none are defined)";
    const std::string close = closestName(name, candidates);
    if (!close.empty()) return " (did you mean '" + close + "'?)";
    return " (expected one of: " + quotedList(candidates) + ")";
}

} // namespace spikeforge
