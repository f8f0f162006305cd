// Toeplitz (convolution) connectivity on every backend: the input a spike pattern delivers equals
// a direct convolution written here (several shapes, strides, paddings, channel counts; average
// pooling first, overlapping windows too), batch 1 and 3; the codec reads the group as the
// equivalent dense matrix, and a Dense group holding that matrix delivers the same input.
#include "backend_fixture.hpp"
#include "probe_models.hpp"

#include "spikeforge/models.hpp"

#include <random>
#include <tuple>
#include <vector>

namespace {

using namespace spikeforge;
using sftest::expectError;

// Parameters of one convolution, and the shapes they give.
struct Conv {
    unsigned ih, iw, ic, kh, kw, oc, sh = 1, sw = 1, padh = 0, padw = 0;
    unsigned pkh = 0, pkw = 0, psh = 1, psw = 1; // pkh 0: Conv2D, else AvgPoolConv2D
    unsigned pooledH() const { return pkh ? (ih - pkh) / psh + 1 : ih; }
    unsigned pooledW() const { return pkh ? (iw - pkw) / psw + 1 : iw; }
    unsigned oh() const { return (pooledH() + 2 * padh - kh) / sh + 1; }
    unsigned ow() const { return (pooledW() + 2 * padw - kw) / sw + 1; }
    unsigned numPre() const { return ih * iw * ic; }
    unsigned numPost() const { return oh() * ow() * oc; }
    size_t kernelSize() const { return size_t(kh) * kw * ic * oc; }
    ToeplitzConnectivityInit init() const {
        ParamValues p = {{"conv_kh", kh},     {"conv_kw", kw},   {"conv_oc", oc},
                         {"conv_sh", sh},     {"conv_sw", sw},   {"conv_padh", padh},
                         {"conv_padw", padw}, {"conv_oh", oh()}, {"conv_ow", ow()}};
        if (!pkh) {
            p.insert({{"conv_ih", ih}, {"conv_iw", iw}, {"conv_ic", ic}});
            return init::Conv2D(p);
        }
        p.insert({{"pool_kh", pkh},
                  {"pool_kw", pkw},
                  {"pool_sh", psh},
                  {"pool_sw", psw},
                  {"pool_ih", ih},
                  {"pool_iw", iw},
                  {"pool_ic", ic}});
        return init::AvgPoolConv2D(p);
    }
};

// The convolution of `in` ([y][x][c], 0 or 1) with kernel [ky][kx][c][o], after sum-pooling
// when the convolution pools (GeNN's AvgPoolConv2D sums the window: an average takes kernel
// weights divided by the window's size).
std::vector<double> directConv(const Conv& c, const std::vector<double>& in,
                               const std::vector<double>& kernel) {
    const unsigned ph = c.pooledH(), pw = c.pooledW();
    std::vector<double> pooled(size_t(ph) * pw * c.ic, 0.0);
    for (unsigned py = 0; py < ph; py++)
        for (unsigned px = 0; px < pw; px++)
            for (unsigned ch = 0; ch < c.ic; ch++) {
                double sum = 0.0;
                const unsigned wh = c.pkh ? c.pkh : 1, ww = c.pkw ? c.pkw : 1;
                for (unsigned dy = 0; dy < wh; dy++)
                    for (unsigned dx = 0; dx < ww; dx++) {
                        const unsigned y = py * (c.pkh ? c.psh : 1) + dy;
                        const unsigned x = px * (c.pkh ? c.psw : 1) + dx;
                        sum += in[(size_t(y) * c.iw + x) * c.ic + ch];
                    }
                pooled[(size_t(py) * pw + px) * c.ic + ch] = sum;
            }
    std::vector<double> out(c.numPost(), 0.0);
    for (unsigned oy = 0; oy < c.oh(); oy++)
        for (unsigned ox = 0; ox < c.ow(); ox++)
            for (unsigned o = 0; o < c.oc; o++) {
                double sum = 0.0;
                for (unsigned ky = 0; ky < c.kh; ky++)
                    for (unsigned kx = 0; kx < c.kw; kx++) {
                        const int y = int(oy * c.sh + ky) - int(c.padh);
                        const int x = int(ox * c.sw + kx) - int(c.padw);
                        if (y < 0 || x < 0 || y >= int(ph) || x >= int(pw)) continue;
                        for (unsigned ch = 0; ch < c.ic; ch++)
                            sum += pooled[(size_t(y) * pw + x) * c.ic + ch] *
                                   kernel[((size_t(ky) * c.kw + kx) * c.ic + ch) * c.oc + o];
                    }
                out[(size_t(oy) * c.ow() + ox) * c.oc + o] = sum;
            }
    return out;
}

using sftest::accumulate;
using sftest::pulse;
using sftest::spikeOnce;

void addLayers(Model& m, const Conv& c, unsigned batch) {
    m.setBatchSize(batch);
    m.setPrecision(Precision::Double);
    m.addNeuronGroup("In", c.numPre(), spikeOnce(), {}, {{"fire", 0.0}, {"count", 0.0}});
    m.addNeuronGroup("Out", c.numPost(), accumulate(), {}, {{"acc", 0.0}});
}

// Kernel weights k / 8 (exact in double: every sum of them is exact in any order).
std::vector<double> kernelValues(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> d(-40, 40);
    std::vector<double> v(n);
    for (auto& x : v)
        x = d(rng) / 8.0;
    return v;
}

std::vector<double> spikePattern(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<double> v(n);
    for (auto& x : v)
        x = (rng() % 3 == 0) ? 1.0 : 0.0;
    return v;
}

// Runs the spike patterns (one per batch element) through synapse group "Syn" and returns the
// targets' summed input, [batch][target].
std::vector<double> deliver(Simulation& sim, const std::vector<std::vector<double>>& patterns) {
    auto fire = sim.view<double>("In", "fire");
    for (size_t b = 0; b < patterns.size(); b++)
        std::copy(patterns[b].begin(), patterns[b].end(), fire.begin() + b * patterns[b].size());
    sim.push("In", "fire");
    sim.run(3);
    sim.pull("Out", "acc");
    auto acc = sim.view<double>("Out", "acc");
    return {acc.begin(), acc.end()};
}

const std::vector<Conv> kShapes = {
    {5, 7, 2, 3, 3, 3},                         // valid, stride 1
    {6, 5, 1, 3, 2, 2, 2, 1, 1, 1},             // strided, padded, odd sizes
    {9, 9, 3, 5, 5, 4, 2, 2, 2, 2},             // a larger kernel, stride 2
    {6, 6, 2, 3, 3, 3, 1, 1, 1, 1, 2, 2, 2, 2}, // 2 x 2 pooling, then a padded conv
    {5, 7, 1, 2, 2, 2, 1, 1, 0, 0, 3, 2, 1, 2}, // overlapping pooling windows
    {33, 17, 1, 3, 3, 1, 1, 1, 1, 1},           // more targets than a work-group
};

class ToeplitzTest : public ::testing::TestWithParam<std::tuple<std::string, unsigned>> {
protected:
    BackendPreferences prefs() const { return sftest::preferencesFor(std::get<0>(GetParam())); }
    unsigned batch() const { return std::get<1>(GetParam()); }
};

TEST_P(ToeplitzTest, DeliversTheDirectConvolution) {
    for (size_t s = 0; s < kShapes.size(); s++) {
        const Conv& c = kShapes[s];
        SCOPED_TRACE("shape " + std::to_string(s));
        Model m("toeplitz");
        addLayers(m, c, batch());
        m.addSynapseGroup("Syn", MatrixType::Toeplitz, 0, "In", "Out",
                          {pulse(), {}, {{"g", 0.0}}, {}, {}}, {models::DeltaCurr(), {}, {}},
                          c.init());
        Simulation sim(m, prefs());
        const std::vector<double> kernel = kernelValues(c.kernelSize(), 7 + unsigned(s));
        auto g = sim.view<double>("Syn", "g");
        ASSERT_EQ(g.size(), c.kernelSize()); // the kernel, not a pre x post matrix
        std::copy(kernel.begin(), kernel.end(), g.begin());
        sim.push("Syn", "g");
        std::vector<std::vector<double>> patterns;
        for (unsigned b = 0; b < batch(); b++)
            patterns.push_back(spikePattern(c.numPre(), 100 + 10 * unsigned(s) + b));
        const std::vector<double> got = deliver(sim, patterns);
        for (unsigned b = 0; b < batch(); b++) {
            const std::vector<double> want = directConv(c, patterns[b], kernel);
            for (size_t j = 0; j < want.size(); j++)
                ASSERT_EQ(got[b * want.size() + j], want[j]) << "batch " << b << " target " << j;
        }
    }
}

TEST_P(ToeplitzTest, CodecGivesTheEquivalentDenseMatrix) {
    for (size_t s = 0; s < kShapes.size(); s++) {
        const Conv& c = kShapes[s];
        SCOPED_TRACE("shape " + std::to_string(s));
        Model m("toeplitz_codec");
        addLayers(m, c, batch());
        m.addSynapseGroup("Syn", MatrixType::Toeplitz, 0, "In", "Out",
                          {pulse(), {}, {{"g", 0.0}}, {}, {}}, {models::DeltaCurr(), {}, {}},
                          c.init());
        Simulation sim(m, prefs());
        const std::vector<double> kernel = kernelValues(c.kernelSize(), 3 + unsigned(s));
        auto g = sim.view<double>("Syn", "g");
        std::copy(kernel.begin(), kernel.end(), g.begin());
        sim.push("Syn", "g");
        // Column j of the dense matrix is the convolution of a one-hot input at j.
        const std::vector<double> dense = sim.synapseMatrix("Syn", "g", 0, 0.0);
        ASSERT_EQ(dense.size(), size_t(c.numPre()) * c.numPost());
        std::vector<double> oneHot(c.numPre(), 0.0);
        for (unsigned i = 0; i < c.numPre(); i++) {
            oneHot[i] = 1.0;
            const std::vector<double> row = directConv(c, oneHot, kernel);
            oneHot[i] = 0.0;
            for (unsigned j = 0; j < c.numPost(); j++)
                ASSERT_EQ(dense[size_t(i) * c.numPost() + j], row[j]) << i << " -> " << j;
        }
        // The list: every synapse once per path, values from its kernel weight.
        const auto list = sim.synapses("Syn");
        const auto values = sim.synapseValues("Syn", "g", 0);
        ASSERT_EQ(list.size(), values.size());
        EXPECT_EQ(sim.synapseCount("Syn"), list.size());
        std::vector<double> summed(dense.size(), 0.0);
        for (size_t k = 0; k < list.size(); k++)
            summed[size_t(list[k].pre) * c.numPost() + list[k].post] += values[k];
        EXPECT_EQ(summed, dense);
        // Setting through the codec: values that agree per kernel weight round trip; two
        // synapses of one weight given different values are refused, naming both.
        std::vector<double> doubled = values;
        for (auto& v : doubled)
            v *= 2.0;
        sim.setSynapseValues("Syn", "g", doubled, batch() - 1);
        EXPECT_EQ(sim.synapseValues("Syn", "g", batch() - 1), doubled);
        std::vector<double> clash = doubled;
        clash.back() += 1.0;
        ASSERT_GT(list.size(), c.kernelSize()); // every shape shares its weights
        expectError<ModelError>([&] { sim.setSynapseValues("Syn", "g", clash); },
                                {"share one weight"});
        // A Dense group holding the dense matrix delivers the same input.
        Model d("toeplitz_dense");
        addLayers(d, c, batch());
        d.addSynapseGroup("Syn", MatrixType::Dense, 0, "In", "Out",
                          {pulse(), {}, {{"g", 0.0}}, {}, {}}, {models::DeltaCurr(), {}, {}});
        Simulation dsim(d, prefs());
        for (unsigned b = 0; b < batch(); b++)
            dsim.setSynapseMatrix("Syn", "g", dense, b);
        std::vector<std::vector<double>> patterns;
        for (unsigned b = 0; b < batch(); b++)
            patterns.push_back(spikePattern(c.numPre(), 900 + b));
        sim.setSynapseValues("Syn", "g", values, batch() - 1);
        EXPECT_EQ(deliver(sim, patterns), deliver(dsim, patterns));
    }
}

INSTANTIATE_TEST_SUITE_P(Backends, ToeplitzTest,
                         ::testing::Combine(::testing::ValuesIn(sftest::suiteBackends()),
                                            ::testing::Values(1u, 3u)),
                         [](const auto& info) {
                             return std::get<0>(info.param) + "_batch" +
                                    std::to_string(std::get<1>(info.param));
                         });

TEST(ToeplitzModel, BadShapesAndUsesAreClearErrors) {
    const Conv c{5, 7, 2, 3, 3, 3};
    auto build = [&](ToeplitzConnectivityInit init, WeightUpdateModel wu = pulse(),
                     unsigned numPost = 0) {
        Model m("toeplitz_bad");
        m.addNeuronGroup("In", c.numPre(), spikeOnce(), {}, {{"fire", 0.0}, {"count", 0.0}});
        m.addNeuronGroup("Out", numPost ? numPost : c.numPost(), accumulate(), {}, {{"acc", 0.0}});
        m.addSynapseGroup("Conv", MatrixType::Toeplitz, 0, "In", "Out",
                          {wu, {}, {{"g", 0.0}}, {}, {}}, {models::DeltaCurr(), {}, {}}, init);
        m.finalise();
    };
    EXPECT_NO_THROW(build(c.init()));
    ToeplitzConnectivityInit missing = c.init();
    missing.params.erase("conv_kh");
    expectError<ModelError>([&] { build(missing); }, {"needs parameter 'conv_kh'"});
    ToeplitzConnectivityInit typo = c.init();
    typo.params["conv_strid"] = 2;
    expectError<ModelError>([&] { build(typo); }, {"'conv_strid'"});
    ToeplitzConnectivityInit fraction = c.init();
    fraction.params["conv_kw"] = 2.5;
    expectError<ModelError>([&] { build(fraction); }, {"whole number"});
    ToeplitzConnectivityInit wrongOut = c.init();
    wrongOut.params["conv_oh"] = 4;
    expectError<ModelError>([&] { build(wrongOut); }, {"'conv_oh' is 4"});
    expectError<ModelError>([&] { build(c.init(), pulse(), c.numPost() + 1); },
                            {"but the target group has"});
    ToeplitzConnectivityInit huge = c.init();
    huge.params["conv_kh"] = 9;
    huge.params.erase("conv_oh");
    huge.params.erase("conv_ow");
    expectError<ModelError>([&] { build(huge); }, {"larger than the padded input"});
    WeightUpdateModel learns = pulse();
    learns.vars = {{"g"}};
    learns.preSpikeSynCode = "addToPost(g); g += 1.0;";
    expectError<ModelError>([&] { build(c.init(), learns); }, {"kernel weight"});
    learns.preSpikeSynCode = "addToPost(g);";
    learns.postSpikeSynCode = "g += 1.0;";
    expectError<ModelError>([&] { build(c.init(), learns); }, {"no postsynaptic learning"});
    Model m("toeplitz_kind");
    m.addNeuronGroup("In", c.numPre(), spikeOnce(), {}, {{"fire", 0.0}, {"count", 0.0}});
    m.addNeuronGroup("Out", c.numPost(), accumulate(), {}, {{"acc", 0.0}});
    expectError<ModelError>(
        [&] {
            m.addSynapseGroup("S", MatrixType::Toeplitz, 0, "In", "Out",
                              {pulse(), {}, {{"g", 0.0}}, {}, {}}, {models::DeltaCurr(), {}, {}});
        },
        {"needs a convolution"});
    expectError<ModelError>(
        [&] {
            m.addSynapseGroup("S", MatrixType::Dense, 0, "In", "Out",
                              {pulse(), {}, {{"g", 0.0}}, {}, {}}, {models::DeltaCurr(), {}, {}},
                              c.init());
        },
        {"needs MatrixType::Toeplitz"});
}

} // namespace
