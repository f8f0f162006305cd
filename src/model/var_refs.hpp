#pragma once
// What a variable reference points at: the array, its element type and its dimensions.
#include "spikeforge/model.hpp"

namespace spikeforge::refs {

struct Resolved {
    std::string array;      // "<group>.<var>"
    std::string type;       // snippet type ("scalar", …)
    size_t elements = 0;    // elements per batch element (1 when there is no element dim)
    bool elementDim = true; // one value per element
    bool batchDim = false;  // one copy per batch element (under the model's batch size)
    const SynapseGroup* synapseGroup = nullptr; // set for synapse-shaped variables
    // Copies of each (batch element, element) between the two, [batch][slot][element]: a spike
    // queue's or a dendritic-delay ring's slots. A non-Broadcast access reads slot `slot` (an
    // expression of the custom-update body; empty: only Broadcast may name the target).
    size_t slots = 1;
    std::string slot = "0";
    // Why only reading is allowed, or empty ("a spike count").
    std::string readOnly;
};

// Throws ModelError naming the custom update and the reference when the target does not exist.
Resolved resolve(const Model& m, const VarReference& ref, const std::string& owner,
                 const std::string& refName);

// Array name ("<group>.<egp>") of a custom update's extra-global-parameter reference.
std::string resolveEGP(const Model& m, const CustomUpdate& cu, const EGPDecl& decl);

// Dimensions of a custom update's own variable.
Resolved ownVar(const CustomUpdate& cu, const CustomUpdateVarDecl& v, unsigned batchSize);

} // namespace spikeforge::refs
