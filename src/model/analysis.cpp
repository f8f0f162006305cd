// TEMPORARY implementation (scans on demand); replaced by results stored at Model::finalise.
#include "model/analysis.hpp"

#include "model/contexts.hpp"

#include <map>
#include <memory>
#include <mutex>

namespace spikeforge::analysis {

namespace {
std::mutex g_mutex;
std::map<std::tuple<const Model*, std::string>, std::unique_ptr<snippet::Scanned>> g_cache;

// A later model may reuse an earlier one's address: the key holds everything the scan reads.
std::string keyOf(const contexts::CodeField& f) {
    std::string k = f.group + "\n" + f.field + "\n" + *f.code + "\n" +
                    std::to_string(static_cast<int>(f.context.precision));
    for (const auto& [name, sym] : f.context.names)
        k += "\n" + name + ":" + std::to_string(static_cast<int>(sym.kind)) + ":" +
             std::to_string(static_cast<int>(sym.type)) + (sym.array ? "[]" : "");
    return k;
}
} // namespace

const snippet::Scanned& at(const Model& m, size_t slot) {
    const auto f = contexts::codeFieldAt(m, slot);
    std::lock_guard lock(g_mutex);
    auto& p = g_cache[{&m, keyOf(f)}];
    if (!p) p = std::make_unique<snippet::Scanned>(snippet::scan(*f.code, f.context));
    return *p;
}

const snippet::Scanned& of(const Model& m, const std::string& group, const std::string& field) {
    return at(m, contexts::codeFieldSlot(m, group, field));
}

} // namespace spikeforge::analysis
