// The dendritic-delay ring (buffers.hpp).
#include "codegen/layouts/buffers.hpp"

namespace spikeforge::codegen {

std::vector<BufferArray> DendriticRing::arrays(const SynapseGroup& sg, unsigned batch,
                                               const std::string& scalar) {
    return {{"denDelay", scalar, {batch, sg.maxDendriticDelaySteps(), sg.target().size()}, true}};
}

DendriticRing::DendriticRing(Env& env, const SynapseGroup& sg, const std::string& prefix, Use use,
                             const std::string& scalar)
    : m_array(env.array(prefix + "denDelay", scalar, sg.name() + ".denDelay", use)),
      m_slots(env.number(prefix + "dd", "uint32_t", sg.maxDendriticDelaySteps())),
      m_scalar(scalar) {}

std::string DendriticRing::writerSetup() const {
    return "const uint32_t sfDd = " + m_slots + ";\nconst uint64_t sfStep = a->step;\n" +
           globalPointer(m_scalar) + " sfDen = " + m_array + " + (size_t)batch * sfDd * sfNpost;\n";
}

std::string DendriticRing::writerElement() const {
    return "sfDen[((sfStep + sfD_) % sfDd) * sfNpost + id_post]";
}

std::string DendriticRing::writerLimit() const {
    return "sfDd";
}

std::string DendriticRing::readerElement() const {
    return m_array + "[((size_t)batch * " + m_slots + " + (size_t)(a->step % " + m_slots +
           ")) * sfN + sfId]";
}

} // namespace spikeforge::codegen
