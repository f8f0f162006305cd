// Toeplitz connectivity: a 2-D convolution (optionally after average pooling) whose synapses are
// never stored. A spike of source neuron (y, x, c) visits, for each pooling window holding it,
// kernel position (ky, kx) and output channel o, the output pixel the window and position give,
// skipping those outside the output; per-synapse variables hold the kernel, [ky][kx][c][o].
// Output channels vary fastest, so consecutive iterations reach consecutive targets.
#include "codegen/layouts/layouts.hpp"

#include "codegen/lowerer.hpp"

namespace spikeforge::codegen {

namespace {

class Toeplitz final : public Connectivity {
public:
    explicit Toeplitz(const SynapseGroup& sg) : m_sg(sg), m_g(sg.convGeometry()) {}
    size_t synapseCount() const override { return m_g.kernelSize(); }
    std::vector<ConnectivityArray> arrays() const override { return {}; }

    SynapseLoop rowLoop(Lowerer& e) const override {
        Env& env = e.env;
        auto n = [&](const char* field, unsigned v) { return env.number(field, "int32_t", v); };
        const std::string ic = n("convIc", m_g.inC), iw = n("convIw", m_g.inW);
        const std::string oc = n("convOc", m_g.outC), ow = n("convOw", m_g.outW);
        const std::string kw = n("convKw", m_g.kw), kh = n("convKh", m_g.kh);
        const std::string setup = "const int32_t sfTc = (int32_t)id_pre % " + ic +
                                  ";\nconst int32_t sfTpix = (int32_t)id_pre / " + ic +
                                  ";\nconst int32_t sfTy = sfTpix / " + iw + ", sfTx = sfTpix % " +
                                  iw + ";\n";
        // sfK = ((window row * pool_kw + window col) * kh + ky) * kw + kx) * oc + o
        std::string body = "int32_t sfTr = (int32_t)sfK;\nconst int32_t sfTo = sfTr % " + oc +
                           "; sfTr /= " + oc + ";\nconst int32_t sfTkx = sfTr % " + kw +
                           "; sfTr /= " + kw + ";\nconst int32_t sfTky = sfTr % " + kh +
                           "; sfTr /= " + kh + ";\n";
        body += pooledPosition(env);
        body += "const int32_t sfTny = sfTpy + " + n("convPadH", m_g.padH) +
                " - sfTky, sfTnx = sfTpx + " + n("convPadW", m_g.padW) + " - sfTkx;\n" +
                strided("sfTny", "sfTnx", n("convSh", m_g.sh), n("convSw", m_g.sw), "sfToy",
                        "sfTox", n("convOh", m_g.outH), ow) +
                "const uint32_t id_post = (uint32_t)((sfToy * " + ow + " + sfTox) * " + oc +
                " + sfTo);\nconst size_t sfSyn = ((size_t)(sfTky * " + kw + " + sfTkx) * " + ic +
                " + (size_t)sfTc) * " + oc + " + (size_t)sfTo;\n";
        const std::string iterations =
            env.number("convRowIterations", "uint32_t", double(m_g.rowIterations()));
        return {setup, "0u", iterations, body, "id_post", false, iterations};
    }
    SynapseLoop columnLoop(Env&) const override {
        throw InternalError("synapse group '" + m_sg.name() +
                            "': a Toeplitz group has no column loop (finalise refuses "
                            "postsynaptic learning)");
    }
    // Elements are kernel weights: no pair owns one (finalise refuses id_pre and id_post in
    // custom updates of Toeplitz groups).
    std::string decode(Env&) const override { return ""; }
    std::string paddingSkip(Env&) const override { return ""; }
    bool needsColumnIndex() const override { return false; }
    std::vector<BuildStep> build(Lowerer&) const override { return {}; }

    std::vector<std::string> codecArrays() const override { return {}; }
    uint64_t countSynapses(const HostArrayReader& read) const override {
        return synapseEntries(read).size();
    }
    EncodedSynapses encode(std::span<const std::pair<uint32_t, uint32_t>>) const override {
        throw ModelError("synapse group '" + m_sg.name() +
                         "' is Toeplitz: its synapses are the convolution's, so they cannot be "
                         "given (set the kernel with setSynapseValues or a variable initialiser)");
    }
    // The device's iteration on the host, in the same order.
    std::vector<SynapseEntry> synapseEntries(const HostArrayReader&) const override {
        const ConvGeometry& g = m_g;
        const int64_t numPost = m_sg.target().size();
        std::vector<SynapseEntry> out;
        for (int64_t pre = 0; pre < int64_t(m_sg.source().size()); pre++) {
            const int64_t c = pre % g.inC, y = pre / g.inC / g.inW, x = pre / g.inC % g.inW;
            for (int64_t dy = 0; dy < g.poolKH; dy++)
                for (int64_t dx = 0; dx < g.poolKW; dx++) {
                    const int64_t py0 = y - dy, px0 = x - dx;
                    if (py0 < 0 || px0 < 0 || py0 % g.poolSH || px0 % g.poolSW) continue;
                    const int64_t py = py0 / g.poolSH, px = px0 / g.poolSW;
                    if (py >= g.convInH || px >= g.convInW) continue;
                    for (int64_t ky = 0; ky < g.kh; ky++)
                        for (int64_t kx = 0; kx < g.kw; kx++) {
                            const int64_t ny = py + g.padH - ky, nx = px + g.padW - kx;
                            if (ny < 0 || nx < 0 || ny % g.sh || nx % g.sw) continue;
                            const int64_t oy = ny / g.sh, ox = nx / g.sw;
                            if (oy >= g.outH || ox >= g.outW) continue;
                            for (int64_t o = 0; o < g.outC; o++) {
                                const int64_t post = (oy * g.outW + ox) * g.outC + o;
                                const int64_t element = ((ky * g.kw + kx) * g.inC + c) * g.outC + o;
                                out.push_back({size_t(pre * numPost + post), size_t(element)});
                            }
                        }
                }
        }
        return out;
    }

private:
    // The pooled pixel (sfTpy, sfTpx) of pooling window sfTr (what remains of sfK) that holds the
    // source pixel; the pixel itself when there is no pooling.
    std::string pooledPosition(Env& env) const {
        auto n = [&](const char* field, unsigned v) { return env.number(field, "int32_t", v); };
        if (m_g.poolKH == 1 && m_g.poolKW == 1 && m_g.poolSH == 1 && m_g.poolSW == 1)
            return "const int32_t sfTpy = sfTy, sfTpx = sfTx; (void)sfTr;\n";
        const std::string pkw = n("poolKw", m_g.poolKW);
        return "const int32_t sfTwy = sfTy - sfTr / " + pkw + ", sfTwx = sfTx - sfTr % " + pkw +
               ";\n" +
               strided("sfTwy", "sfTwx", n("poolSh", m_g.poolSH), n("poolSw", m_g.poolSW), "sfTpy",
                       "sfTpx", n("convIh", m_g.convInH), n("convIw2", m_g.convInW));
    }
    // (outY, outX) = (y / sy, x / sx) when both divide exactly and land inside h x w; otherwise
    // the synapse is skipped.
    static std::string strided(const std::string& y, const std::string& x, const std::string& sy,
                               const std::string& sx, const std::string& outY,
                               const std::string& outX, const std::string& h,
                               const std::string& w) {
        return "if (" + y + " < 0 || " + x + " < 0 || " + y + " % " + sy + " != 0 || " + x + " % " +
               sx + " != 0) continue;\nconst int32_t " + outY + " = " + y + " / " + sy + ", " +
               outX + " = " + x + " / " + sx + ";\nif (" + outY + " >= " + h + " || " + outX +
               " >= " + w + ") continue;\n";
    }

    const SynapseGroup& m_sg;
    const ConvGeometry& m_g;
};

} // namespace

std::unique_ptr<Connectivity> toeplitzLayout(const SynapseGroup& sg) {
    return std::make_unique<Toeplitz>(sg);
}

} // namespace spikeforge::codegen
