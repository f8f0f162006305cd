// Dense connectivity: every pre-post pair, synapse = pre * numPost + post; nothing stored besides
// the per-synapse variables, no build at initialisation.
#include "codegen/layouts/layouts.hpp"

#include "codegen/arrays.hpp"
#include "codegen/checked_size.hpp"
#include "codegen/lowerer.hpp"
#include "model/analysis.hpp"
#include "model/contexts.hpp"

namespace spikeforge::codegen {

namespace {

class Dense final : public Connectivity {
public:
    explicit Dense(const SynapseGroup& sg) : m_sg(sg) {}
    size_t synapseCount() const override {
        return checkedMul(m_sg.source().size(), m_sg.target().size(),
                          "synapse group '" + m_sg.name() + "': synapses");
    }
    std::vector<ConnectivityArray> arrays() const override { return {}; }
    SynapseLoop rowLoop(Lowerer&) const override {
        return {"",
                "0u",
                "sfNpost",
                "const uint32_t id_post = sfK;\n"
                "const size_t sfSyn = (size_t)id_pre * sfNpost + sfK;\n",
                "id_post",
                true,
                "sfNpost"};
    }
    SynapseLoop columnLoop(Env&) const override {
        return {"",
                "0u",
                "sfNpre",
                "const uint32_t id_pre = sfK;\n"
                "const size_t sfSyn = (size_t)sfK * sfNpost + id_post;\n",
                "id_post",
                false,
                "sfNpre"};
    }
    std::string decode(Env& env) const override {
        const std::string npost = env.number("numPost", "uint32_t", m_sg.target().size());
        return "const uint32_t id_pre = (uint32_t)(id / " + npost +
               "); (void)id_pre;\nconst uint32_t id_post = (uint32_t)(id % " + npost +
               "); (void)id_post;\n";
    }
    std::string elementOf(Env& env) const override {
        return "((size_t)id_pre * " + env.number("numPost", "uint32_t", m_sg.target().size()) +
               " + id_post)";
    }
    std::string transposedElementOf(Env& env, const SynapseGroup&) const override {
        return "((size_t)id_post * " + env.number("numPre", "uint32_t", m_sg.source().size()) +
               " + id_pre)";
    }
    std::string paddingSkip(Env&) const override { return ""; }
    bool needsColumnIndex() const override { return false; }
    std::vector<BuildStep> build(Lowerer&) const override { return {}; }
    std::vector<std::string> codecArrays() const override { return {}; }
    uint64_t countSynapses(const HostArrayReader&) const override { return synapseCount(); }
    EncodedSynapses encode(std::span<const std::pair<uint32_t, uint32_t>>) const override {
        throw ModelError("synapse group '" + m_sg.name() +
                         "' is Dense: it holds every pair, so its synapses cannot be given");
    }
    std::vector<SynapseEntry> synapseEntries(const HostArrayReader&) const override {
        std::vector<SynapseEntry> out(synapseCount()); // element i is the pair i
        for (size_t i = 0; i < out.size(); i++)
            out[i] = {i, i};
        return out;
    }

private:
    const SynapseGroup& m_sg;
};

} // namespace

std::unique_ptr<Connectivity> denseLayout(const SynapseGroup& sg) {
    return std::make_unique<Dense>(sg);
}

} // namespace spikeforge::codegen
