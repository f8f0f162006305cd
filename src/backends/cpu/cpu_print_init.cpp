// Initialisation on the CPU: the layout's build steps (codegen::BuildStep), then every variable.
#include "backends/cpu/cpu_print.hpp"

namespace spikeforge::cpu {

namespace {

// A step of a layout's build (codegen::BuildStep), in the CPU's loops.
void printBuildStep(Writer& w, const codegen::BuildStep& s) {
    using Kind = codegen::BuildStep::Kind;
    const std::string range = "for (uint64_t sfI = 0; sfI < (uint64_t)(" + s.count + "); sfI++)";
    // Rows of connectivity are heavy items of uneven cost; the other steps' items are light.
    const bool heavy = s.extent == codegen::BuildStep::Extent::Pre;
    switch (s.kind) {
    case Kind::Serial:
        w << "{\n" << s.body << "}\n";
        break;
    case Kind::ForEach:
        parallelFor(w, s.count, heavy ? 128 : 16384,
                    heavy ? "schedule(dynamic, 16)" : "schedule(static)",
                    range + " {\n" + s.body + "}\n");
        break;
    case Kind::InclusiveScan:
        w << "{\nuint32_t* sfA = " + s.array + ";\nfor (uint64_t sfI = 1; sfI < (uint64_t)(" +
                 s.count + "); sfI++) sfA[sfI] += sfA[sfI - 1u];\n}\n";
        break;
    case Kind::SortSegments:
        parallelFor(w, s.count, 256, "schedule(dynamic, 16)",
                    range + " std::sort(" + s.array + " + " + s.bounds + "[sfI], " + s.array +
                        " + " + s.bounds + "[sfI + 1u]);\n");
        break;
    }
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
    for (const auto& step : b.build)
        printBuildStep(w, step);
    for (const auto& v : b.vars)
        printVarInit(w, v);
}

} // namespace spikeforge::cpu
