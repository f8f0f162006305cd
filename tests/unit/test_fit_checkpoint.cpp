// Checkpoint files and directories (docs/training.md "Checkpoints"): round trip, and damaged,
// truncated, foreign and mismatched checkpoints refused with the file named.
#include "spikeforge/errors.hpp"
#include "unit/test_fit_support.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

using namespace fit_test;
using spikeforge::ModelError;

namespace {

std::vector<EventPropCompiler::StateArray> sampleState() {
    return {{"A.g", {1, 2, 3, 4}}, {"EventPropAdamA.updateCount", {9, 0, 0, 0}}, {"B.g", {}}};
}

CheckpointInfo sampleInfo() {
    return {3, 0x1234567890abcdefULL, 5e-3, 0.95, 4, 0.25, {2.75, 3, 1, 2}, true};
}

uint64_t fnv1a(std::string_view bytes) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const char c : bytes) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ULL;
    }
    return h;
}

std::string readBytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeBytes(const fs::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

// The message of the ModelError `f` throws ("" if none).
template <class F> std::string errorOf(F&& f) {
    try {
        f();
    } catch (const ModelError& e) {
        return e.what();
    }
    return "";
}

FitOptions optionsOf(const CheckpointInfo& info) {
    FitOptions o;
    o.epochs = 10;
    o.shuffleSeed = info.shuffleSeed;
    o.learningRate = info.learningRate;
    o.learningRateDecay = info.learningRateDecay;
    o.plateauPatience = info.plateauPatience;
    o.plateauFactor = info.plateauFactor;
    o.blend = info.blend;
    return o;
}

} // namespace

TEST(FitCheckpoint, RoundTripKeepsEveryField) {
    TempPath file(".sfck");
    writeCheckpoint(file.path(), sampleInfo(), sampleState());
    const auto [info, state] = readCheckpoint(file.path());
    EXPECT_EQ(info.nextEpoch, 3u);
    EXPECT_EQ(info.shuffleSeed, 0x1234567890abcdefULL);
    EXPECT_EQ(info.learningRate, 5e-3);
    EXPECT_EQ(info.learningRateDecay, 0.95);
    EXPECT_EQ(info.plateauPatience, 4u);
    EXPECT_EQ(info.plateauFactor, 0.25);
    EXPECT_EQ(info.plateau, sampleInfo().plateau);
    EXPECT_TRUE(info.blend);
    const auto expected = sampleState();
    ASSERT_EQ(state.size(), expected.size());
    for (size_t i = 0; i < state.size(); i++) {
        EXPECT_EQ(state[i].name, expected[i].name);
        EXPECT_EQ(state[i].bytes, expected[i].bytes);
    }
    EXPECT_FALSE(fs::exists(file.path().string() + ".tmp")) << "the temporary file is renamed";
}

TEST(FitCheckpoint, AVersionOneFileReadsWithThePlateauRuleOff) {
    // Version 1 had no plateau fields: magic, version, epoch, seed, rate, decay, then the state.
    TempPath file(".sfck");
    writeCheckpoint(file.path(), sampleInfo(), sampleState());
    std::string bytes = readBytes(file.path());
    const size_t versionAt = 22, plateauAt = 22 + 4 + 4 + 8 + 8 + 8,
                 plateauBytes = 4 + 8 + 8 + 12 + 4;
    ASSERT_EQ(bytes.substr(0, 22), "spikeforge checkpoint\n");
    ASSERT_EQ(bytes[versionAt], 2) << "this test edits a version-2 file";
    bytes[versionAt] = 1;
    bytes.erase(plateauAt, plateauBytes);
    bytes.resize(bytes.size() - 8); // the old hash
    const uint64_t h = fnv1a(bytes);
    for (int i = 0; i < 8; i++)
        bytes.push_back(static_cast<char>((h >> (8 * i)) & 0xff));
    writeBytes(file.path(), bytes);
    const auto [info, state] = readCheckpoint(file.path());
    EXPECT_EQ(info.nextEpoch, 3u);
    EXPECT_EQ(info.learningRateDecay, 0.95);
    EXPECT_EQ(info.plateauPatience, 0u);
    EXPECT_EQ(info.plateau, PlateauState{});
    EXPECT_FALSE(info.blend);
    EXPECT_EQ(state.size(), sampleState().size());
    // A version this build does not know is refused.
    bytes[versionAt] = 3;
    writeBytes(file.path(), bytes);
    EXPECT_NE(errorOf([&] { readCheckpoint(file.path()); }).find("format version 3"),
              std::string::npos);
}

TEST(FitCheckpoint, EveryTruncationIsRefusedNamingTheFile) {
    TempPath file(".sfck");
    writeCheckpoint(file.path(), sampleInfo(), sampleState());
    const std::string whole = readBytes(file.path());
    for (size_t n = 0; n < whole.size(); n++) {
        writeBytes(file.path(), whole.substr(0, n));
        const std::string e = errorOf([&] { readCheckpoint(file.path()); });
        ASSERT_NE(e, "") << "truncated to " << n << " bytes was accepted";
        EXPECT_NE(e.find(file.path().string()), std::string::npos) << e;
    }
}

TEST(FitCheckpoint, EveryFlippedByteIsRefused) {
    TempPath file(".sfck");
    writeCheckpoint(file.path(), sampleInfo(), sampleState());
    const std::string whole = readBytes(file.path());
    for (size_t i = 0; i < whole.size(); i++) {
        std::string damaged = whole;
        damaged[i] = static_cast<char>(damaged[i] ^ 0x10);
        writeBytes(file.path(), damaged);
        const std::string e = errorOf([&] { readCheckpoint(file.path()); });
        ASSERT_NE(e, "") << "byte " << i << " flipped was accepted";
        EXPECT_NE(e.find(file.path().string()), std::string::npos) << e;
    }
    // Trailing bytes too.
    writeBytes(file.path(), whole + "x");
    EXPECT_NE(errorOf([&] { readCheckpoint(file.path()); }).find("damaged"), std::string::npos);
}

TEST(FitCheckpoint, AForeignFileAndAMissingFileAreRefused) {
    TempPath file(".sfck");
    writeBytes(file.path(), "epoch,loss\n1,0.5\n");
    EXPECT_NE(errorOf([&] { readCheckpoint(file.path()); }).find("not a spikeforge checkpoint"),
              std::string::npos);
    fs::remove(file.path());
    EXPECT_NE(errorOf([&] { readCheckpoint(file.path()); }).find("cannot be read"),
              std::string::npos);
}

TEST(FitCheckpoint, DirectoryHoldingOtherFilesOrAFileIsRefused) {
    TempPath dir;
    EXPECT_FALSE(prepareCheckpointDir(dir.path())) << "a new directory holds no checkpoint";
    EXPECT_TRUE(fs::is_directory(dir.path()));
    writeCheckpoint(dir.path() / Checkpoint::kFileName, sampleInfo(), sampleState());
    EXPECT_TRUE(prepareCheckpointDir(dir.path()));
    std::ofstream(dir.path() / "notes.txt") << "mine";
    const std::string e = errorOf([&] { prepareCheckpointDir(dir.path()); });
    EXPECT_NE(e.find("notes.txt"), std::string::npos) << e;
    EXPECT_EQ(readBytes(dir.path() / "notes.txt"), "mine");

    TempPath plain(".txt");
    std::ofstream(plain.path()) << "x";
    EXPECT_NE(errorOf([&] { prepareCheckpointDir(plain.path()); }).find("not a directory"),
              std::string::npos);
}

TEST(FitCheckpoint, CheckpointOfAnotherNetworkOrOtherOptionsIsRefused) {
    auto c = yinYangCompiler(8, 4);
    const auto before = c->weights("InHid");
    TempPath dir;
    fs::create_directories(dir.path());
    const fs::path file = dir.path() / Checkpoint::kFileName;

    // Another network: a hidden layer of 9, not 8.
    auto other = yinYangCompiler(9, 4);
    writeCheckpoint(file, sampleInfo(), other->saveState());
    std::string e = errorOf([&] { resumeFromCheckpoint(*c, dir.path(), optionsOf(sampleInfo())); });
    EXPECT_NE(e.find(file.string()), std::string::npos) << e;
    EXPECT_NE(e.find("does not fit this network"), std::string::npos) << e;
    EXPECT_EQ(c->weights("InHid"), before) << "a refused checkpoint changes nothing";

    // The same network, but the run's options differ from the checkpoint's.
    writeCheckpoint(file, sampleInfo(), c->saveState());
    FitOptions changed = optionsOf(sampleInfo());
    changed.shuffleSeed++;
    e = errorOf([&] { resumeFromCheckpoint(*c, dir.path(), changed); });
    EXPECT_NE(e.find("shuffle seed"), std::string::npos) << e;
    changed = optionsOf(sampleInfo());
    changed.epochs = 2; // the checkpoint is after epoch 3
    e = errorOf([&] { resumeFromCheckpoint(*c, dir.path(), changed); });
    EXPECT_NE(e.find("past the 2 epochs"), std::string::npos) << e;
    changed = optionsOf(sampleInfo());
    changed.plateauPatience = 0;
    e = errorOf([&] { resumeFromCheckpoint(*c, dir.path(), changed); });
    EXPECT_NE(e.find("plateau patience"), std::string::npos) << e;
    changed = optionsOf(sampleInfo());
    changed.plateauFactor = 0.5;
    e = errorOf([&] { resumeFromCheckpoint(*c, dir.path(), changed); });
    EXPECT_NE(e.find("plateau factor"), std::string::npos) << e;
    changed = optionsOf(sampleInfo());
    changed.blend = false;
    e = errorOf([&] { resumeFromCheckpoint(*c, dir.path(), changed); });
    EXPECT_NE(e.find("blending"), std::string::npos) << e;
    const ResumePoint start = resumeFromCheckpoint(*c, dir.path(), optionsOf(sampleInfo()));
    EXPECT_EQ(start.epoch, 3u);
    EXPECT_EQ(start.plateau, sampleInfo().plateau);
}
