// Validation of custom updates: references, shapes, batching and reductions. Each failure is a
// ModelError naming the custom update and the reference or variable at fault.
#include "model/analysis.hpp"
#include "model/validate.hpp"
#include "model/var_refs.hpp"
#include "snippet/scanner.hpp"
#include "snippet/suggest.hpp"

#include <algorithm>

namespace spikeforge {

namespace {

using A = CustomUpdateVarAccess;

std::string where(const CustomUpdate& cu) {
    return "custom update '" + cu.name() + "': ";
}

struct NamedRef {
    const VarRefDecl* decl;
    refs::Resolved target;
};

std::vector<NamedRef> resolveAll(const Model& m, const CustomUpdate& cu) {
    const auto& model = cu.model();
    std::vector<std::string> declared;
    for (const auto& d : model.varRefs)
        declared.push_back(d.name);
    for (const auto& [name, ref] : cu.varRefs())
        if (std::find(declared.begin(), declared.end(), name) == declared.end()) {
            throw ModelError(where(cu) + "model '" + model.name + "' has no reference '" + name +
                             "'" + didYouMean(name, declared));
        }
    std::vector<NamedRef> out;
    for (const auto& d : model.varRefs) {
        auto it = cu.varRefs().find(d.name);
        if (it == cu.varRefs().end())
            throw ModelError(where(cu) + "reference '" + d.name + "' of model '" + model.name +
                             "' is not bound to a variable");
        auto target = refs::resolve(m, it->second, cu.name(), d.name);
        if (target.type != d.type)
            throw ModelError(where(cu) + "reference '" + d.name + "' has type '" + d.type +
                             "' but " + target.array + " is '" + target.type + "'");
        out.push_back({&d, std::move(target)});
    }
    return out;
}

// addCustomUpdate's shape: over synapses when the first element-shaped reference names a
// synapse variable (fixShape then requires every one to).
bool referencesSynapses(const std::vector<NamedRef>& refs) {
    for (const auto& r : refs)
        if (r.target.elementDim) return r.target.synapseGroup != nullptr;
    return false;
}

// ReduceSum / ReduceMax on a reference become the reduction over the dimension its variable
// lacks (GeNN's rule): the batch of a batched update, or else the elements. A variable lacking
// both (a batched update's shared scalar) or neither is refused: the dimension is not implied.
// In a model of batch size 1 the batch is no dimension to choose, so that the model a user
// batches builds unbatched too (as in GeNN): a shared variable with elements is the reduction
// over the one batch element (a copy), one without elements the reduction over them.
void resolveReductions(CustomUpdate& cu, CustomUpdateModel& model,
                       const std::vector<NamedRef>& refs, unsigned batchSize) {
    for (const auto& v : model.vars) {
        if (v.access == A::ReduceSum || v.access == A::ReduceMax)
            throw ModelError(where(cu) + "variable '" + v.name + "' has access " +
                             toString(v.access) +
                             ", which is for references (the referenced variable's shape implies "
                             "the dimension); an own variable takes ReduceBatch… or ReduceNeuron…");
        if (v.access == A::Broadcast)
            throw ModelError(where(cu) + "variable '" + v.name +
                             "' has access Broadcast, which is for references (it writes every "
                             "copy of another group's variable)");
    }
    for (auto& d : model.varRefs) {
        if (d.access != A::ReduceSum && d.access != A::ReduceMax) continue;
        const auto r = std::find_if(refs.begin(), refs.end(),
                                    [&](const NamedRef& n) { return n.decl->name == d.name; });
        if (r == refs.end()) throw InternalError("reference '" + d.name + "' not resolved");
        const bool sum = d.access == A::ReduceSum;
        const bool batchOfOne = batchSize == 1;
        const bool lacksElements = !r->target.elementDim;
        const bool lacksBatch =
            (cu.isBatched() || (batchOfOne && !lacksElements)) && !r->target.batchDim;
        if (lacksBatch == lacksElements)
            throw ModelError(where(cu) + "reference '" + d.name + "' (" + r->target.array +
                             ") has access " + toString(d.access) + ", but its variable " +
                             (lacksBatch ? "lacks both the batch and the element dimension"
                                         : "has every dimension of the update") +
                             ": say which to reduce over (ReduceBatch" + (sum ? "Sum" : "Max") +
                             " or ReduceNeuron" + (sum ? "Sum" : "Max") + ")");
        d.access = lacksBatch ? (sum ? A::ReduceBatchSum : A::ReduceBatchMax)
                              : (sum ? A::ReduceNeuronSum : A::ReduceNeuronMax);
    }
}

// Element count and (for WU-shaped updates) synapse group, from the references with an element
// dimension; every one of them must agree.
void fixShape(const CustomUpdate& cu, const std::vector<NamedRef>& refs, size_t& elements,
              const SynapseGroup*& sg) {
    const NamedRef* first = nullptr;
    for (const auto& r : refs) {
        if (!r.target.elementDim) continue;
        if (cu.isWUShaped() && !r.target.synapseGroup)
            throw ModelError(where(cu) + "reference '" + r.decl->name + "' (" + r.target.array +
                             ") is not a synapse variable; a WU custom update needs them");
        if (!cu.isWUShaped() && r.target.synapseGroup)
            throw ModelError(where(cu) + "reference '" + r.decl->name + "' (" + r.target.array +
                             ") is a synapse variable, but the update runs over neurons (its "
                             "first element-shaped reference names a neuron-shaped variable)");
        if (!first) {
            first = &r;
            continue;
        }
        if (cu.isWUShaped() && r.target.synapseGroup != first->target.synapseGroup)
            throw ModelError(where(cu) + "references '" + first->decl->name + "' and '" +
                             r.decl->name + "' name variables of different synapse groups ('" +
                             first->target.synapseGroup->name() + "', '" +
                             r.target.synapseGroup->name() + "')");
        if (r.target.elements != first->target.elements)
            throw ModelError(where(cu) + "shape mismatch: reference '" + first->decl->name +
                             "' has " + std::to_string(first->target.elements) + " elements, '" +
                             r.decl->name + "' has " + std::to_string(r.target.elements));
    }
    if (!first)
        throw ModelError(where(cu) + "needs a reference to an element-shaped variable to fix "
                                     "its size");
    elements = first->target.elements;
    sg = first->target.synapseGroup;
}

void checkAccess(const CustomUpdate& cu, const std::vector<NamedRef>& refs) {
    bool batchRed = false, neuronRed = false;
    for (const auto& v : cu.model().vars) {
        batchRed = batchRed || isBatchReduction(v.access);
        neuronRed = neuronRed || isNeuronReduction(v.access);
    }
    for (const auto& r : refs) {
        const auto a = r.decl->access;
        const std::string name = "reference '" + r.decl->name + "' (" + r.target.array + ")";
        const bool writes = a == A::ReadWrite || a == A::Broadcast || isReduction(a);
        if (writes && !r.target.readOnly.empty())
            throw ModelError(where(cu) + name + " is " + r.target.readOnly +
                             ", which is read-only (" + toString(a) + " would write it)");
        batchRed = batchRed || isBatchReduction(a);
        neuronRed = neuronRed || isNeuronReduction(a);
        if (isBatchReduction(a) && r.target.batchDim && cu.isBatched())
            throw ModelError(where(cu) + name +
                             " is a batch reduction into a variable that has "
                             "a batch dimension");
        if (isNeuronReduction(a) && r.target.elementDim)
            throw ModelError(where(cu) + name +
                             " is a neuron reduction into a variable that has "
                             "an element dimension");
        if (a == A::ReadWrite && !r.target.elementDim)
            throw ModelError(where(cu) + name +
                             " has no element dimension: every element would "
                             "write it (use a ReduceNeuron access)");
        if (a == A::ReadWrite && cu.isBatched() && !r.target.batchDim)
            throw ModelError(where(cu) + name +
                             " is shared by the batch: a batched update "
                             "cannot write it (use a ReduceBatch access)");
        if (a == A::ReadOnlySharedNeuron && r.target.elementDim)
            throw ModelError(where(cu) + name +
                             " must have one value per batch element "
                             "(ReadOnlySharedNeuron)");
        if (a == A::Broadcast && !r.target.elementDim)
            throw ModelError(where(cu) + name +
                             " has no element dimension: every element would write it (Broadcast)");
        if (a == A::Broadcast && cu.isBatched())
            throw ModelError(where(cu) + name +
                             " is Broadcast, which writes every batch element's copy, but the "
                             "update is batched by its other references (each batch element "
                             "would write them all)");
        if (a != A::Broadcast && r.target.slot.empty())
            throw ModelError(where(cu) + name + " holds " + std::to_string(r.target.slots) +
                             " delay slots per element: only Broadcast access (writing every "
                             "slot) may name it");
    }
    if (batchRed && neuronRed)
        throw ModelError(where(cu) + "batch and neuron reductions cannot be mixed in one update");
    if (neuronRed && cu.isWUShaped())
        throw ModelError(where(cu) + "neuron reductions are for neuron-shaped updates only");
}

// Transposes: WU-shaped, Dense, no reduction in the same update, and a target of the transposed
// shape and the same type.
void checkTransposes(const Model& m, const CustomUpdate& cu, const std::vector<NamedRef>& refs) {
    bool anyReduction = std::any_of(cu.model().vars.begin(), cu.model().vars.end(),
                                    [](const auto& v) { return isReduction(v.access); });
    for (const auto& r : refs)
        anyReduction = anyReduction || isReduction(r.decl->access);
    for (const auto& r : refs) {
        const auto& ref = cu.varRefs().at(r.decl->name);
        if (ref.transposeGroup.empty()) continue;
        const std::string name = "reference '" + r.decl->name + "': ";
        if (!cu.isWUShaped() || !r.target.synapseGroup)
            throw ModelError(where(cu) + name +
                             "only WU custom updates over synapse variables "
                             "can transpose");
        if (anyReduction)
            throw ModelError(where(cu) + name +
                             "a transpose cannot be combined with a reduction "
                             "in one update");
        const SynapseGroup& src = *r.target.synapseGroup;
        const SynapseGroup* dst = nullptr;
        for (const auto& sg : m.synapseGroups())
            if (sg->name() == ref.transposeGroup) dst = sg.get();
        if (!dst)
            throw ModelError(where(cu) + name + "no synapse group '" + ref.transposeGroup +
                             "' to transpose into");
        // A BlockSparse group transposes into the group whose layout is its transpose.
        const bool blocks = src.blockSparse() && dst->blockSparse() &&
                            dst->blockSparse()->layout == BlockLayout::Transposed &&
                            dst->blockSparse()->transposeOf == src.name();
        if (!blocks && (!matrixTraits(src.matrixType()).transposable ||
                        !matrixTraits(dst->matrixType()).transposable))
            throw ModelError(where(cu) + name +
                             "transposes need Dense connectivity on both sides, or a "
                             "BlockSparse group and a BlockSparse group with the layout "
                             "Transposed of it (transposeOf = '" +
                             src.name() + "')");
        if (dst->source().size() != src.target().size() ||
            dst->target().size() != src.source().size())
            throw ModelError(where(cu) + name + "transpose target '" + ref.transposeGroup +
                             "' has the wrong shape: " + std::to_string(dst->source().size()) +
                             "x" + std::to_string(dst->target().size()) + ", needs " +
                             std::to_string(src.target().size()) + "x" +
                             std::to_string(src.source().size()));
        const auto t = refs::resolve(m, {ref.transposeGroup, ref.transposeVar, "", ""}, cu.name(),
                                     r.decl->name);
        if (t.synapseGroup != dst || t.type != r.decl->type)
            throw ModelError(where(cu) + name + "transpose target '" + t.array +
                             "' must be a synapse variable of type " + r.decl->type);
    }
}

// Reductions accumulate sums and maxima (from -INFINITY) in the target's type: an integer target
// would wrap or truncate, so only floating point is accepted — a rule of the model, checked here
// for every backend. The message names the C type the variable has in generated code.
void checkReductionTypes(const CustomUpdate& cu, Precision precision) {
    auto check = [&](const std::string& name, const std::string& type, A access) {
        if (!isReduction(access)) return;
        const auto t = snippet::parseTypeName(type, cu.name() + "." + name);
        if (t == snippet::Type::F32 || t == snippet::Type::F64 || t == snippet::Type::Scalar)
            return;
        throw ModelError(where(cu) + "reduction target '" + name +
                         "' must be floating point, not " + snippet::typeName(t, precision));
    };
    for (const auto& v : cu.model().vars)
        check(v.name, v.type, v.access);
    for (const auto& r : cu.model().varRefs)
        check(r.name, r.type, r.access);
}

} // namespace

void checkBufferReferences(const Model& m, const analysis::Results& results) {
    auto addsDelayed = [&](const SynapseGroup& sg, const char* field) {
        const auto it = results.slots.find({sg.name(), field});
        return it != results.slots.end() && results.fields[it->second].usesAddToPostDelay;
    };
    for (const auto& cu : m.customUpdates())
        for (const auto& [name, ref] : cu->varRefs()) {
            if (ref.var != "denDelay") continue;
            for (const auto& sg : m.synapseGroups())
                if (sg->name() == ref.group && !addsDelayed(*sg, "preSpikeSynCode") &&
                    !addsDelayed(*sg, "synapseDynamicsCode") &&
                    !addsDelayed(*sg, "preEventSynCode"))
                    throw ModelError(where(*cu) + "reference '" + name + "': synapse group '" +
                                     ref.group +
                                     "' has no dendritic-delay buffer (its code never calls "
                                     "addToPostDelay)");
        }
}

void Model::finaliseCustomUpdates() {
    for (auto& cuPtr : m_customUpdates) {
        CustomUpdate& cu = *cuPtr;
        const auto& model = cu.model();
        const Numerics num{m_dt, m_precision};
        checkParams(cu.name(), "params", model, cu.params(), num);
        std::vector<VarDecl> vars;
        for (const auto& v : model.vars)
            vars.push_back({v.name, v.type, VarAccess::ReadWrite});
        checkVars(cu.name(), "vars", vars, cu.varInits(), model.name, false, num);
        cu.m_model = cu.m_declared; // finalise may run again: resolve from what was given
        const auto refs = resolveAll(*this, cu);
        if (cu.m_shapeInferred) cu.m_wuShaped = referencesSynapses(refs);
        fixShape(cu, refs, cu.m_numElements, cu.m_synapseGroup);
        // Broadcast references write every batch copy at once: they do not batch the update.
        cu.m_batched =
            m_batchSize > 1 && std::any_of(refs.begin(), refs.end(), [](const NamedRef& r) {
                return r.target.batchDim && r.decl->access != A::Broadcast;
            });
        resolveReductions(cu, cu.m_model, refs, m_batchSize);
        checkAccess(cu, refs);
        checkTransposes(*this, cu, refs);
        checkReductionTypes(cu, m_precision);
        for (const auto& e : model.egpRefs)
            refs::resolveEGP(*this, cu, e);
        for (const auto& [name, ref] : cu.egpRefs())
            if (std::none_of(model.egpRefs.begin(), model.egpRefs.end(),
                             [&](const EGPDecl& d) { return d.name == name; }))
                throw ModelError(where(cu) + "model '" + model.name + "' has no EGP reference '" +
                                 name + "'");
        checkDynamic(cu.name(), model, cu.params(), cu.dynamicParams(), m_dt);
    }
}

} // namespace spikeforge
