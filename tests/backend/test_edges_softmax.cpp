// Softmax's numerical stability, directly: inputs around +1000 and −1000 overflow or underflow
// exp() in float unless the maximum is subtracted first (addSoftmax, docs/custom_updates.md).
// The reference is computed in long double with the maximum subtracted.
#include "backend_fixture.hpp"
#include "spikeforge/models.hpp"

#include <cmath>

using namespace spikeforge;

namespace {

class SoftmaxEdgeTest : public sftest::BackendTest {};

NeuronModel holder() {
    NeuronModel n;
    n.name = "Holder";
    n.vars = {{"x"}, {"out"}};
    return n;
}

// Input i of batch element b: shifted rows far beyond float exp's range (exp(89) = inf,
// exp(−104) = 0), one row with a very wide spread, one with equal values.
float input(unsigned b, unsigned i, unsigned n) {
    switch (b) {
    case 0:
        return 1000.0f + static_cast<float>(i); // {1000, 1001, 1002, …}
    case 1:
        return -1000.0f - static_cast<float>(i); // {−1000, −1001, …}
    case 2:
        return i % 2 ? 1000.0f : -1000.0f + 0.5f * i; // ±1000 mixed
    default:
        return 88.0f + static_cast<float>(n % 7); // all equal, past exp's float limit (88.7)
    }
}

TEST_P(SoftmaxEdgeTest, ExtremeInputsGiveTheStableReference) {
    constexpr unsigned kBatch = 4;
    for (unsigned n : {3u, 37u}) {
        Model m("softmax_edge");
        m.setBatchSize(kBatch);
        m.addNeuronGroup("P", n, holder(), {}, {{"x", 0.0}, {"out", 0.0}});
        models::addSoftmax(m, "Soft", "Softmax", {"P", "x"}, {"P", "out"});
        Simulation sim(m, prefs());
        sim.pull("P", "x");
        auto x = sim.view<float>("P", "x");
        for (unsigned b = 0; b < kBatch; b++)
            for (unsigned i = 0; i < n; i++)
                x[b * n + i] = input(b, i, n);
        sim.push("P", "x");
        sim.customUpdate("Softmax");
        sim.pull("P", "out");
        const auto out = sim.view<float>("P", "out");
        for (unsigned b = 0; b < kBatch; b++) {
            long double mx = -INFINITY, sum = 0.0L;
            for (unsigned i = 0; i < n; i++)
                mx = std::max<long double>(mx, input(b, i, n));
            for (unsigned i = 0; i < n; i++)
                sum += std::exp(static_cast<long double>(input(b, i, n)) - mx);
            double total = 0.0;
            for (unsigned i = 0; i < n; i++) {
                const float y = out[b * n + i];
                ASSERT_TRUE(std::isfinite(y)) << "n " << n << " batch " << b << " i " << i;
                const long double ref =
                    std::exp(static_cast<long double>(input(b, i, n)) - mx) / sum;
                EXPECT_NEAR(y, static_cast<double>(ref), 1e-6)
                    << "n " << n << " batch " << b << " i " << i;
                total += y;
            }
            EXPECT_NEAR(total, 1.0, 1e-5) << "n " << n << " batch " << b;
        }
    }
}

SF_INSTANTIATE_BACKEND_TESTS(SoftmaxEdgeTest);

} // namespace
