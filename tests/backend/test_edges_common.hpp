#pragma once
// Helpers shared by the edge tests (test_edges_*.cpp).
#include "spikeforge/simulation.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace sftest {

// Gives neuron i of batch element b of a SpikeSourceArray group the spike steps `steps(b, i)`
// (ascending, at most one per step); a spike at step n is scripted at (n − 0.5)·dt [ms], so it
// is emitted by the neuron update of step n.
template <typename Steps>
void scriptSpikeSteps(spikeforge::Simulation& sim, const std::string& group, unsigned batch,
                      unsigned n, double dt, Steps steps) {
    std::vector<double> times;
    sim.pull(group, "startSpike");
    sim.pull(group, "endSpike");
    auto start = sim.view<uint32_t>(group, "startSpike");
    auto end = sim.view<uint32_t>(group, "endSpike");
    for (unsigned b = 0; b < batch; b++)
        for (unsigned i = 0; i < n; i++) {
            start[b * n + i] = static_cast<uint32_t>(times.size());
            for (unsigned s : steps(b, i))
                times.push_back((s - 0.5) * dt);
            end[b * n + i] = static_cast<uint32_t>(times.size());
        }
    sim.push(group, "startSpike");
    sim.push(group, "endSpike");
    sim.setEGP(group, "spikeTimes", times);
}

} // namespace sftest
