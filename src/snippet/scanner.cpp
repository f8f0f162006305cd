// The snippet front end: size limits, then lexer → parser → checker (see parser.hpp); the
// printer lives in printer.cpp.
#include "snippet/scanner.hpp"

#include "snippet/parser.hpp"
#include "snippet/tokeniser.hpp"

#include <algorithm>
#include <cstddef>

namespace spikeforge::snippet {

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

} // namespace spikeforge::snippet
