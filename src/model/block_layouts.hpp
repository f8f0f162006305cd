#pragma once
// Block layouts the host builds at Model::finalise (BlockSparseInit: Mask, BarabasiAlbert), as
// sorted (block-row, block-column) tiles.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace spikeforge::model_detail {

// The Barabasi-Albert block graph on `nodes` block-nodes with `attachments` (m) edges per new
// node, both orientations of every edge, sorted; drawn from `seed` and `group` only (integer
// arithmetic, no library distribution), so every machine builds the same layout. Needs
// 1 <= m < nodes.
std::vector<std::pair<uint32_t, uint32_t>>
barabasiAlbertTiles(uint32_t nodes, uint32_t attachments, uint64_t seed, const std::string& group);

} // namespace spikeforge::model_detail
