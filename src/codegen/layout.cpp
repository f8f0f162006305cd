#include "codegen/layout.hpp"

#include "codegen/plan.hpp"

#include <algorithm>

namespace spikeforge::codegen {

size_t fieldSize(const std::string& ctype) {
    return sizeOf(cTypeOf(ctype));
}

StructLayout layoutOf(const std::vector<FieldDecl>& fields) {
    StructLayout l;
    size_t maxAlign = 1;
    for (const auto& f : fields) {
        const size_t s = fieldSize(f.ctype);
        l.size = (l.size + s - 1) / s * s;
        l.offsets.push_back(l.size);
        l.size += s;
        maxAlign = std::max(maxAlign, s);
    }
    l.size = (l.size + maxAlign - 1) / maxAlign * maxAlign;
    if (l.size == 0) l.size = 1; // an empty C++ struct has size 1
    return l;
}

std::string resolveType(const std::string& t, Precision p) {
    if (auto c = fromSnippetType(t, p)) return cName(*c);
    return t;
}

} // namespace spikeforge::codegen
