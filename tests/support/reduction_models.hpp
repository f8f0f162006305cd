#pragma once
// Models the reduction tests of every backend share: a neuron group that only holds values, and
// a custom update that reduces a referenced variable over the batch or the neurons.
#include "spikeforge/custom_update.hpp"
#include "spikeforge/model.hpp"

#include <string>
#include <vector>

namespace sftest {

// A neuron model with the given scalar variables and no dynamics.
inline spikeforge::NeuronModel holder(const std::vector<std::string>& vars = {"x"}) {
    spikeforge::NeuronModel n;
    n.name = "Holder";
    for (const auto& v : vars)
        n.vars.push_back({v});
    return n;
}

// sum/mx reduce the reference x with the accesses given; `after` then updates x (it is
// ReadWrite, so the write-back is tested too).
inline spikeforge::CustomUpdateModel reduce(spikeforge::CustomUpdateVarAccess sum,
                                            spikeforge::CustomUpdateVarAccess max,
                                            const std::string& after = "x = 0.0;") {
    using A = spikeforge::CustomUpdateVarAccess;
    spikeforge::CustomUpdateModel m;
    m.name = "Reduce";
    m.vars = {{"sum", "scalar", sum}, {"mx", "scalar", max}};
    m.varRefs = {{"x", "scalar", A::ReadWrite}};
    m.updateCode = "sum = x;\nmx = x;\n" + after;
    return m;
}

} // namespace sftest
