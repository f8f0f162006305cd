// The snippet front end: size limits, then lexer → parser → checker (see parser.hpp); the
// printer lives in printer.cpp.
#include "snippet/scanner.hpp"

#include "snippet/parser.hpp"
#include "snippet/tokeniser.hpp"

#include <algorithm>
#include <cstddef>

namespace spikeforge::snippet {

namespace {

// Levenshtein distance extended with adjacent transpositions (optimal string alignment), so
// the commonest typo, two swapped letters ("tua" for "tau"), costs one edit rather than two.
std::size_t editDistance(const std::string& a, const std::string& b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i)
        d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j)
        d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    }
    return d[a.size()][b.size()];
}

} // namespace

Scanned scan(const std::string& code, const Context& ctx) {
    if (code.size() > kMaxSnippetBytes)
        throw ModelError(ctx.group + "." + ctx.field + ": the code is " +
                         std::to_string(code.size()) + " bytes long; snippets are limited to " +
                         std::to_string(kMaxSnippetBytes) + " bytes");
    Scanned out;
    out.precision = ctx.precision;
    out.expression = ctx.expression;
    out.lines = 1 + static_cast<int>(std::count(code.begin(), code.end(), '\n'));
    out.tokens = detail::tokenise(code, ctx);
    auto program = detail::parse(out.tokens, ctx);
    detail::check(*program, ctx, out);
    out.program = std::move(program);
    return out;
}

std::string closestName(const std::string& name, const std::vector<std::string>& candidates) {
    const std::size_t limit = std::max<std::size_t>(1, name.size() / 3);
    std::string best;
    std::size_t bestDistance = limit + 1;
    for (const std::string& c : candidates) {
        if (c == name) continue;
        const std::size_t d = editDistance(name, c);
        // Strictly less: on a tie the earlier candidate wins.
        if (d < bestDistance) {
            bestDistance = d;
            best = c;
        }
    }
    return best;
}

} // namespace spikeforge::snippet
