// The analysis Model::finalise keeps, and the read access later passes use.
#include "model/analysis.hpp"

#include "model/contexts.hpp"

namespace spikeforge::analysis {

// Reads the model's private analysis; empty until finalise has succeeded.
struct Access {
    static const std::shared_ptr<const Results>& results(const Model& m) {
        static const std::shared_ptr<const Results> none;
        return m.m_finalised ? m.m_analysis : none;
    }
};

namespace {

const std::shared_ptr<const Results>& resultsOf(const Model& m) {
    const auto& r = Access::results(m);
    if (!r)
        throw InternalError("model '" + m.name() +
                            "': snippet analysis read before Model::finalise (or after a change "
                            "that needs finalise again)");
    return r;
}

} // namespace

std::shared_ptr<const Results> analyse(const Model& m) {
    auto out = std::make_shared<Results>();
    auto fields = contexts::allCodeFields(m);
    out->names.reserve(fields.size());
    out->fields.reserve(fields.size());
    for (auto& f : fields) {
        out->slots.emplace(std::make_pair(f.group, f.field), out->fields.size());
        out->fields.push_back(snippet::scan(*f.code, f.context));
        out->names.push_back({std::move(f.group), std::move(f.field)});
    }
    return out;
}

const snippet::Scanned& at(const Model& m, size_t slot) {
    const Results& r = *resultsOf(m);
    if (slot >= r.fields.size())
        throw InternalError("model '" + m.name() + "': code field slot " + std::to_string(slot) +
                            " out of range (" + std::to_string(r.fields.size()) + " fields)");
    return r.fields[slot];
}

const snippet::Scanned& of(const Model& m, const std::string& group, const std::string& field) {
    const Results& r = *resultsOf(m);
    const auto it = r.slots.find({group, field});
    if (it == r.slots.end())
        throw InternalError("model '" + m.name() + "': no code field " + group + "." + field);
    return r.fields[it->second];
}

const FieldName& nameAt(const Model& m, size_t slot) {
    const Results& r = *resultsOf(m);
    if (slot >= r.names.size())
        throw InternalError("model '" + m.name() + "': code field slot " + std::to_string(slot) +
                            " out of range (" + std::to_string(r.names.size()) + " fields)");
    return r.names[slot];
}

std::shared_ptr<const Results> share(const Model& m) {
    return resultsOf(m);
}

size_t count(const Model& m) {
    return resultsOf(m)->fields.size();
}

} // namespace spikeforge::analysis
