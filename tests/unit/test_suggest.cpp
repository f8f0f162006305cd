// The one "did you mean" rule shared by snippets, the model, the runtime and the CLI.
#include "snippet/suggest.hpp"

#include <gtest/gtest.h>

using namespace spikeforge;

TEST(Suggest, EditDistance) {
    EXPECT_EQ(editDistance("size", "size"), 0u);
    EXPECT_EQ(editDistance("sise", "size"), 1u);
    EXPECT_EQ(editDistance("cdua", "cuda"), 1u); // a swap is one edit
    EXPECT_EQ(editDistance("LIF", "lif"), 0u);
    EXPECT_EQ(editDistance("LIF", "lif", false), 3u);
    EXPECT_EQ(editDistance("", "abc"), 3u);
}

TEST(Suggest, ClosestName) {
    EXPECT_EQ(closestName("sise", {"name", "size", "model"}), "size");
    EXPECT_EQ(closestName("Unifrom", {"Normal", "Uniform"}), "Uniform");
    EXPECT_EQ(closestName("Lifx", {"LIF", "Lif"}), "Lif");
    EXPECT_EQ(closestName("completely_different", {"size", "name"}), "");
    EXPECT_EQ(closestName("ab", {"xy"}), "");
    EXPECT_EQ(suggestion("sise", {"size"}), " (did you mean 'size'?)");
    EXPECT_EQ(suggestion("zzzz", {"a", "b"}), " (expected one of: 'a', 'b')");
}

TEST(Suggest, DidYouMeanAndExactMatches) {
    EXPECT_EQ(didYouMean("Isyn_", {"Isyn", "V"}), " (did you mean 'Isyn'?)");
    EXPECT_EQ(didYouMean("xyz", {"tau", "V"}), "");
    EXPECT_EQ(closestName("tau", {"tau"}), "");    // an exact match is no suggestion
    EXPECT_EQ(closestName("lif", {"LIF"}), "LIF"); // case differences are a typo
}
