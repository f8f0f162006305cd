#pragma once
// Reductions in SIMT kernels: the rule choosing a batch reduction's strategy, and the pieces
// every reduction prints (accumulators, folds and the work-group tree through local memory).
#include "backends/simt/simt_print.hpp"
#include "codegen/kernel_plan.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace spikeforge::simt {

enum class BatchReductionStrategy {
    ItemPerElement,  // one work-item per element loops over the batch
    GroupPerElement, // one work-group per element: its work-items share the batch, then a tree
};

// The rule (docs/internals.md): a work-group per element when the batch fills at least half a
// work-group (batch >= workGroupSize / 2) and the elements alone are too few to fill the device
// (fewer than `fewElements` work-items, Dialect::fewElements, at most kFewElements); otherwise a
// work-item per element. `elements` is the largest group of the merged group (the strategy is
// one per merged group).
inline constexpr size_t kFewElements = 8192;
BatchReductionStrategy chooseBatchReduction(size_t elements, unsigned batch, unsigned workGroupSize,
                                            size_t fewElements = kFewElements);
// The strategy customUpdateStages uses for a batch reduction `b` of the merged group `c`.
BatchReductionStrategy batchReductionStrategy(const GroupContext& c,
                                              const codegen::CustomUpdateBody& b);

// `ctype sfAcc_<name> = <identity>;` for each reduction.
std::string declareAccumulators(const std::vector<codegen::Reduction>& rs);
// Folds each reduction's local into its accumulator.
std::string foldAccumulators(const std::vector<codegen::Reduction>& rs);
// Local-memory words the tree of `rs` needs: one 8-byte slot per work-item and reduction.
size_t treeWords(const std::vector<codegen::Reduction>& rs, unsigned workGroupSize);
// Reduces every work-item's accumulators over the work-group (all work-items must run it: it
// has barriers); afterwards sfRed_<name>[0] holds each result, for any work-item to read. Uses
// the sub-group reductions where c.subGroupSize is set and every reduction is float or double.
std::string treeReduce(const GroupContext& c, const std::vector<codegen::Reduction>& rs);
// `array[index] = <result>;` for each reduction, the result being `result(name)`.
std::string writeResults(const std::vector<codegen::Reduction>& rs, bool fromTree);

} // namespace spikeforge::simt
