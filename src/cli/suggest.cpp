#include "suggest.hpp"

#include <algorithm>
#include <cctype>

namespace spikeforge::cli {

std::size_t editDistance(const std::string& a, const std::string& b) {
    const auto lower = [](char c) { return std::tolower(static_cast<unsigned char>(c)); };
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + cost});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::string closestName(const std::string& name, const std::vector<std::string>& candidates) {
    // A plausible typo changes at most a third of a long name; short names may differ in two
    // characters. A candidate that shares nothing with the name is never suggested.
    const std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
    std::string best;
    std::size_t bestDistance = limit + 1;
    for (const std::string& candidate : candidates) {
        const std::size_t d = editDistance(name, candidate);
        if (d < bestDistance && d < std::max(name.size(), candidate.size())) {
            best = candidate;
            bestDistance = d;
        }
    }
    return best;
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

} // namespace spikeforge::cli
