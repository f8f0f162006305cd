#include "codegen/kernel_plan.hpp"

#include "spikeforge/errors.hpp"

namespace spikeforge::codegen {

const char* hookName(Hook h) {
    switch (h) {
    case Hook::AddToPost:
        return "SF_ADD_TO_POST";
    case Hook::AddToPostDelay:
        return "SF_ADD_TO_POST_DELAY";
    case Hook::AddToPre:
        return "SF_ADD_TO_PRE";
    case Hook::AddSynapse:
        return "SF_ADD_SYNAPSE";
    case Hook::ReportError:
        return "SF_REPORT_ERROR";
    case Hook::AtomicAddU32:
        return "SF_ATOMIC_ADD_U32";
    case Hook::TimeMin:
        return "SF_TIME_MIN";
    case Hook::LineResync:
        return "SF_RESYNC";
    case Hook::RngState:
        return "sf_rng";
    case Hook::RngInit:
        return "sf_rng_init";
    case Hook::Global:
        return "SF_GLOBAL";
    case Hook::Prefetch:
        return "SF_PREFETCH";
    case Hook::FloatBits:
        return "SF_FLOAT_BITS";
    }
    return "";
}

std::string globalPointer(const std::string& elementType) {
    return std::string(hookName(Hook::Global)) + " " + elementType + "*";
}

std::vector<std::string*> fragmentsOf(KernelBody& body) {
    return std::visit([](auto& b) { return b.fragments(); }, body);
}

namespace {

std::string flags(const NeuronUpdateBody& b) {
    return std::string(b.usesRng ? "rng" : "") + (b.unguardedWrites ? " writes" : "") +
           (b.loopFree ? "" : " loops") + (b.independentNeurons ? "" : " shared");
}
std::string flags(const PropagationBody& b) {
    return std::string(b.presynaptic ? "pre" : "post") + (b.loop.indexIsTarget ? ",index" : "") +
           (b.loop.setupGeneratesRow ? ",rows" : "") + ",w" + std::to_string(b.writesSpikeSide) +
           std::to_string(b.writesOtherSide) + std::to_string(b.writesShared) + ",span" +
           std::to_string(static_cast<int>(b.span)) + "x" + std::to_string(b.threadsPerSpike) +
           ",matrix" + std::to_string(b.matrix.blockSize) + ",run" +
           std::to_string(b.loop.runLength);
}
std::string flags(const CustomUpdateBody& b) {
    std::string s = std::to_string(static_cast<int>(b.kind)) + "," + std::to_string(b.batch);
    for (const auto& r : b.reductions)
        s += r.op == ReduceOp::Sum ? ",sum" : ",max";
    return s;
}
std::string flags(const InitBody& b) {
    std::string s = b.readsEarlierGroups ? "after," : "";
    for (const auto& step : b.build)
        s += "b" + std::to_string(static_cast<int>(step.kind)) +
             std::to_string(static_cast<int>(step.extent));
    for (const auto& v : b.vars)
        s += "," + std::to_string(v.batch);
    return s;
}

} // namespace

std::string structureOf(const KernelBody& body) {
    return std::to_string(body.index()) + ":" +
           std::visit([](const auto& b) { return flags(b); }, body);
}

std::string timeMinLiteral(Precision precision) {
    switch (precision) {
    case Precision::Float:
        return "(-3.40282347e+38f)"; // -FLT_MAX
    case Precision::Double:
        return "(-1.7976931348623157e+308)"; // -DBL_MAX
    }
    throw InternalError("unknown precision");
}

} // namespace spikeforge::codegen
