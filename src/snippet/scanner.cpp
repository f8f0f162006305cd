// The snippet front end: size limits, then lexer → parser → checker (see parser.hpp); the
// printer lives in printer.cpp.
#include "snippet/scanner.hpp"

#include "snippet/parser.hpp"
#include "snippet/tokeniser.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>

namespace spikeforge::snippet {

namespace {
std::atomic<uint64_t> g_scans{0};
} // namespace

uint64_t scanCount() {
    return g_scans.load(std::memory_order_relaxed);
}

Scanned scan(const std::string& code, const Context& ctx) {
    g_scans.fetch_add(1, std::memory_order_relaxed);
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

} // namespace spikeforge::snippet
