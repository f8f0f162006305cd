// Procedural connectivity (GeNN's PROCEDURAL): nothing per synapse is stored. At each spike the
// connectivity initialiser's row code runs again for the spiking neuron, from the same random
// stream Sparse's build draws that row from (so a Procedural group has exactly the rows of the
// Sparse group with the same initialiser, name and seed), into a row buffer private to the spike;
// per-synapse variables are evaluated from their initialisers at element id_pre * stride + k,
// again as Sparse initialises them. Memory: no synapse state; the cost moves to the spike.
#include "codegen/layouts/layouts.hpp"

#include "codegen/lowerer.hpp"

namespace spikeforge::codegen {

namespace {

class Procedural final : public Connectivity {
public:
    explicit Procedural(const SynapseGroup& sg) : m_sg(sg) {}
    // The virtual element numbering of per-synapse values (rows padded to the stride).
    size_t synapseCount() const override {
        return size_t(m_sg.source().size()) * m_sg.maxRowLength();
    }
    std::vector<ConnectivityArray> arrays() const override { return {}; }
    bool storesSynapseVars() const override { return false; }

    SynapseLoop rowLoop(Lowerer& e) const override {
        // The buffer's length is a literal, not a merge field: a private array needs a constant
        // size on the GPU backends, so groups with different bounds do not merge.
        const std::string stride = std::to_string(m_sg.maxRowLength()) + "u";
        const std::string setup =
            "uint32_t sfRowBuf[" + stride +
            "];\nuint32_t* sfRow = sfRowBuf;\nconst uint32_t sfStride = " + stride +
            ";\nuint32_t sfLen = 0;\n{\n" + rowBuildCode(e, m_sg, "a->seed") +
            "}\nif (sfLen > sfStride) {\n" + hookName(Hook::ReportError) + "(" + e.errorWord(m_sg) +
            ", SF_ERROR_ROW_OVERFLOW);\nsfLen = sfStride;\n}\n";
        SynapseLoop l{
            setup,
            "0u",
            "sfLen",
            "const uint32_t id_post = sfRow[sfK];\nconst size_t sfSyn = (size_t)id_pre * " +
                stride + " + sfK; (void)sfSyn;\n",
            "id_post",
            false,
            stride};
        l.setupGeneratesRow = true;
        return l;
    }
    SynapseLoop columnLoop(Env&) const override {
        throw InternalError("synapse group '" + m_sg.name() +
                            "': a Procedural group has no column loop (finalise refuses "
                            "postsynaptic learning)");
    }
    std::string decode(Env&) const override {
        throw InternalError("synapse group '" + m_sg.name() +
                            "': a Procedural group has no stored elements to decode");
    }
    std::string paddingSkip(Env&) const override { return ""; }
    bool needsColumnIndex() const override { return false; }
    std::vector<BuildStep> build(Lowerer&) const override { return {}; }

    // ---- host codec: nothing is stored to decode. Reading goes through the group's Sparse
    // twin (runtime/procedural_twin.hpp, before this layout is asked); giving is refused. ----
    std::vector<std::string> codecArrays() const override { return {}; }
    uint64_t countSynapses(const HostArrayReader&) const override { refuse(); }
    std::vector<SynapseEntry> synapseEntries(const HostArrayReader&) const override { refuse(); }
    EncodedSynapses encode(std::span<const std::pair<uint32_t, uint32_t>>) const override {
        refuse();
    }

private:
    [[noreturn]] void refuse() const {
        throw ModelError("synapse group '" + m_sg.name() +
                         "' is Procedural: its synapses are regenerated from its initialisers at "
                         "every spike and never stored, so they cannot be given from the host "
                         "(they can be read); use a Sparse group to give synapses");
    }
    const SynapseGroup& m_sg;
};

} // namespace

std::unique_ptr<Connectivity> proceduralLayout(const SynapseGroup& sg) {
    return std::make_unique<Procedural>(sg);
}

} // namespace spikeforge::codegen
