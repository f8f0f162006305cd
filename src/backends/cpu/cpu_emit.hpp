#pragma once
// Kernel emission for the CPU backend: one function per merged group and phase, written as C++
// with OpenMP. Group-specific values go through codegen::Env placeholders so that
// structurally identical groups merge.
#include "codegen/env.hpp"
#include "model/contexts.hpp"
#include "snippet/scanner.hpp"
#include "spikeforge/model.hpp"

#include <map>
#include <string>

namespace spikeforge::cpu {

using Subs = std::map<std::string, std::string>;

// Shared state while emitting one group.
struct Emitter {
    const Model& model;
    codegen::Env env;
    // Context name → generated expression. A key "#size:<name>" holds the element count of the
    // context array <name> (an EGP) for the bounds checks of its indices; keeping it in `subs`
    // saves and restores it with the substitutions.
    Subs subs;
    int errorSlots = 0;   // fields of run-time index-error slots requested so far
    bool usesRng = false; // some code rendered so far calls a rand_* function (Scanned::usesRng)
    std::string scalar() const {
        return model.precision() == Precision::Float ? "float" : "double";
    }
    std::string lit(double v) const { return codegen::literal(v, scalar()); }

    // Scan `code` in `ctx` and render it with the current substitutions (plus `extra`);
    // the output carries #line directives pointing at "<group>.<field>".
    std::string render(const std::string& code, const snippet::Context& ctx,
                       const Subs& extra = {});
    // Bind a snippet's params (and derived params, and EGPs) that `code` references.
    void bindParams(const snippet::Scanned& scanned, const SnippetBase& s,
                    const ParamValues& values, const std::set<std::string>& dynamic,
                    const std::string& owner, const std::string& prefix);
    void bindEGPs(const snippet::Scanned& scanned, const SnippetBase& s, const std::string& owner,
                  const std::string& prefix);
};

// The body of each phase for one group; the code refers to `grp` and the step args `a`.
codegen::EmittedGroup emitNeuronUpdate(const Model& m, const NeuronGroup& ng);
codegen::EmittedGroup emitNeuronInit(const Model& m, const NeuronGroup& ng);
codegen::EmittedGroup emitPresynapticUpdate(const Model& m, const SynapseGroup& sg);
codegen::EmittedGroup emitPostsynapticUpdate(const Model& m, const SynapseGroup& sg);
codegen::EmittedGroup emitSynapseInit(const Model& m, const SynapseGroup& sg);
codegen::EmittedGroup emitCurrentSourceInit(const Model& m, const CurrentSource& cs);
// Custom updates of one update group that can share one pass over the elements (same shape, no
// reductions or transposes) are fused: one loop runs all their bodies.
bool fusable(const CustomUpdate& a, const CustomUpdate& b);
codegen::EmittedGroup emitCustomUpdate(const Model& m, const std::vector<const CustomUpdate*>& cus);
codegen::EmittedGroup emitCustomUpdateInit(const Model& m, const CustomUpdate& cu);

// Shared by the init emitters: a loop initialising one variable.
//   count: elements per batch element; batched: whether it has the batch dimension;
//   elementExpr maps the loop index `i` to the element index for RNG keying.
std::string emitVarInit(Emitter& e, const std::string& group, const VarDecl& var,
                        const VarInit& init, const std::string& countExpr, bool batched,
                        const std::string& loopBody = "");

// Index expression of a variable of a neuron-shaped group with N elements.
std::string neuronVarIndex(VarAccess access, const std::string& idExpr, const std::string& nExpr);

} // namespace spikeforge::cpu
