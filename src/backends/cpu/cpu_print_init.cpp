// Initialisation on the CPU: the connectivity (rows built in parallel, then the column index by
// a counting sort), then every variable.
#include "backends/cpu/cpu_print.hpp"

namespace spikeforge::cpu {

namespace {

void printConnectivity(Writer& w, const codegen::ConnectivityBuild& c) {
    if (!c.preCalc.empty()) w << "{\n" << c.preCalc << "}\n";
    const std::string rows = "for (uint32_t id_pre = 0; id_pre < " + c.numPre +
                             "; id_pre++) {\n"
                             "const uint32_t sfStride = " +
                             c.stride + ";\n" + c.indType + "* sfRow = " + c.ind +
                             " + (size_t)id_pre * sfStride;\nuint32_t sfLen = 0;\n" + c.rowBody +
                             "if (sfLen > sfStride) {\n"
                             "__atomic_fetch_or(" +
                             c.error +
                             ", SF_ERROR_ROW_OVERFLOW, __ATOMIC_RELAXED);\n"
                             "sfLen = sfStride;\n}\n" +
                             c.rowLength + "[id_pre] = sfLen;\n}\n";
    parallelFor(w, c.numPre, 128, "schedule(dynamic, 16)", rows);
    if (!c.columnIndex) return;
    // Column index (CSC over synapse ids) for postsynaptic learning: a counting sort.
    w << "{\nuint32_t* cs = " + c.colStart +
             ";\n"
             "for (uint32_t j = 0; j <= " +
             c.numPost + "; j++) cs[j] = 0;\n" + "for (uint32_t i = 0; i < " + c.numPre +
             "; i++) for (uint32_t k = 0; k < " + c.rowLength + "[i]; k++) cs[" + c.ind +
             "[(size_t)i * " + c.stride + " + k] + 1]++;\n" + "for (uint32_t j = 0; j < " +
             c.numPost + "; j++) cs[j + 1] += cs[j];\n" + "std::vector<uint32_t> cursor(cs, cs + " +
             c.numPost + ");\n" + "for (uint32_t i = 0; i < " + c.numPre +
             "; i++) for (uint32_t k = 0; k < " + c.rowLength +
             "[i]; k++) {\nconst size_t s = (size_t)i * " + c.stride + " + k;\n" + c.colSyn +
             "[cursor[" + c.ind + "[s]]++] = (uint32_t)s;\n}\n}\n";
}

void printVarInit(Writer& w, const codegen::VarInitLoop& v) {
    const std::string B = std::to_string(v.batch) + "u";
    w << "{\n" + v.ctype + "* arr = " + v.array + ";\nconst size_t n = " + v.count + ";\n";
    parallelFor(w, "n * " + B, 2048, "collapse(2) schedule(static)",
                "for (uint32_t batch = 0; batch < " + B +
                    "; batch++)\n"
                    "for (size_t i = 0; i < n; i++) {\n" +
                    v.skip + v.body + "}\n");
    w << "}\n";
}

} // namespace

void printInit(Writer& w, const codegen::InitBody& b) {
    w << b.setup;
    if (b.connectivity) printConnectivity(w, *b.connectivity);
    for (const auto& v : b.vars)
        printVarInit(w, v);
}

} // namespace spikeforge::cpu
