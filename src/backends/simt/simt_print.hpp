#pragma once
// The SIMT generator's printers: one per body kind, each turning a merged group's body into the
// stages it runs. The generator (simt_generator.cpp) loads the struct fields, dispatches
// work-items to groups and assembles the launches; the printers own the algorithms.
#include "backends/simt/simt.hpp"

#include <string>
#include <vector>

namespace spikeforge::simt {

// What a printer knows about the merged group it prints.
struct GroupContext {
    const codegen::Plan& plan;
    const codegen::MergedGroupTable& table;
    const codegen::KernelGroup& group; // per group of the table: elements, synapse extents
    unsigned workGroupSize;            // Dialect::workGroupSize
    size_t fewElements = 8192;         // Dialect::fewElements
    unsigned subGroupSize = 0;         // Dialect::subGroupSize
    bool cpuDevice = false;            // Dialect::cpuDevice
};

// One launch's share of a merged group. Stage k of every group of a run (consecutive groups of a
// kernel with the same body kind, see simt_generator.cpp) runs in launch k of that run; the
// stages of a group run in order, and a launch boundary is a barrier across the whole device, so
// a stage sees everything the earlier ones wrote.
//
// Names in scope of `body`:
//   grp        SF_GLOBAL pointer to the group's struct; its fields are loaded as sfp_<field>
//              (SF_GLOBAL T*, arrays) and sfv_<field> (numbers), as the fragments expect
//   a          const SFStepArgs*
//   seed       uint64_t, a->seed (every kernel)
//   batch      uint32_t, the dimension-1 index (< dim1)
//   sfLid      uint64_t, the work-item's index in the group's range; ranges are padded to whole
//              work-groups, so the body guards against its item count
//   sfLocalId  uint32_t, the work-item's index in its work-group (< SF_WG)
//   sfLocal    SF_LOCAL uint32_t*, localWords words shared by the work-group, 8-byte aligned
//              (reinterpret as needed: (SF_LOCAL scalar*)sfLocal)
// and the prelude's: SF_WG (the work-group size), SF_BATCH (the plan's batch size), scalar, the
// dialect's macros and atomics (simt.hpp), sf_atomic_add_scalar(p, v), the random-number
// functions and sf_index. Hook macros whose meaning depends on the algorithm (SF_ADD_TO_POST,
// SF_ADD_TO_POST_DELAY, SF_ADD_SYNAPSE) are defined by the printer inside its body and undefined
// at its end. Every work-item of a work-group must reach the same barriers: guard work with
// conditions, never return before a barrier; `batch` and the group are uniform in a work-group.
struct Stage {
    std::string body;
    std::vector<size_t> items; // per group of the table: work-items needed in dimension 0
    unsigned dim1 = 1;         // work-items in dimension 1: the batch size, or 1
    size_t localWords = 0;     // 32-bit words of sfLocal the body uses
};

std::vector<Stage> neuronUpdateStages(const GroupContext& c, const codegen::NeuronUpdateBody& b);
std::vector<Stage> propagationStages(const GroupContext& c, const codegen::PropagationBody& b);
std::vector<Stage> customUpdateStages(const GroupContext& c, const codegen::CustomUpdateBody& b);
std::vector<Stage> initStages(const GroupContext& c, const codegen::InitBody& b);

} // namespace spikeforge::simt
