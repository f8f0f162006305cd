// `[dataset] kind = "hdf5"` (docs/training.md "SHD and SSC"): HDF5 files in the SHD layout of
// any shape train and evaluate through the real binary; the class count comes from
// num_classes, extra/keys or the labels, every mismatch is an error naming the file or key, and
// the reader's warnings reach stderr without stopping the run.
#include "exe_support.hpp"
#include "train_config.hpp"

#include "spikeforge/errors.hpp"
#include "spikeforge/train/dataset.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <regex>
#include <vector>

#if __has_include(<hdf5.h>)
#include <hdf5.h>

#include "support/hdf5_files.hpp"
#include "unit/test_dataset_support.hpp"
#define SF_TEST_HDF5 1
#else
#define SF_TEST_HDF5 0
#endif

#if SF_TEST_HDF5

using namespace exe;
using dataset_test::errorOf;
using hdf5_files::writeKeys;
using hdf5_files::writeVlen;
using spikeforge::ModelError;
using spikeforge::cli::ConfigError;
using spikeforge::cli::loadTrainData;
using spikeforge::cli::parseTrainConfig;
using spikeforge::cli::TrainData;

namespace {

// A file's contents: times [s], units and labels per example; `keys` class names (0: none).
struct Spec {
    std::vector<std::vector<float>> times;
    std::vector<std::vector<int>> units;
    std::vector<int> labels;
    int keys = 0;
};

// `n` examples of 5 channels and 3 classes, example i of class i mod 3: channel c (the class)
// fires at 2, 4, 6 and 8 ms, channels 3 and 4 once each later (the same for every class).
// `scale` multiplies the times (1000: written in ms instead of s).
Spec fiveByThree(int n, float scale = 1.0f) {
    Spec s;
    s.keys = 3;
    for (int i = 0; i < n; i++) {
        const int c = i % 3;
        s.times.push_back({0.002f * scale, 0.004f * scale, 0.006f * scale, 0.008f * scale,
                           0.012f * scale, 0.015f * scale});
        s.units.push_back({c, c, c, c, 3, 4});
        s.labels.push_back(c);
    }
    return s;
}

// Writes `spec` in the published layout (float32 times, uint16 units, uint8 labels).
fs::path writeHdf5(const Spec& spec) {
    const fs::path path = tempPath(".h5");
    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    EXPECT_GE(file, 0);
    const hid_t spikes = H5Gcreate2(file, "spikes", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    writeVlen(spikes, "times", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, spec.times);
    writeVlen(spikes, "units", H5T_STD_U16LE, H5T_NATIVE_INT, spec.units);
    H5Gclose(spikes);
    const hsize_t n = spec.labels.size();
    const hid_t space = H5Screate_simple(1, &n, nullptr);
    const hid_t set =
        H5Dcreate2(file, "labels", H5T_STD_U8LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(set, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, spec.labels.data());
    H5Dclose(set);
    H5Sclose(space);
    if (spec.keys > 0) writeKeys(file, spec.keys);
    H5Fclose(file);
    return path;
}

// A small network for 5 channels with `readout` readout neurons; `dataset` holds the [dataset]
// keys after `kind = "hdf5"` (from line 3 on).
std::string config(const std::string& dataset, int readout = 3) {
    return R"([dataset]
kind = "hdf5"
)" + dataset +
           R"(

[[populations]]
name = "In"
kind = "spike_input"
size = 5

[[populations]]
name = "Hid"
kind = "lif"
size = 16
spike_buffer = 16

[[populations]]
name = "Out"
kind = "leaky_integrate"
size = )" + std::to_string(readout) +
           R"(
readout = "sum_var"

[[connections]]
name = "InHid"
source = "In"
target = "Hid"
weight_mean = 1.5
weight_sd = 0.78

[[connections]]
name = "HidOut"
source = "Hid"
target = "Out"
weight_sd = 0.1

[training]
dt = 1.0
example_timesteps = 50
batch_size = 8
epochs = 2
learning_rate = 0.01
)";
}

std::string fileKey(const std::string& key, const fs::path& path) {
    return key + " = '" + path.string() + "'\n";
}

// Parses `text` (as config file t.toml in the temp directory) and loads its data.
TrainData load(const std::string& text) {
    const auto cfg = parseTrainConfig(text, (fs::temp_directory_path() / "t.toml").string(), {});
    return loadTrainData(cfg.dataset, 5, "", cfg.eventprop.dt * cfg.eventprop.exampleTimesteps);
}

double jsonValue(const std::string& line, const std::string& key) {
    std::smatch m;
    if (!std::regex_search(line, m, std::regex("\"" + key + "\": ([-+0-9.eE]+)"))) {
        ADD_FAILURE() << "no key " << key << " in " << line;
        return -1.0;
    }
    return std::stod(m[1]);
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

class CliTrainHdf5 : public ::testing::Test {
protected:
    void SetUp() override {
        if (!spikeforge::train::haveHdf5()) GTEST_SKIP() << "this build has no HDF5";
    }
    void TearDown() override {
        for (const fs::path& p : cleanup)
            fs::remove_all(p);
    }
    fs::path file(const Spec& s) {
        cleanup.push_back(writeHdf5(s));
        return cleanup.back();
    }
    fs::path configFile(const std::string& text) {
        cleanup.push_back(writeConfig(text));
        return cleanup.back();
    }
    std::vector<fs::path> cleanup;
};

} // namespace

TEST_F(CliTrainHdf5, FiveChannelsThreeClassesTrainAndEvaluate) {
    const fs::path train = file(fiveByThree(36)), test = file(fiveByThree(12));
    const fs::path ckpt = tempPath("_ckpt");
    cleanup.push_back(ckpt);
    const fs::path cfg =
        configFile(config(fileKey("train_file", train) + fileKey("test_file", test)) +
                   "\n[output]\ncheckpoint_dir = '" + ckpt.string() + "'\n");
    const Result r = run("train " + quoted(cfg) + " --threads 1 --json");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_TRUE(has(r.out, "training on backend cpu: 36 examples, epochs 1-2")) << r.out;
    EXPECT_TRUE(has(r.out, "(12 examples)")) << r.out;
    EXPECT_EQ(r.err, "") << "a well-formed file gives no warning";
    const std::string json = lastLine(r.out);
    EXPECT_EQ(jsonValue(json, "epochs_run"), 2.0);
    const double trainAcc = jsonValue(json, "train_accuracy");
    EXPECT_TRUE(trainAcc >= 0.0 && trainAcc <= 1.0) << json;
    const double testAcc = jsonValue(json, "test_accuracy");
    // Learnable (class c fires channel c first): well above chance (1/3) after two epochs.
    EXPECT_GT(testAcc, 0.6) << json;

    const Result e =
        run("evaluate " + quoted(cfg) + " --checkpoint " + quoted(ckpt) + " --threads 1 --json");
    ASSERT_EQ(e.exitCode, 0) << e.err;
    EXPECT_EQ(jsonValue(lastLine(e.out), "examples"), 12.0) << e.out;
    EXPECT_EQ(jsonValue(lastLine(e.out), "accuracy"), testAcc) << e.out;
}

TEST_F(CliTrainHdf5, ClassCountFromKeysLabelsOrConfig) {
    Spec s = fiveByThree(9);
    s.keys = 4; // one class more than the labels use
    const fs::path keys = file(s);
    TrainData d = load(config(fileKey("train_file", keys), 4));
    EXPECT_EQ(d.train.numClasses(), 4u);
    EXPECT_TRUE(has(d.classesFrom, "extra/keys")) << d.classesFrom;
    s.keys = 0;
    const fs::path plain = file(s);
    d = load(config(fileKey("train_file", plain)));
    EXPECT_EQ(d.train.numClasses(), 3u);
    EXPECT_TRUE(has(d.classesFrom, "largest label + 1")) << d.classesFrom;
    d = load(config(fileKey("train_file", plain) + "num_classes = 4\nnum_channels = 5", 4));
    EXPECT_EQ(d.train.numClasses(), 4u);
    EXPECT_EQ(d.train.numChannels(), 5u);
    EXPECT_EQ(d.classesFrom, "[dataset] num_classes = 4");
    // kind "shd" keeps the published 20 classes for a file whose extra/keys agrees.
    s.keys = 20;
    const fs::path published = file(s);
    d = load(std::regex_replace(config(fileKey("train_file", published)),
                                std::regex("kind = \"hdf5\""), "kind = \"shd\""));
    EXPECT_EQ(d.train.numClasses(), 20u);
    ASSERT_EQ(d.warnings.size(), 1u);
    EXPECT_TRUE(has(d.warnings[0], "classes 3, 4, 5")) << d.warnings[0];
    // The test file is read with the training file's class count.
    const fs::path wide = file(Spec{{{0.001f}}, {{0}}, {3}, 0});
    const std::string m = errorOf<ModelError>(
        [&] { load(config(fileKey("train_file", plain) + fileKey("test_file", wide))); });
    EXPECT_TRUE(has(m, "'" + wide.string() +
                           "': dataset 'labels': example 0: label 3 is out of "
                           "range [0, 3) (the training file '" +
                           plain.string() + "' has 3 classes"))
        << m;
}

TEST_F(CliTrainHdf5, MismatchesAreErrorsNamingTheFileOrKey) {
    Spec s = fiveByThree(9);
    s.keys = 0;
    s.labels[4] = 5;
    const fs::path bad = file(s);
    std::string m =
        errorOf<ModelError>([&] { load(config(fileKey("train_file", bad) + "num_classes = 3")); });
    EXPECT_TRUE(has(m, "HDF5 file '" + bad.string() +
                           "': dataset 'labels': example 4: label 5 "
                           "is out of range [0, 3) ([dataset] "
                           "num_classes = 3)"))
        << m;
    const fs::path good = file(fiveByThree(9)); // extra/keys: 3 names
    m = errorOf<ModelError>([&] { load(config(fileKey("train_file", good) + "num_classes = 2")); });
    EXPECT_TRUE(has(m, "'" + good.string() +
                           "': dataset 'extra/keys': names 3 classes but "
                           "[dataset] num_classes = 2"))
        << m;
    // The published kinds keep their shape and say what to use instead.
    const std::string shd = std::regex_replace(config(fileKey("train_file", good)),
                                               std::regex("kind = \"hdf5\""), "kind = \"shd\"");
    m = errorOf<ModelError>([&] { load(shd); });
    EXPECT_TRUE(has(m, "'extra/keys': names 3 classes but kind \"shd\" has 20 classes; kind = "
                       "\"hdf5\" reads"))
        << m;
    const std::string shdKey =
        std::regex_replace(config(fileKey("train_file", good) + "num_classes = 3"),
                           std::regex("kind = \"hdf5\""), "kind = \"shd\"");
    m = errorOf<ConfigError>([&] { parseTrainConfig(shdKey, "t.toml"); });
    EXPECT_TRUE(has(m, "t.toml:4:15: dataset: num_classes: kind \"shd\" and \"ssc\"")) << m;
    // Against the network: at the key's position.
    m = errorOf<ConfigError>([&] {
        parseTrainConfig(config(fileKey("train_file", good) + "num_classes = 4"), "t.toml");
    });
    EXPECT_TRUE(has(m, "t.toml:4:15: dataset: num_classes: 4 but the readout population 'Out' "
                       "has only 3 neurons"))
        << m;
    m = errorOf<ConfigError>([&] {
        parseTrainConfig(config(fileKey("train_file", good) + "num_channels = 6"), "t.toml");
    });
    EXPECT_TRUE(has(m, "t.toml:4:16: dataset: num_channels: 6 but the spike_input population "
                       "'In' has 5 channels (its size; they must be equal)"))
        << m;
    s = fiveByThree(9);
    s.units[2][0] = 5;
    const fs::path wideUnits = file(s);
    m = errorOf<ModelError>([&] { load(config(fileKey("train_file", wideUnits))); });
    EXPECT_TRUE(has(m, "'" + wideUnits.string() +
                           "': dataset 'spikes/units': example 2: spike 0 "
                           "has channel 5, not in [0, 5)"))
        << m;
}

TEST_F(CliTrainHdf5, ReadoutTooSmallForTheFileIsExit2NamingTheFile) {
    Spec s = fiveByThree(9);
    s.keys = 4;
    const fs::path four = file(s);
    const Result r =
        run("train " + quoted(configFile(config(fileKey("train_file", four)))) + " --threads 1");
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_TRUE(has(r.err, "the training file '" + four.string() +
                               "' has 4 classes (the length "
                               "of its extra/keys), but the "
                               "readout population 'Out' has "
                               "only 3 neurons"))
        << r.err;
}

TEST_F(CliTrainHdf5, WarningsReachStderrAndDoNotStopTraining) {
    // Times in ms: with duration_ms the events are dropped; without, they lie past the trial.
    const fs::path ms = file(fiveByThree(9, 1000.0f));
    TrainData d = load(config(fileKey("train_file", ms) + "duration_ms = 100"));
    ASSERT_EQ(d.warnings.size(), 1u);
    EXPECT_TRUE(has(d.warnings[0], "'" + ms.string() +
                                       "': 54 of 54 events (100.0%) in "
                                       "spikes/times are later than the duration "
                                       "100 ms and were dropped; were the times "
                                       "written in milliseconds instead of "
                                       "seconds?"))
        << d.warnings[0];
    d = load(config(fileKey("train_file", ms)));
    ASSERT_EQ(d.warnings.size(), 1u);
    EXPECT_TRUE(has(d.warnings[0], "54 of 54 events (100.0%) are later than 50 ms"))
        << d.warnings[0];
    EXPECT_TRUE(load(config(fileKey("train_file", file(fiveByThree(9))))).warnings.empty());

    // A class without examples: class 2 of 3 (extra/keys) is never a label.
    Spec s = fiveByThree(9);
    for (int& label : s.labels)
        label %= 2;
    const fs::path two = file(s);
    const Result r = run("train " + quoted(configFile(config(fileKey("train_file", two)))) +
                         " --threads 1 --epochs 1");
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_TRUE(has(r.err, "warning: HDF5 file '" + two.string() +
                               "': class 2 of 3 has no "
                               "examples"))
        << r.err;
    EXPECT_TRUE(has(r.out, "epoch 1/1")) << r.out;
    const Result late = run("train " + quoted(configFile(config(fileKey("train_file", ms)))) +
                            " --threads 1 --epochs 1");
    EXPECT_EQ(late.exitCode, 0) << late.err;
    EXPECT_TRUE(has(late.err, "warning: HDF5 file '" + ms.string() + "'")) << late.err;
    EXPECT_TRUE(has(late.err, "milliseconds instead of seconds")) << late.err;
}

#endif
