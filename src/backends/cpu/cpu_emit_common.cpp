#include "backends/cpu/cpu_emit.hpp"

#include "codegen/arrays.hpp"

namespace spikeforge::cpu {

std::string Emitter::render(const std::string& code, const snippet::Context& ctx,
                            const Subs& extra) {
    if (code.empty()) return "";
    const auto scanned = snippet::scan(code, ctx);
    usesRng = usesRng || scanned.usesRng;
    snippet::RenderOptions o;
    o.precision = model.precision();
    o.lineLabel = ctx.group + "." + ctx.field;
    for (const auto& [k, v] : subs)
        (k.rfind("#size:", 0) == 0 ? o.arraySizes[k.substr(6)] : o.substitutions[k]) = v;
    for (const auto& [k, v] : extra)
        (k.rfind("#size:", 0) == 0 ? o.arraySizes[k.substr(6)] : o.substitutions[k]) = v;
    if (scanned.needsIndexChecks()) {
        // This field's slot in the model-wide error array: a number, so groups whose fields sit
        // in different slots still merge.
        const size_t slot = contexts::codeFieldSlot(model, ctx.group, ctx.field);
        o.errorFlag = "(" + env.array("sfErrors", "uint32_t", codegen::kSnippetErrorsArray) +
                      " + " +
                      env.number("sfErrSlot" + std::to_string(errorSlots++), "uint32_t",
                                 static_cast<double>(slot)) +
                      ")";
    }
    return snippet::render(scanned, o) + "#line SF_RESYNC\n";
}

void Emitter::bindParams(const snippet::Scanned& scanned, const SnippetBase& s,
                         const ParamValues& values, const std::set<std::string>& dynamic,
                         const std::string& owner, const std::string& prefix) {
    for (const auto& [name, value] : values) {
        if (!scanned.referencedNames.count(name)) continue;
        subs[name] = env.param(prefix + name, scalar(), value, owner, name, dynamic.count(name));
    }
    (void)s;
}

void Emitter::bindEGPs(const snippet::Scanned& scanned, const SnippetBase& s,
                       const std::string& owner, const std::string& prefix) {
    for (const auto& e : s.egps)
        if (scanned.referencedNames.count(e.name)) {
            subs[e.name] =
                env.array(prefix + e.name, codegen::resolveType(e.type, model.precision()),
                          owner + "." + e.name);
            subs["#size:" + e.name] = env.arraySize(prefix + e.name + "_n", owner + "." + e.name);
        }
}

std::string neuronVarIndex(VarAccess access, const std::string& idExpr, const std::string& nExpr) {
    switch (access) {
    case VarAccess::ReadOnly:
        return idExpr;
    case VarAccess::ReadOnlySharedNeuron:
        return "batch";
    default:
        return "(size_t)batch * " + nExpr + " + " + idExpr;
    }
}

std::string emitVarInit(Emitter& e, const std::string& group, const VarDecl& var,
                        const VarInit& init, const std::string& countExpr, bool batched,
                        const std::string& loopBody) {
    const std::string type = codegen::resolveType(var.type, e.model.precision());
    const std::string arr = e.env.array("i_" + var.name, type, group + "." + var.name);
    const std::string B = batched ? std::to_string(e.model.batchSize()) : "1u";
    std::string body;
    if (init.isConstant()) {
        body =
            "arr[(size_t)batch * n + i] = " +
            e.env.number("c_" + var.name, type == "double" ? "double" : "float", init.constant()) +
            ";\n";
    } else {
        const auto ctx = contexts::varInitContext(e.model, group, var.name, init);
        const auto scanned = snippet::scan(init.snippet().code, ctx);
        Subs saved = e.subs;
        e.subs.clear();
        e.bindParams(scanned, init.snippet(),
                     contexts::evaluateParams(init.snippet(), init.params(), e.model.dt()), {},
                     group, "ip_" + var.name + "_");
        const std::string stream =
            e.env.number("s_" + var.name, "uint32_t", codegen::streamId(group, "init." + var.name));
        body = "sf_rng sfRng; sf_rng_init(&sfRng, seed, " + stream +
               ", (sf_u32)i, batch, 0u);\n"
               "const uint32_t id = (uint32_t)i; (void)id;\n"
               "const uint32_t num_batch = " +
               std::to_string(e.model.batchSize()) + "u; (void)num_batch;\n" + e.scalar() +
               " value = 0;\n" + e.render(init.snippet().code, ctx) +
               "arr[(size_t)batch * n + i] = (" + type + ")value;\n";
        e.subs = saved;
    }
    std::string s = "{ // " + var.name + "\n" + type + "* arr = " + arr +
                    ";\n"
                    "const size_t n = " +
                    countExpr + ";\n";
    s += "#pragma omp parallel for collapse(2) schedule(static) num_threads(a->threads) if "
         "(a->threads > 1u && n * " +
         B +
         " >= 4096u)\n"
         "for (uint32_t batch = 0; batch < " +
         B +
         "; batch++)\n"
         "for (size_t i = 0; i < n; i++) {\n" +
         loopBody + body + "}\n//SF_END_PARALLEL\n}\n";
    return s;
}

} // namespace spikeforge::cpu
