// The SHD/SSC reader on small HDF5 files this test writes in the published layout (Cramer et al.
// 2020): `spikes/times` variable-length float32 [s], `spikes/units` variable-length uint16,
// `labels` uint8, plus `extra/keys` (class names, whose count is the class count unless given).
#include "spikeforge/errors.hpp"
#include "spikeforge/train/dataset.hpp"
#include "unit/test_dataset_support.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#if __has_include(<hdf5.h>)
#include <hdf5.h>

#include "support/hdf5_files.hpp"
#define SF_TEST_HDF5 1
#else
#define SF_TEST_HDF5 0
#endif

using namespace spikeforge;
using namespace spikeforge::train;
using dataset_test::contains;
using dataset_test::errorOf;
using hdf5_files::writeKeys;
using hdf5_files::writeVlen;

TEST(DatasetHdf5, WithoutHdf5TheReaderSaysSo) {
    if (haveHdf5()) GTEST_SKIP() << "this build has HDF5 (the other DatasetHdf5 tests run)";
    EXPECT_TRUE(contains(errorOf<BackendError>([] { readHeidelbergHdf5("shd_train.h5"); }),
                         "no HDF5 support"));
}

#if SF_TEST_HDF5

namespace {

// What a test file holds; the flags make it malformed in one way each.
struct FileSpec {
    std::vector<std::vector<float>> times; // [s]
    std::vector<std::vector<int>> units;
    std::vector<int> labels;
    hid_t labelType = H5T_STD_U8LE;
    bool writeTimes = true, writeUnits = true, writeLabels = true;
    bool timesAsIntegers = false, unitsAsFloats = false, labelsAsFloats = false;
    bool labelsTwoD = false;
    int keys = 20; // class names in extra/keys; 0: no extra/keys
};

void writeLabels(hid_t file, const FileSpec& spec) {
    const hsize_t n = spec.labels.size();
    const hsize_t dims[2] = {spec.labelsTwoD ? 1 : n, spec.labelsTwoD ? n : 1};
    const hid_t space = H5Screate_simple(spec.labelsTwoD ? 2 : 1, dims, nullptr);
    const hid_t type = spec.labelsAsFloats ? H5T_IEEE_F32LE : spec.labelType;
    const hid_t set =
        H5Dcreate2(file, "labels", type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(set, 0);
    ASSERT_GE(H5Dwrite(set, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, spec.labels.data()), 0);
    H5Dclose(set);
    H5Sclose(space);
}

class DatasetHdf5File : public ::testing::Test {
protected:
    void SetUp() override {
        if (!haveHdf5()) GTEST_SKIP() << "this build of spikeforge has no HDF5 (libhdf5-dev)";
        dir_ = std::filesystem::temp_directory_path() /
               ("sf_dataset_hdf5_" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override {
        if (!dir_.empty()) std::filesystem::remove_all(dir_);
    }

    std::string write(const FileSpec& spec, const std::string& name = "shd.h5") {
        const std::string path = (dir_ / name).string();
        const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        EXPECT_GE(file, 0);
        const hid_t spikes = H5Gcreate2(file, "spikes", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (spec.writeTimes && spec.timesAsIntegers) {
            std::vector<std::vector<int>> rounded;
            for (const auto& row : spec.times)
                rounded.emplace_back(row.begin(), row.end());
            writeVlen(spikes, "times", H5T_STD_I32LE, H5T_NATIVE_INT, rounded);
        } else if (spec.writeTimes) {
            writeVlen(spikes, "times", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, spec.times);
        }
        if (spec.writeUnits) {
            writeVlen(spikes, "units", spec.unitsAsFloats ? H5T_IEEE_F32LE : H5T_STD_U16LE,
                      H5T_NATIVE_INT, spec.units);
        }
        if (spec.writeLabels) writeLabels(file, spec);
        if (spec.keys > 0) writeKeys(file, spec.keys);
        H5Gclose(spikes);
        H5Fclose(file);
        return path;
    }

    // A well-formed file: four examples, one of them empty, channels up to 699.
    static FileSpec good() {
        FileSpec s;
        s.times = {{0.0f, 0.0123f, 0.5f, 0.5f}, {}, {0.25f}, {0.001f, 0.9999f, 1.3f}};
        s.units = {{699, 3, 10, 11}, {}, {0}, {5, 5, 698}};
        s.labels = {19, 0, 7, 3};
        return s;
    }

    // The reader's ModelError message for this spec.
    std::string errorFor(const FileSpec& spec, const HeidelbergOptions& o = {}) {
        const std::string path = write(spec);
        return errorOf<ModelError>([&] { readHeidelbergHdf5(path, o); });
    }

    std::filesystem::path dir_;
};

} // namespace

TEST_F(DatasetHdf5File, WellFormedFileRoundTripsExactly) {
    const FileSpec spec = good();
    const EventDataset d = readHeidelbergHdf5(write(spec), {.numClasses = 20});
    ASSERT_EQ(d.size(), 4u);
    EXPECT_EQ(d.numChannels(), 700u);
    EXPECT_EQ(d.numClasses(), 20u);
    for (size_t i = 0; i < d.size(); i++) {
        EXPECT_EQ(d.label(i), static_cast<uint32_t>(spec.labels[i]));
        ASSERT_EQ(d.times(i).size(), spec.times[i].size());
        for (size_t k = 0; k < spec.times[i].size(); k++) {
            // [s] -> [ms] in double, then rounded once to float.
            EXPECT_EQ(d.times(i)[k], static_cast<float>(double(spec.times[i][k]) * 1000.0));
            EXPECT_EQ(d.channels(i)[k], static_cast<uint32_t>(spec.units[i][k]));
        }
    }
    // Duration defaults to the latest spike; classes to extra/keys' length.
    EXPECT_EQ(d.duration(), static_cast<float>(double(1.3f) * 1000.0));
    EXPECT_EQ(readHeidelbergHdf5(write(spec)).numClasses(), 20u);
}

TEST_F(DatasetHdf5File, ClassCountComesFromOptionsElseKeysElseLabels) {
    FileSpec s = good();
    s.keys = 25; // more names than labels used
    HeidelbergFile f = readHeidelbergHdf5File(write(s));
    EXPECT_EQ(f.data.numClasses(), 25u);
    EXPECT_EQ(f.classesFrom, ClassCountSource::Keys);
    s.keys = 0; // no extra/keys: the largest label (19) + 1
    f = readHeidelbergHdf5File(write(s));
    EXPECT_EQ(f.data.numClasses(), 20u);
    EXPECT_EQ(f.classesFrom, ClassCountSource::Labels);
    f = readHeidelbergHdf5File(write(s), {.numClasses = 30});
    EXPECT_EQ(f.data.numClasses(), 30u);
    EXPECT_EQ(f.classesFrom, ClassCountSource::Options);
}

TEST_F(DatasetHdf5File, ClassCountMismatchesAreNamed) {
    FileSpec s = good();
    s.keys = 3; // labels go up to 19
    EXPECT_TRUE(contains(errorFor(s), "dataset 'labels': example 0: label 19 is out of range "
                                      "[0, 3) (3 classes: the length of extra/keys)"));
    // Given a count, extra/keys must agree.
    s = good();
    EXPECT_TRUE(contains(errorFor(s, {.numClasses = 35}),
                         "dataset 'extra/keys': names 20 classes but numClasses is 35"));
    const std::string e =
        errorFor(s, {.numClasses = 35, .numClassesFrom = "kind \"ssc\" has 35 classes"});
    EXPECT_TRUE(contains(e, "shd.h5': dataset 'extra/keys': names 20 classes but kind \"ssc\""))
        << e;
    s.keys = 0;
    EXPECT_TRUE(contains(errorFor(s, {.numClasses = 3, .numClassesFrom = "my count"}),
                         "label 19 is out of range [0, 3) (my count)"));
}

TEST_F(DatasetHdf5File, AnyShapeReads) {
    // 5 channels, 3 classes, no extra/keys: not SHD's 700 and 20.
    FileSpec s;
    s.keys = 0;
    for (int i = 0; i < 9; i++) {
        s.times.push_back({0.001f * float(i), 0.02f});
        s.units.push_back({i % 3, 4});
        s.labels.push_back(i % 3);
    }
    const HeidelbergFile f = readHeidelbergHdf5File(write(s), {.numChannels = 5});
    EXPECT_EQ(f.data.size(), 9u);
    EXPECT_EQ(f.data.numChannels(), 5u);
    EXPECT_EQ(f.data.numClasses(), 3u);
    EXPECT_TRUE(f.warnings.empty()) << f.warnings.front();
    EXPECT_TRUE(contains(errorFor(s, {.numChannels = 4}), "spike 1 has channel 4, not in [0, 4)"));
}

TEST_F(DatasetHdf5File, TimesInMillisecondsAreWarnedAbout) {
    FileSpec s;
    for (int i = 0; i < 4; i++) {
        s.times.push_back({2.0f, 10.0f, 30.0f}); // meant as ms, read as s
        s.units.push_back({0, 1, 2});
        s.labels.push_back(i % 2);
    }
    s.keys = 2;
    const std::string path = write(s);
    const HeidelbergFile f = readHeidelbergHdf5File(path, {.duration = 1000.0});
    EXPECT_EQ(f.eventsInFile, 12u);
    EXPECT_EQ(f.eventsDropped, 12u);
    ASSERT_EQ(f.warnings.size(), 1u);
    EXPECT_TRUE(contains(f.warnings[0], "'" + path + "': 12 of 12 events (100.0%)"));
    EXPECT_TRUE(contains(f.warnings[0], "milliseconds instead of seconds"));
    // In seconds: nothing dropped, no warning.
    for (auto& row : s.times)
        for (float& t : row)
            t /= 1000.0f;
    EXPECT_TRUE(readHeidelbergHdf5File(write(s), {.duration = 1000.0}).warnings.empty());
    // The same check on any dataset, against a window.
    const EventDataset d = readHeidelbergHdf5(write(s));
    EXPECT_TRUE(lateEventWarnings(d, "set", 40.0).empty());
    const auto late = lateEventWarnings(d, "set", 5.0);
    ASSERT_EQ(late.size(), 1u);
    EXPECT_TRUE(contains(late[0], "set: 8 of 12 events (66.7%) are later than 5 ms"));
}

TEST_F(DatasetHdf5File, ClassesWithoutExamplesAreWarnedAbout) {
    const std::string path = write(good()); // labels 19, 0, 7, 3 of 20 classes
    const HeidelbergFile f = readHeidelbergHdf5File(path);
    ASSERT_EQ(f.warnings.size(), 1u);
    EXPECT_TRUE(contains(f.warnings[0], "HDF5 file '" + path +
                                            "': classes 1, 2, 4, 5, 6, 8, 9, "
                                            "10, 11, 12 and 6 more of 20 have no examples"));
    FileSpec s = good();
    s.labels = {0, 1, 0, 1};
    s.keys = 3;
    const auto one = readHeidelbergHdf5File(write(s)).warnings;
    ASSERT_EQ(one.size(), 1u);
    EXPECT_TRUE(contains(one[0], "class 2 of 3 has no examples (among the 4 read)"));
    s.keys = 2;
    EXPECT_TRUE(readHeidelbergHdf5File(write(s)).warnings.empty());
}

TEST_F(DatasetHdf5File, MaxExamplesAndDurationLimitWhatIsRead) {
    const std::string path = write(good());
    const EventDataset first = readHeidelbergHdf5(path, {.maxExamples = 2});
    EXPECT_EQ(first.size(), 2u);
    EXPECT_EQ(first.numEvents(), 4u);
    // Spikes after 1000 ms are dropped: only the 1.3 s spike of example 3.
    const EventDataset cropped = readHeidelbergHdf5(path, {.duration = 1000.0});
    EXPECT_EQ(cropped.duration(), 1000.0);
    EXPECT_EQ(cropped.numEvents(), 7u);
    EXPECT_EQ(cropped.times(3).size(), 2u);
}

TEST_F(DatasetHdf5File, MissingOrForeignFilesAreNamed) {
    const std::string missing = (dir_ / "absent.h5").string();
    const std::string m = errorOf<ModelError>([&] { readHeidelbergHdf5(missing); });
    EXPECT_TRUE(contains(m, "'" + missing + "': no such file"));
    const std::string text = (dir_ / "text.h5").string();
    std::ofstream(text) << "not hdf5\n";
    EXPECT_TRUE(
        contains(errorOf<ModelError>([&] { readHeidelbergHdf5(text); }), "not an HDF5 file"));
}

TEST_F(DatasetHdf5File, MissingDatasetsAreNamed) {
    FileSpec s = good();
    s.writeUnits = false;
    EXPECT_TRUE(contains(errorFor(s), "dataset 'spikes/units': missing"));
    s = good();
    s.writeLabels = false;
    EXPECT_TRUE(contains(errorFor(s), "dataset 'labels': missing"));
    s = good();
    s.writeTimes = false;
    EXPECT_TRUE(contains(errorFor(s), "dataset 'spikes/times': missing"));
}

TEST_F(DatasetHdf5File, WrongTypesAndShapesAreNamed) {
    FileSpec s = good();
    s.timesAsIntegers = true;
    EXPECT_TRUE(contains(errorFor(s), "dataset 'spikes/times': wrong type (expected "
                                      "variable-length floats)"));
    s = good();
    s.unitsAsFloats = true;
    EXPECT_TRUE(contains(errorFor(s), "dataset 'spikes/units': wrong type (expected "
                                      "variable-length integers)"));
    s = good();
    s.labelsAsFloats = true;
    EXPECT_TRUE(contains(errorFor(s), "dataset 'labels': wrong type (expected integers)"));
    s = good();
    s.labelsTwoD = true;
    EXPECT_TRUE(contains(errorFor(s), "dataset 'labels': must be one-dimensional"));
    s = good();
    s.labels.pop_back();
    EXPECT_TRUE(contains(errorFor(s), "have 4, 4 and 3 examples"));
}

TEST_F(DatasetHdf5File, BadExamplesAreNamed) {
    FileSpec s = good();
    s.units[2] = {0, 1}; // two units for one time
    EXPECT_TRUE(contains(errorFor(s), "dataset 'spikes/times': example 2: 1 times but "
                                      "spikes/units has 2 units"));
    s = good();
    s.times[3] = {0.2f, 0.1f, 0.3f};
    EXPECT_TRUE(contains(errorFor(s), "example 3: times are not sorted (spike 1"));
    s = good();
    s.times[2] = {-0.01f};
    EXPECT_TRUE(contains(errorFor(s), "example 2: spike 0 has time -0.01"));
    s = good();
    s.units[0][1] = 700;
    EXPECT_TRUE(contains(errorFor(s), "dataset 'spikes/units': example 0: spike 1 has channel "
                                      "700, not in [0, 700)"));
    s = good();
    EXPECT_TRUE(contains(errorFor(s, {.numChannels = 600}), "example 0: spike 0 has channel 699"));
    s.keys = 0; // else extra/keys' 20 names disagree with numClasses 10
    EXPECT_TRUE(contains(errorFor(s, {.numClasses = 10}), "dataset 'labels': example 0: label 19 "
                                                          "is out of range [0, 10)"));
    s.labelType = H5T_STD_I8LE;
    s.labels[1] = -1;
    EXPECT_TRUE(contains(errorFor(s), "example 1: label -1"));
}

TEST_F(DatasetHdf5File, ManyExamplesCrossTheReadChunks) {
    // 2500 examples: more than two of the reader's 1024-example chunks.
    FileSpec s;
    for (int i = 0; i < 2500; i++) {
        s.times.push_back({0.001f * float(i % 7), 0.5f});
        s.units.push_back({i % 700, (i * 3) % 700});
        s.labels.push_back(i % 20);
    }
    const EventDataset d = readHeidelbergHdf5(write(s));
    ASSERT_EQ(d.size(), 2500u);
    for (size_t i :
         {size_t{0}, size_t{1023}, size_t{1024}, size_t{2047}, size_t{2048}, size_t{2499}}) {
        EXPECT_EQ(d.label(i), i % 20);
        EXPECT_EQ(d.channels(i)[0], i % 700);
        EXPECT_EQ(d.channels(i)[1], (i * 3) % 700);
        EXPECT_EQ(d.times(i)[0], static_cast<float>(double(0.001f * float(i % 7)) * 1000.0));
    }
}

#endif
