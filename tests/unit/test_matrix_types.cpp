// The matrix-type table (spikeforge/model.hpp, src/model/matrix.cpp): a row per enumerator, in
// order, with distinct names; the names configs, Python and messages use all come from it.
#include "spikeforge/model.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace spikeforge;

TEST(MatrixTypes, EveryTypeHasItsRowInOrderWithDistinctNames) {
    const auto& rows = matrixTypes();
    ASSERT_EQ(rows.size(), 5u); // Dense, Sparse, Toeplitz, Procedural, BlockSparse
    std::set<std::string> names, configNames;
    for (size_t i = 0; i < rows.size(); ++i) {
        EXPECT_EQ(static_cast<size_t>(rows[i].type), i) << rows[i].name;
        EXPECT_EQ(&matrixTypeInfo(rows[i].type), &rows[i]) << rows[i].name;
        EXPECT_STREQ(matrixTypeName(rows[i].type), rows[i].name);
        names.insert(rows[i].name);
        configNames.insert(rows[i].configName);
    }
    EXPECT_EQ(names.size(), rows.size());
    EXPECT_EQ(configNames.size(), rows.size());
    EXPECT_EQ(matrixTypeConfigNames().size(), rows.size());
}

TEST(MatrixTypes, EitherNameInAnyCaseNamesTheType) {
    for (const MatrixTypeInfo& row : matrixTypes()) {
        EXPECT_EQ(matrixTypeNamed(row.name), row.type) << row.name;
        EXPECT_EQ(matrixTypeNamed(row.configName), row.type) << row.configName;
        std::string upper = row.configName;
        for (char& c : upper)
            if (c >= 'a' && c <= 'z') c = char(c - 'a' + 'A');
        EXPECT_EQ(matrixTypeNamed(upper), row.type) << upper;
    }
    EXPECT_EQ(matrixTypeNamed("block_sparse"), MatrixType::BlockSparse);
    EXPECT_EQ(matrixTypeNamed("BlockSparse"), MatrixType::BlockSparse);
    EXPECT_FALSE(matrixTypeNamed("dens"));
    EXPECT_FALSE(matrixTypeNamed(""));
    EXPECT_FALSE(matrixTypeNamed("dense "));
}

// The traits each type has always had (the layouts and checks rely on them).
TEST(MatrixTypes, TraitsOfEachType) {
    EXPECT_TRUE(matrixTraits(MatrixType::Dense).transposable);
    EXPECT_TRUE(matrixTraits(MatrixType::Sparse).editableRows);
    EXPECT_TRUE(matrixTraits(MatrixType::Sparse).builtByInitialiser);
    EXPECT_TRUE(matrixTraits(MatrixType::Toeplitz).kernelShaped);
    EXPECT_TRUE(matrixTraits(MatrixType::Procedural).procedural);
    EXPECT_TRUE(matrixTraits(MatrixType::Procedural).builtByInitialiser);
    EXPECT_TRUE(matrixTraits(MatrixType::BlockSparse).blockTiled);
    int editable = 0, tiled = 0;
    for (const MatrixTypeInfo& row : matrixTypes()) {
        editable += row.traits.editableRows;
        tiled += row.traits.blockTiled;
    }
    EXPECT_EQ(editable, 1);
    EXPECT_EQ(tiled, 1);
}
