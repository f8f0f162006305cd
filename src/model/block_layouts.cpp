// The Barabasi-Albert block layout (block_layouts.hpp): preferential attachment by sampling the
// list of edge endpoints, in which each node appears as often as its degree.
#include "model/block_layouts.hpp"

#include <algorithm>

namespace spikeforge::model_detail {

namespace {

// splitmix64 (Steele, Lea & Flood 2014): a small, well-mixed 64-bit generator.
struct SplitMix64 {
    uint64_t state;
    uint64_t next() {
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // Uniform in [0, n) by Lemire's multiply-shift on the high 32 bits (bias < n / 2^32).
    uint32_t below(uint64_t n) { return static_cast<uint32_t>(((next() >> 32) * n) >> 32); }
};

// FNV-1a of the group's name: each group draws its own graph from one model seed.
uint64_t nameHash(const std::string& s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : s)
        h = (h ^ c) * 0x100000001b3ull;
    return h;
}

} // namespace

std::vector<std::pair<uint32_t, uint32_t>>
barabasiAlbertTiles(uint32_t nodes, uint32_t attachments, uint64_t seed, const std::string& group) {
    SplitMix64 rng{seed ^ nameHash(group)};
    const uint32_t m = attachments;
    std::vector<std::pair<uint32_t, uint32_t>> edges;
    std::vector<uint32_t> endpoints;  // node v appears degree(v) times
    for (uint32_t i = 0; i <= m; i++) // the seed clique of m + 1 nodes
        for (uint32_t j = 0; j < i; j++) {
            edges.emplace_back(i, j);
            endpoints.push_back(i);
            endpoints.push_back(j);
        }
    std::vector<uint32_t> chosen;
    for (uint32_t t = m + 1; t < nodes; t++) {
        chosen.clear();
        while (chosen.size() < m) { // m distinct earlier nodes, each by its degree
            const uint32_t v = endpoints[rng.below(endpoints.size())];
            if (std::find(chosen.begin(), chosen.end(), v) == chosen.end()) chosen.push_back(v);
        }
        for (uint32_t v : chosen) {
            edges.emplace_back(t, v);
            endpoints.push_back(t);
            endpoints.push_back(v);
        }
    }
    std::vector<std::pair<uint32_t, uint32_t>> tiles;
    tiles.reserve(2 * edges.size());
    for (const auto& [a, b] : edges) {
        tiles.emplace_back(a, b);
        tiles.emplace_back(b, a);
    }
    std::sort(tiles.begin(), tiles.end());
    return tiles;
}

} // namespace spikeforge::model_detail
