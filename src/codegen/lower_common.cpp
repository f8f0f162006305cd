// What every lowering pass shares: rendering snippets through their analysis, binding
// parameters and EGPs to struct fields, variable initialisation loops.
#include "codegen/arrays.hpp"
#include "codegen/lowerer.hpp"
#include "model/analysis.hpp"
#include "model/contexts.hpp"

namespace spikeforge::codegen {

std::string Lowerer::render(const std::string& group, const std::string& field, const Subs& extra) {
    const auto& scanned = analysis::of(model, group, field);
    if (scanned.tokens.empty()) return "";
    usesRng = usesRng || scanned.usesRng;
    // Every assigned name whose store does not follow its assignments is stored at the end.
    const std::set<std::string> outside = snippet::assignedOutsideStatements(scanned);
    for (const std::string& n : scanned.assignedNames)
        if (!writeThrough.count(n) || outside.count(n)) writtenBack.insert(n);
    snippet::RenderOptions o;
    o.precision = model.precision();
    o.lineLabel = group + "." + field;
    o.writeThrough = writeThrough;
    o.synapseLoop = synapseLoop;
    for (const Subs* m : std::initializer_list<const Subs*>{&subs, &extra})
        for (const auto& [k, v] : *m)
            (k.rfind("#size:", 0) == 0 ? o.arraySizes[k.substr(6)] : o.substitutions[k]) = v;
    if (scanned.needsErrorSlot()) {
        // This field's word in the model-wide error array: a number, so groups whose fields sit
        // in different slots still merge.
        const size_t slot = snippetErrorWord(model.synapseGroups().size(),
                                             contexts::codeFieldSlot(model, group, field));
        o.errorFlag = errorsArrayAt("sfErrSlot" + std::to_string(m_errorSlots++), slot);
    }
    std::string code = snippet::render(scanned, o);
    // The label names the group: it becomes a placeholder, resolved after merging.
    const size_t open = code.find('"'), close = code.find('"', open + 1);
    if (open == std::string::npos || close == std::string::npos)
        throw InternalError("rendered snippet " + o.lineLabel + " has no #line label");
    m_labels.push_back(code.substr(open + 1, close - open - 1));
    code.replace(open + 1, close - open - 1, "$(@L" + std::to_string(m_labels.size() - 1) + ")");
    return code + "#line " + hookName(Hook::LineResync) + "\n";
}

std::string Lowerer::errorsArrayAt(const std::string& offsetField, size_t word) {
    return "(" + env.array("sfErrors", "uint32_t", kErrorsArray, Use::Write) + " + " +
           env.number(offsetField, "uint32_t", static_cast<double>(word)) + ")";
}

std::string Lowerer::errorWord(const SynapseGroup& sg) {
    return errorsArrayAt("sfErrWord", synapseErrorWord(synapseGroupIndex(model, sg)));
}

void Lowerer::bindParams(const snippet::Scanned& scanned, const ParamValues& values,
                         const std::set<std::string>& dynamic, const std::string& owner,
                         const std::string& prefix) {
    for (const auto& [name, value] : values) {
        if (!scanned.referencedNames.count(name)) continue;
        subs[name] = env.param(prefix + name, scalar(), value, owner, name, dynamic.count(name));
    }
}

void Lowerer::bindEGPs(const snippet::Scanned& scanned, const SnippetBase& s,
                       const std::string& owner, const std::string& prefix) {
    for (const auto& e : s.egps)
        if (scanned.referencedNames.count(e.name)) {
            subs[e.name] = env.array(prefix + e.name, resolveType(e.type, model.precision()),
                                     owner + "." + e.name, useOf(scanned, e.name));
            subs["#size:" + e.name] = env.arraySize(prefix + e.name + "_n", owner + "." + e.name);
            if (scanned.assignedNames.count(e.name)) writesEGP = true;
        }
}

VarInitLoop Lowerer::varInit(const std::string& group, const VarDecl& var, const VarInit& init,
                             const std::string& count, bool batched, const std::string& skip,
                             const std::string& step) {
    VarInitLoop l;
    l.ctype = resolveType(var.type, model.precision());
    l.array =
        env.array(initFieldPrefix + "i_" + var.name, l.ctype, group + "." + var.name, Use::Write);
    l.count = count;
    l.batch = batched ? model.batchSize() : 1u;
    l.skip = skip;
    l.body = varValue(group, var, init, "seed", "i", "batch", "sfValue", step) +
             "arr[(size_t)batch * n + i] = sfValue;\n";
    return l;
}

std::string Lowerer::varValue(const std::string& group, const VarDecl& var, const VarInit& init,
                              const std::string& seed, const std::string& element,
                              const std::string& batch, const std::string& local,
                              const std::string& step) {
    const std::string ctype = resolveType(var.type, model.precision());
    // Given values are copied in by the runtime after initialisation: the kernel writes 0.
    if (!init.hasSnippet())
        return "const " + ctype + " " + local + " = " +
               env.number(initFieldPrefix + "c_" + var.name, ctype == "double" ? "double" : "float",
                          init.hasValues() ? 0.0 : init.constant()) +
               ";\n";
    const std::string field = "init." + var.name;
    const auto& scanned = analysis::of(model, group, field);
    Subs saved = subs;
    subs = initNames;
    subs["dt"] = lit(model.dt());
    bindParams(scanned, contexts::evaluateParams(init.snippet(), init.params(), model.dt()), {},
               group, initFieldPrefix + "ip_" + var.name + "_");
    const bool pairs =
        scanned.referencedNames.count("id_pre") || scanned.referencedNames.count("id_post");
    const std::string stream = env.number(initFieldPrefix + "s_" + var.name, "uint32_t",
                                          streamId(group, "init." + var.name));
    // The element's own stream: the same value wherever it is evaluated (at initialisation, or
    // at each spike by a procedural layout).
    const std::string out = ctype + " " + local + ";\n{\n" + hookName(Hook::RngState) + " sfRng; " +
                            hookName(Hook::RngInit) + "(&sfRng, " + seed + ", " + stream +
                            ", (uint32_t)(" + element + "), " + batch + ", " + step +
                            ");\n"
                            "const uint32_t id = (uint32_t)(" +
                            element + "); (void)id;\n" + (pairs ? initPairDecode : "") +
                            "const uint32_t num_batch = " + std::to_string(model.batchSize()) +
                            "u; (void)num_batch;\n" + scalar() + " value = 0;\n" +
                            render(group, field) + local + " = (" + ctype + ")value;\n}\n";
    subs = saved;
    return out;
}

LoweredGroup Lowerer::finish(const std::string& groupName, KernelBody body, size_t elements,
                             SynapseExtent synapses) {
    return {groupName, std::move(body), std::move(env), std::move(m_labels), elements, synapses};
}

std::string neuronVarIndex(VarAccess access, const std::string& idExpr, const std::string& nExpr) {
    switch (access) {
    case VarAccess::ReadOnly:
        return idExpr;
    case VarAccess::ReadOnlySharedNeuron:
        return "batch";
    case VarAccess::ReadWrite:
    case VarAccess::ReadOnlyDuplicate:
        return "(size_t)batch * " + nExpr + " + " + idExpr;
    }
    throw InternalError("unknown variable access");
}

} // namespace spikeforge::codegen
