// The C type table (codegen/ctype) and the struct layout built on it (codegen/layout).
#include "codegen/ctype.hpp"
#include "codegen/layout.hpp"
#include "codegen/plan.hpp"
#include "spikeforge/errors.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

using namespace spikeforge;
using namespace spikeforge::codegen;

TEST(CType, CanonicalNamesAndAliasesParse) {
    EXPECT_EQ(parseCType("float"), CType::Float);
    EXPECT_EQ(parseCType("double"), CType::Double);
    EXPECT_EQ(parseCType("uint32_t"), CType::UInt32);
    EXPECT_EQ(parseCType("unsigned int"), CType::UInt32);
    EXPECT_EQ(parseCType("int"), CType::Int32);
    EXPECT_EQ(parseCType("uint16_t"), CType::UInt16);
    EXPECT_EQ(parseCType("int8_t"), CType::Int8);
    EXPECT_EQ(parseCType("bool"), CType::Bool);
    EXPECT_EQ(parseCType("unsigned long long"), CType::UInt64);
    EXPECT_EQ(parseCType("float*"), CType::Pointer);
    EXPECT_EQ(parseCType("scalar"), std::nullopt);
    EXPECT_EQ(parseCType("uint24_t"), std::nullopt);
    EXPECT_THROW(cTypeOf("uint24_t"), InternalError);
}

TEST(CType, EveryTypeRoundTripsThroughItsCanonicalName) {
    for (CType t :
         {CType::Bool, CType::Int8, CType::UInt8, CType::Int16, CType::UInt16, CType::Int32,
          CType::UInt32, CType::Int64, CType::UInt64, CType::Float, CType::Double}) {
        EXPECT_EQ(parseCType(cName(t)), t) << cName(t);
    }
    EXPECT_EQ(sizeOf(CType::UInt16), 2u);
    EXPECT_EQ(sizeOf(CType::Double), 8u);
    EXPECT_EQ(sizeOf(CType::Pointer), 8u);
    EXPECT_TRUE(info(CType::Float).floating);
    EXPECT_FALSE(info(CType::UInt64).floating);
    EXPECT_TRUE(info(CType::Int16).isSigned);
    EXPECT_FALSE(info(CType::UInt8).isSigned);
}

TEST(CType, SnippetTypesFollowThePrecision) {
    EXPECT_EQ(fromSnippetType("scalar", Precision::Float), CType::Float);
    EXPECT_EQ(fromSnippetType("scalar", Precision::Double), CType::Double);
    EXPECT_EQ(fromSnippetType("unsigned int", Precision::Float), CType::UInt32);
    EXPECT_EQ(resolveType("scalar", Precision::Double), "double");
    EXPECT_EQ(resolveType("unsigned int", Precision::Float), "uint32_t");
    EXPECT_EQ(resolveType("int", Precision::Float), "int32_t");
    EXPECT_EQ(resolveType("bool", Precision::Float), "bool");
}

TEST(CType, NumbersAreStoredAndLoadedInTheirType) {
    unsigned char buf[8] = {};
    storeNumber(buf, CType::UInt16, 65535.0);
    uint16_t u16;
    std::memcpy(&u16, buf, 2);
    EXPECT_EQ(u16, 65535u);
    EXPECT_EQ(loadNumber(buf, CType::UInt16), 65535.0);
    storeNumber(buf, CType::Int8, -3.0);
    EXPECT_EQ(loadNumber(buf, CType::Int8), -3.0);
    storeNumber(buf, CType::Float, 0.1);
    EXPECT_EQ(loadNumber(buf, CType::Float), static_cast<double>(0.1f));
    storeNumber(buf, CType::Double, 0.1);
    EXPECT_EQ(loadNumber(buf, CType::Double), 0.1);
    EXPECT_THROW(storeNumber(buf, CType::Pointer, 1.0), InternalError);
}

TEST(Layout, FieldsAreAlignedToTheirSizeAndTheStructToTheLargest) {
    const std::vector<FieldDecl> fields = {
        {"a", "uint8_t"}, {"b", "double"}, {"c", "float*"}, {"d", "uint16_t"}, {"e", "float"}};
    const StructLayout l = layoutOf(fields);
    EXPECT_EQ(l.offsets, (std::vector<size_t>{0, 8, 16, 24, 28}));
    EXPECT_EQ(l.size, 32u);
    const StructLayout small = layoutOf({{"x", "uint16_t"}, {"y", "uint8_t"}});
    EXPECT_EQ(small.offsets, (std::vector<size_t>{0, 2}));
    EXPECT_EQ(small.size, 4u);
    EXPECT_EQ(layoutOf({}).size, 1u);
    EXPECT_THROW(layoutOf({{"s", "scalar"}}), InternalError);
}
