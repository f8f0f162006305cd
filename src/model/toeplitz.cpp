// Toeplitz (convolution) connectivity: the initialisers and the shape Model::finalise works out
// and checks from their parameters. How the shape is iterated in generated code is the Toeplitz
// layout's business (codegen/layouts/toeplitz.cpp).
#include "model/validate.hpp"
#include "snippet/suggest.hpp"
#include "spikeforge/models.hpp"

#include <cmath>
#include <limits>

namespace spikeforge {

namespace init {

ToeplitzConnectivityInit Conv2D(ParamValues params) {
    return {ToeplitzKind::Conv2D, std::move(params)};
}

ToeplitzConnectivityInit AvgPoolConv2D(ParamValues params) {
    return {ToeplitzKind::AvgPoolConv2D, std::move(params)};
}

ToeplitzParamNames toeplitzParamNames(ToeplitzKind kind) {
    std::vector<std::string> optional = {"conv_sh",   "conv_sw", "conv_padh",
                                         "conv_padw", "conv_oh", "conv_ow"};
    switch (kind) {
    case ToeplitzKind::Conv2D:
        return {{"conv_kh", "conv_kw", "conv_ih", "conv_iw", "conv_ic", "conv_oc"}, optional};
    case ToeplitzKind::AvgPoolConv2D:
        for (const char* n : {"conv_ih", "conv_iw", "conv_ic"})
            optional.push_back(n);
        return {{"pool_kh", "pool_kw", "pool_sh", "pool_sw", "pool_ih", "pool_iw", "pool_ic",
                 "conv_kh", "conv_kw", "conv_oc"},
                optional};
    }
    throw InternalError("unknown Toeplitz kind");
}

const char* toeplitzInitName(ToeplitzKind kind) {
    switch (kind) {
    case ToeplitzKind::Conv2D:
        return "Conv2D";
    case ToeplitzKind::AvgPoolConv2D:
        return "AvgPoolConv2D";
    }
    throw InternalError("unknown Toeplitz kind");
}

std::optional<ToeplitzKind> findToeplitzInit(const std::string& name) {
    for (ToeplitzKind k : {ToeplitzKind::Conv2D, ToeplitzKind::AvgPoolConv2D})
        if (name == toeplitzInitName(k)) return k;
    return std::nullopt;
}

std::vector<std::string> toeplitzInitNames() {
    return {toeplitzInitName(ToeplitzKind::Conv2D), toeplitzInitName(ToeplitzKind::AvgPoolConv2D)};
}

} // namespace init

namespace {

// Defaults of the optional parameters; 0 for conv_oh, conv_ow (and AvgPoolConv2D's conv_ih,
// conv_iw, conv_ic): not given, else checked against the shape the others give.
unsigned defaultOf(const std::string& name) {
    return name == "conv_sh" || name == "conv_sw" ? 1u : 0u;
}

// Reads every parameter as a whole number in [0, 2^31), naming the group and parameter of any
// that is missing, unknown, fractional or out of range.
std::map<std::string, unsigned> readParams(const std::string& prefix, ToeplitzKind kind,
                                           const ParamValues& values) {
    const init::ToeplitzParamNames spec = init::toeplitzParamNames(kind);
    std::vector<std::string> known = spec.required;
    known.insert(known.end(), spec.optional.begin(), spec.optional.end());
    std::map<std::string, unsigned> out;
    for (const auto& [name, value] : values) {
        if (std::find(known.begin(), known.end(), name) == known.end())
            throw ModelError(prefix + init::toeplitzInitName(kind) + " has no parameter '" + name +
                             "'" + didYouMean(name, known));
        if (!(value >= 0.0) || value >= 2147483648.0 || value != std::floor(value))
            throw ModelError(prefix + "parameter '" + name +
                             "' must be a whole number from 0 to 2^31 - 1, got " +
                             std::to_string(value));
        out[name] = static_cast<unsigned>(value);
    }
    for (const auto& name : spec.required)
        if (!out.count(name))
            throw ModelError(prefix + init::toeplitzInitName(kind) + " needs parameter '" + name +
                             "'");
    for (const auto& name : spec.optional)
        out.emplace(name, defaultOf(name));
    return out;
}

// Optional parameters given (non-zero) must equal what the others give (`source`, e.g. "the
// pooled image gives").
void checkGiven(const std::string& prefix, const std::map<std::string, unsigned>& p,
                std::initializer_list<std::pair<const char*, unsigned>> derived,
                const std::string& source) {
    for (const auto& [name, value] : derived)
        if (p.at(name) != 0 && p.at(name) != value)
            throw ModelError(prefix + "parameter '" + name + "' is " + std::to_string(p.at(name)) +
                             ", but " + source + " " + std::to_string(value));
}

void requirePositive(const std::string& prefix, const std::map<std::string, unsigned>& p,
                     std::initializer_list<const char*> names) {
    for (const char* n : names)
        if (p.at(n) == 0) throw ModelError(prefix + "parameter '" + n + "' must be at least 1");
}

// Output extent of a strided convolution: (in + 2 pad - kernel) / stride + 1, or a ModelError
// when the kernel does not fit the padded input.
unsigned convOut(const std::string& prefix, const char* axis, uint64_t in, uint64_t pad,
                 uint64_t kernel, uint64_t stride) {
    if (in + 2 * pad < kernel)
        throw ModelError(prefix + "the " + axis + " kernel (" + std::to_string(kernel) +
                         ") is larger than the padded input (" + std::to_string(in + 2 * pad) +
                         ")");
    return static_cast<unsigned>((in + 2 * pad - kernel) / stride + 1);
}

} // namespace

ConvGeometry toeplitzGeometry(const std::string& group, const ToeplitzConnectivityInit& init,
                              unsigned numPre, unsigned numPost) {
    const std::string prefix = "synapse group '" + group + "', Toeplitz connectivity: ";
    const auto p = readParams(prefix, init.kind, init.params);
    ConvGeometry g;
    switch (init.kind) {
    case ToeplitzKind::Conv2D:
        requirePositive(prefix, p, {"conv_ih", "conv_iw", "conv_ic"});
        g.inH = g.convInH = p.at("conv_ih");
        g.inW = g.convInW = p.at("conv_iw");
        g.inC = p.at("conv_ic");
        break;
    case ToeplitzKind::AvgPoolConv2D:
        requirePositive(
            prefix, p,
            {"pool_kh", "pool_kw", "pool_sh", "pool_sw", "pool_ih", "pool_iw", "pool_ic"});
        g.inH = p.at("pool_ih");
        g.inW = p.at("pool_iw");
        g.inC = p.at("pool_ic");
        g.poolKH = p.at("pool_kh");
        g.poolKW = p.at("pool_kw");
        g.poolSH = p.at("pool_sh");
        g.poolSW = p.at("pool_sw");
        g.convInH = convOut(prefix, "pooling window's vertical", g.inH, 0, g.poolKH, g.poolSH);
        g.convInW = convOut(prefix, "pooling window's horizontal", g.inW, 0, g.poolKW, g.poolSW);
        checkGiven(prefix, p, {{"conv_ih", g.convInH}, {"conv_iw", g.convInW}, {"conv_ic", g.inC}},
                   "the pooled image gives");
        break;
    }
    requirePositive(prefix, p, {"conv_kh", "conv_kw", "conv_oc", "conv_sh", "conv_sw"});
    g.kh = p.at("conv_kh");
    g.kw = p.at("conv_kw");
    g.outC = p.at("conv_oc");
    g.sh = p.at("conv_sh");
    g.sw = p.at("conv_sw");
    g.padH = p.at("conv_padh");
    g.padW = p.at("conv_padw");
    if (g.padH >= g.kh || g.padW >= g.kw)
        throw ModelError(prefix + "padding (" + std::to_string(g.padH) + ", " +
                         std::to_string(g.padW) +
                         ") must be smaller than the kernel: a larger one only adds outputs no "
                         "input reaches");
    g.outH = convOut(prefix, "vertical", g.convInH, g.padH, g.kh, g.sh);
    g.outW = convOut(prefix, "horizontal", g.convInW, g.padW, g.kw, g.sw);
    checkGiven(prefix, p, {{"conv_oh", g.outH}, {"conv_ow", g.outW}},
               "the input, kernel, stride and padding give");
    auto fits = [&](uint64_t a, uint64_t b, uint64_t c) {
        return a * b <= std::numeric_limits<uint32_t>::max() / std::max<uint64_t>(c, 1);
    };
    if (!fits(g.inH, g.inW, g.inC) || !fits(g.outH, g.outW, g.outC) ||
        !fits(uint64_t(g.kh) * g.kw, g.inC, g.outC) ||
        !fits(uint64_t(g.poolKH) * g.poolKW, uint64_t(g.kh) * g.kw, g.outC))
        throw ModelError(prefix + "the image, kernel or row sizes overflow 32 bits");
    const uint64_t in = uint64_t(g.inH) * g.inW * g.inC, out = uint64_t(g.outH) * g.outW * g.outC;
    if (in != numPre)
        throw ModelError(prefix + "the input image " + std::to_string(g.inH) + " x " +
                         std::to_string(g.inW) + " x " + std::to_string(g.inC) + " has " +
                         std::to_string(in) + " neurons, but the source group has " +
                         std::to_string(numPre));
    if (out != numPost)
        throw ModelError(prefix + "the output image " + std::to_string(g.outH) + " x " +
                         std::to_string(g.outW) + " x " + std::to_string(g.outC) + " has " +
                         std::to_string(out) + " neurons, but the target group has " +
                         std::to_string(numPost));
    return g;
}

} // namespace spikeforge
