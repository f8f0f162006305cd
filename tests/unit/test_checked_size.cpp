// Overflow-checked size arithmetic (src/codegen/checked_size.hpp).
#include "codegen/checked_size.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <limits>

using namespace spikeforge;
using namespace spikeforge::codegen;

namespace {

constexpr size_t kMax = std::numeric_limits<size_t>::max();

std::string messageOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const ModelError& e) {
        return e.what();
    }
    return "(no ModelError)";
}

TEST(CheckedSize, MultiplyAtTheLimit) {
    EXPECT_EQ(checkedMul(0, kMax, "x"), 0u);
    EXPECT_EQ(checkedMul(kMax, 1, "x"), kMax);
    EXPECT_EQ(checkedMul(size_t(1) << 32, (size_t(1) << 32) - 1, "x"),
              (size_t(1) << 32) * ((size_t(1) << 32) - 1));
    EXPECT_THROW(checkedMul(size_t(1) << 32, size_t(1) << 32, "x"), ModelError);
    EXPECT_THROW(checkedMul(kMax / 2 + 1, 2, "x"), ModelError);
    EXPECT_EQ(checkedMul(kMax / 2, 2, "x"), kMax - 1);
}

TEST(CheckedSize, MessageNamesWhatWasSized) {
    const auto msg = messageOf([] { checkedMul(kMax, 3, "synapse group 'Syn': synapses"); });
    EXPECT_NE(msg.find("synapse group 'Syn': synapses"), std::string::npos) << msg;
    EXPECT_NE(msg.find("overflows"), std::string::npos) << msg;
}

TEST(CheckedSize, ProductAndSum) {
    EXPECT_EQ(checkedProduct({3, 5, 7}, "x"), 105u);
    EXPECT_EQ(checkedProduct({}, "x"), 1u);
    // An empty dimension makes the array empty whatever the other factors.
    EXPECT_EQ(checkedProduct({kMax, kMax, 0}, "x"), 0u);
    EXPECT_THROW(checkedProduct({size_t(1) << 40, size_t(1) << 20, 16}, "x"), ModelError);
    EXPECT_EQ(checkedAdd(kMax - 1, 1, "x"), kMax);
    EXPECT_THROW(checkedAdd(kMax, 1, "x"), ModelError);
}

TEST(CheckedSize, HumanBytes) {
    EXPECT_EQ(humanBytes(0), "0 B");
    EXPECT_EQ(humanBytes(1023), "1023 B");
    EXPECT_EQ(humanBytes(1536), "1.5 KiB");
    EXPECT_EQ(humanBytes(uint64_t(1288490189)), "1.2 GiB");
    EXPECT_EQ(humanBytes(uint64_t(1) << 42), "4.0 TiB");
    EXPECT_EQ(humanBytes(std::numeric_limits<uint64_t>::max()), "16.0 EiB");
}

} // namespace
