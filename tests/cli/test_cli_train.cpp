// `spikeforge train` and `spikeforge evaluate` (docs/training.md "The train command"): a tiny
// Yin-Yang config trains, checkpoints, resumes and evaluates through the real binary; bad
// configs are refused naming the key and its place.
#include "exe_support.hpp"
#include "train_config.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <sstream>

using namespace exe;
using spikeforge::cli::ConfigError;
using spikeforge::cli::parseTrainConfig;

namespace {

const std::string tinyTrain = R"([parameters]
hidden = 8

[dataset]
kind = "yinyang"
train_size = 48
test_size = 24
train_seed = 1
test_seed = 2

[[populations]]
name = "In"
kind = "spike_input"
size = 5

[[populations]]
name = "Hid"
kind = "lif"
size = "hidden"
spike_buffer = 8

[[populations]]
name = "Out"
kind = "leaky_integrate"
size = 3
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
example_timesteps = 60
batch_size = 16
epochs = 2
learning_rate = 0.01
lr_decay = 0.9

[output]
checkpoint_dir = "CKPT"
metrics_csv = "METRICS"
)";

// The tiny config writing its checkpoints and metrics to the given (absolute) paths.
std::string tinyWithOutputs(const fs::path& ckpt, const fs::path& csv) {
    std::string t = tinyTrain;
    t.replace(t.find("CKPT"), 4, ckpt.string());
    t.replace(t.find("METRICS"), 7, csv.string());
    return t;
}

// The number after "key": in a JSON line ("null" gives NaN); the test fails if absent.
double jsonValue(const std::string& line, const std::string& key) {
    std::smatch m;
    const std::regex re("\"" + key + "\": (null|[-+0-9.eE]+)");
    if (!std::regex_search(line, m, re)) {
        ADD_FAILURE() << "no key " << key << " in " << line;
        return -1.0;
    }
    return m[1] == "null" ? std::nan("") : std::stod(m[1]);
}

size_t lineCount(const std::string& text) {
    return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// The ConfigError message parsing `text` gives ("" if none).
std::string configError(const std::string& text) {
    try {
        parseTrainConfig(text, "t.toml");
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    if (at == std::string::npos)
        ADD_FAILURE() << "'" << from << "' not in the config";
    else
        text.replace(at, from.size(), to);
    return text;
}

// The `key`s of the docs/cli.md table after "<!-- json-keys: NAME ", in order.
std::vector<std::string> documentedKeys(const std::string& name) {
    const std::string doc = readFile(std::string(SPIKEFORGE_SOURCE_DIR) + "/docs/cli.md");
    const size_t marker = doc.find("<!-- json-keys: " + name + " ");
    if (marker == std::string::npos) return {};
    std::istringstream lines(doc.substr(doc.find('\n', marker) + 1));
    std::vector<std::string> keys;
    const std::regex row(R"(^\| `([a-z_]+)` \|)");
    std::smatch m;
    for (std::string line; std::getline(lines, line) && !line.empty() && line[0] == '|';)
        if (std::regex_search(line, m, row)) keys.push_back(m[1]);
    return keys;
}

// The top-level keys of a flat JSON object, in order.
std::vector<std::string> jsonKeys(const std::string& line) {
    std::vector<std::string> keys;
    const std::regex key(R"re("([a-z_]+)": )re");
    for (auto it = std::sregex_iterator(line.begin(), line.end(), key);
         it != std::sregex_iterator(); ++it)
        keys.push_back((*it)[1]);
    return keys;
}

} // namespace

TEST(CliTrain, TinyConfigTrainsResumesAndEvaluates) {
    const fs::path ckpt = tempPath("_ckpt"), csv = tempPath(".csv");
    const fs::path config = writeConfig(tinyWithOutputs(ckpt, csv));
    const Result r = run("train " + quoted(config) + " --threads 1 --json");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const std::string json = lastLine(r.out);
    EXPECT_EQ(jsonValue(json, "epochs"), 2.0);
    EXPECT_EQ(jsonValue(json, "epochs_run"), 2.0);
    const double trainAcc = jsonValue(json, "train_accuracy");
    EXPECT_TRUE(trainAcc >= 0.0 && trainAcc <= 1.0) << json;
    const double testAcc = jsonValue(json, "test_accuracy");
    EXPECT_TRUE(testAcc >= 0.0 && testAcc <= 1.0) << json;
    EXPECT_GT(jsonValue(json, "epoch_s"), 0.0);
    const double hostFraction = jsonValue(json, "host_fraction");
    EXPECT_TRUE(hostFraction > 0.0 && hostFraction < 1.0) << "measured on cpu: " << json;
    EXPECT_EQ(jsonKeys(json), documentedKeys("train")) << json;
    // Not a terminal: one plain line per epoch, no redraws.
    EXPECT_NE(r.out.find("epoch 1/2  train loss"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("epoch 2/2  train loss"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find('\r'), std::string::npos);
    EXPECT_EQ(lineCount(readFile(csv)), 3u) << readFile(csv);
    EXPECT_TRUE(fs::exists(ckpt / "checkpoint.sfck"));

    // evaluate: the checkpoint after epoch 2 on the same test set gives the same accuracy.
    const Result e =
        run("evaluate " + quoted(config) + " --checkpoint " + quoted(ckpt) + " --threads 1 --json");
    ASSERT_EQ(e.exitCode, 0) << e.err;
    EXPECT_EQ(jsonValue(lastLine(e.out), "accuracy"), testAcc) << e.out;
    EXPECT_EQ(jsonValue(lastLine(e.out), "epochs"), 2.0);
    EXPECT_EQ(jsonKeys(lastLine(e.out)), documentedKeys("evaluate")) << e.out;

    // A fresh run into the same directory is refused; --resume continues with epoch 3.
    const Result again = run("train " + quoted(config) + " --threads 1");
    EXPECT_EQ(again.exitCode, 2);
    EXPECT_NE(again.err.find("--resume"), std::string::npos) << again.err;
    const Result resumed = run("train " + quoted(config) + " --threads 1 --epochs 3 --resume " +
                               quoted(ckpt) + " --json");
    ASSERT_EQ(resumed.exitCode, 0) << resumed.err;
    EXPECT_EQ(jsonValue(lastLine(resumed.out), "epochs"), 3.0);
    EXPECT_EQ(jsonValue(lastLine(resumed.out), "epochs_run"), 1.0);
    EXPECT_NE(resumed.out.find("epoch 3/3"), std::string::npos) << resumed.out;
    EXPECT_EQ(resumed.out.find("epoch 1/3"), std::string::npos) << resumed.out;
    const std::string rows = readFile(csv);
    EXPECT_EQ(lineCount(rows), 4u) << rows;
    EXPECT_NE(rows.find("\n3,"), std::string::npos) << rows;

    fs::remove_all(ckpt);
    fs::remove(csv);
    fs::remove(config);
}

TEST(CliTrain, DamagedCheckpointIsExit2NamingTheFile) {
    const fs::path ckpt = tempPath("_ckpt"), csv = tempPath(".csv");
    fs::create_directories(ckpt);
    std::ofstream(ckpt / "checkpoint.sfck") << "spikeforge checkpoint\n\x01";
    const fs::path config = writeConfig(tinyWithOutputs(ckpt, csv));
    const Result r = run("evaluate " + quoted(config) + " --checkpoint " + quoted(ckpt));
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find((ckpt / "checkpoint.sfck").string()), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
    fs::remove_all(ckpt);
    fs::remove(config);
}

TEST(CliTrain, BadConfigsNameTheKeyAndItsPosition) {
    EXPECT_EQ(configError(tinyTrain), "") << "the base config is valid";
    struct Case {
        std::string from, to, expected;
    };
    const Case cases[] = {
        {"epochs = 2", "epochs = 0", "t.toml:45:10: training: epochs: must be between 1"},
        {"epochs = 2", "epoch = 2", "t.toml:45:1: training: unknown key 'epoch'"},
        {"readout = \"sum_var\"", "readout = \"sum\"",
         "t.toml:26:11: population 'Out': readout: unknown value 'sum'"},
        {"kind = \"lif\"", "kind = \"LIF\"", "t.toml:18:8: population 'Hid': kind: unknown value"},
        {"kind = \"yinyang\"", "kind = \"mnist\"", "t.toml:5:8: dataset: kind: unknown value"},
        {"weight_sd = 0.1", "weight_sd = -0.1", "connection 'HidOut': weight_sd: must be >= 0"},
        {"dt = 1.0", "dt = -1.0", "t.toml:42:6: training: dt"},
        {"target = \"Out\"", "target = \"Nowhere\"", "Nowhere"},
        {"train_size = 48", "train_size = 48\ntrain_file = \"x.h5\"",
         "dataset: unknown key 'train_file'"},
        {"[training]", "[trainin]", "unknown key 'trainin'"},
        {"weight_sd = 0.1", "weight_sd = 0.1\nprobability = 1.5", "HidOut"},
        {"batch_size = 16", "batch_size = \"16 +\"",
         "t.toml:44:19: training: batch_size: bad expression"},
        {"epochs = 2", "epochs = 2\nlr_warmup_start = 0",
         "t.toml:46:19: training: lr_warmup_start: must be greater than 0"},
        {"epochs = 2", "epochs = 2\nlr_warmup_factor = 0.9", "lr_warmup_factor: must be between"},
        {"epochs = 2", "epochs = 2\nlr_plateau_patience = -1", "lr_plateau_patience"},
        {"epochs = 2", "epochs = 2\nlr_plateau_factor = 1.5", "lr_plateau_factor: must be between"},
        {"epochs = 2", "epochs = 2\nblend = 1", "t.toml:46:9: training: blend"},
        {"weight_sd = 0.1", "weight_sd = 0.1\nblock_size = 8",
         "connection 'HidOut': block_size: applies to connectivity = \"block_sparse\" only"},
        {"weight_sd = 0.1", "weight_sd = 0.1\nconnectivity = \"blocks\"",
         "connection 'HidOut': connectivity: unknown connectivity 'blocks'"},
        {"weight_sd = 0.1", "weight_sd = 0.1\nconnectivity = \"block_sparse\"\nblock_size = 12",
         "connection 'HidOut': block_size: 12 is not one of 8, 16, 32"},
        {"weight_sd = 0.1",
         "weight_sd = 0.1\nconnectivity = \"block_sparse\"\nlayout = \"small_world\"",
         "unknown block layout 'small_world'"},
        {"weight_sd = 0.1", "weight_sd = 0.1\nconnectivity = \"block_sparse\"\nprobability = 0.5",
         "takes its density from the block layout"},
    };
    for (const Case& c : cases) {
        const std::string e = configError(replaced(tinyTrain, c.from, c.to));
        EXPECT_NE(e.find(c.expected), std::string::npos)
            << "'" << c.to << "' gave: " << (e.empty() ? "no error" : e);
    }
}

TEST(CliTrain, MissingDatasetFileAndTrainingTableAreClearErrors) {
    const std::string noTraining = tinyTrain.substr(0, tinyTrain.find("[training]")) +
                                   tinyTrain.substr(tinyTrain.find("[output]"));
    EXPECT_NE(configError(noTraining).find("missing required key 'training'"), std::string::npos)
        << configError(noTraining);
    const fs::path config = writeConfig(replaced(
        replaced(tinyTrain, "kind = \"yinyang\"", "kind = \"shd\"\ntrain_file = \"none.h5\""),
        "train_size = 48\ntest_size = 24\ntrain_seed = 1\ntest_seed = 2\n", ""));
    const Result r = run("train " + quoted(config) + " --threads 1");
    EXPECT_NE(r.exitCode, 0);
    EXPECT_NE(r.err.find("none.h5"), std::string::npos) << r.err;
    fs::remove(config);
}

TEST(CliTrain, ShippedExamplesLoad) {
    using spikeforge::cli::loadTrainConfig;
    using spikeforge::train::PopulationKind;
    const std::string dir = std::string(SPIKEFORGE_SOURCE_DIR) + "/examples/";
    const auto yy = loadTrainConfig(dir + "yinyang.toml", {});
    EXPECT_EQ(yy.network.population("Hidden").size, 200u);
    EXPECT_EQ(yy.network.population("Out").kind, PopulationKind::FirstSpikeReadout);
    EXPECT_EQ(yy.eventprop.exampleTimesteps, 800u);
    EXPECT_EQ(yy.dataset.trainSize, 5000u);
    EXPECT_EQ(yy.fit.learningRate, yy.eventprop.adam.learningRate);
    for (const char* name : {"shd", "ssc", "spoken_digits"}) {
        const auto c = loadTrainConfig(dir + name + ".toml", {});
        // 700 channels and the published delay line of 10 more copies, 30 ms apart.
        EXPECT_EQ(c.network.population("In").input.numChannels, 700u) << name;
        EXPECT_EQ(c.network.population("In").input.delayCopies, 10u) << name;
        EXPECT_EQ(c.network.population("In").size, 7700u) << name;
        EXPECT_EQ(c.network.population("Hidden").size, 256u) << name;
        EXPECT_EQ(c.network.population("Hidden").kind, PopulationKind::Lif) << name;
        EXPECT_EQ(c.network.population("Out").size, std::string(name) == "ssc" ? 35u : 20u);
        EXPECT_EQ(c.eventprop.dt, 1.0) << name;
        EXPECT_EQ(c.eventprop.batchSize, 32u) << name;
        bool recurrent = false;
        for (const auto& conn : c.network.connections())
            recurrent |= conn.source == "Hidden" && conn.target == "Hidden";
        EXPECT_TRUE(recurrent) << name;
        // The published recipe's ease-in: from 1e-6, x1.05 per batch.
        EXPECT_EQ(c.eventprop.adam.warmupStart, 1e-6) << name;
        EXPECT_EQ(c.eventprop.adam.warmupFactor, 1.05) << name;
        // Halving on plateaus and same-class blending.
        EXPECT_EQ(c.fit.plateauPatience, 3u) << name;
        EXPECT_EQ(c.fit.plateauFactor, 0.5) << name;
        EXPECT_TRUE(c.fit.blend) << name;
        // The spike-count regulariser towards 14 spikes per neuron and example.
        EXPECT_GT(c.network.population("Hidden").lif.regStrength, 0.0) << name;
        EXPECT_EQ(c.network.population("Hidden").lif.regTarget, 14.0) << name;
    }
}

TEST(CliTrain, FirstSpikeReadoutAndRegularisationKeys) {
    using spikeforge::train::PopulationKind;
    std::string text = replaced(tinyTrain, "spike_buffer = 8",
                                "spike_buffer = 8\nreg_strength = 1e-9\nreg_target = 12");
    text = replaced(text, "kind = \"leaky_integrate\"",
                    "kind = \"first_spike_readout\"\ntau0 = 0.4\ntau1 = 7.0\nalpha = 0.002");
    // The readout key belongs to leaky integrators only.
    EXPECT_NE(configError(text).find("unknown key 'readout'"), std::string::npos)
        << configError(text);
    text = replaced(text, "readout = \"sum_var\"\n", "");
    const auto cfg = parseTrainConfig(text, "t.toml");
    const auto& hid = cfg.network.population("Hid");
    EXPECT_EQ(hid.lif.regStrength, 1e-9);
    EXPECT_EQ(hid.lif.regTarget, 12.0);
    const auto& out = cfg.network.population("Out");
    ASSERT_EQ(out.kind, PopulationKind::FirstSpikeReadout);
    EXPECT_EQ(out.firstSpike.tau0, 0.4);
    EXPECT_EQ(out.firstSpike.tau1, 7.0);
    EXPECT_EQ(out.firstSpike.alpha, 0.002);
    const auto maxVar =
        parseTrainConfig(replaced(tinyTrain, "\"sum_var\"", "\"max_var\""), "t.toml");
    EXPECT_EQ(maxVar.network.population("Out").li.readout, spikeforge::train::Readout::MaxVar);
    const auto sparse =
        parseTrainConfig(replaced(tinyTrain, "weight_sd = 0.1", "probability = 0.25"), "t.toml");
    EXPECT_EQ(sparse.network.connections().back().params.probability, 0.25);
    const auto blocks = parseTrainConfig(
        replaced(tinyTrain, "weight_sd = 0.1",
                 "weight_sd = 0.1\nconnectivity = \"block_sparse\"\nblock_size = 8\n"
                 "block_density = 0.25\nlayout = \"watts_strogatz\"\nrewire = 0.1"),
        "t.toml");
    const auto& b = blocks.network.connections().back().params.blocks;
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->blockSize, 8u);
    EXPECT_EQ(b->density, 0.25);
    EXPECT_EQ(b->layout, spikeforge::BlockLayout::WattsStrogatz);
    EXPECT_EQ(b->rewire, 0.1);
    EXPECT_FALSE(sparse.network.connections().back().params.blocks.has_value());
    // A given mask is for C++ networks and model configs: a clear error here.
    const std::string mask = configError(
        replaced(tinyTrain, "weight_sd = 0.1",
                 "weight_sd = 0.1\nconnectivity = \"block_sparse\"\nlayout = \"mask\""));
    EXPECT_NE(mask.find("layout \"mask\" is not available here"), std::string::npos) << mask;
    EXPECT_NE(mask.find("t.toml:"), std::string::npos) << mask;
}

// prune_every / prune_fraction / prune_until on a block-sparse connection: its BlockPruning;
// each is a clear error at its position anywhere else or out of range.
TEST(CliTrain, BlockPruningKeys) {
    const std::string blocks =
        replaced(tinyTrain, "weight_sd = 0.1",
                 "weight_sd = 0.1\nconnectivity = \"block_sparse\"\nblock_size = 8\nPRUNE");
    const auto cfg = parseTrainConfig(
        replaced(blocks, "PRUNE", "prune_every = 50\nprune_fraction = 0.2\nprune_until = 1000"),
        "t.toml");
    const auto& p = cfg.network.connections().back().params.pruning;
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(p->everyBatches, 50u);
    EXPECT_EQ(p->fraction, 0.2);
    EXPECT_EQ(p->untilBatch, 1000u);
    const auto defaults = parseTrainConfig(replaced(blocks, "PRUNE", "prune_every = 7"), "t.toml");
    EXPECT_EQ(defaults.network.connections().back().params.pruning->fraction, 0.1);
    EXPECT_EQ(defaults.network.connections().back().params.pruning->untilBatch, 0u);
    EXPECT_FALSE(parseTrainConfig(replaced(blocks, "PRUNE", ""), "t.toml")
                     .network.connections()
                     .back()
                     .params.pruning.has_value());
    for (const auto& [text, message] :
         {std::pair{replaced(blocks, "PRUNE", "prune_fraction = 0.2"), "needs prune_every"},
          std::pair{replaced(blocks, "PRUNE", "prune_every = 5\nprune_fraction = 1.5"),
                    "prune_fraction: must be in (0, 1]"},
          std::pair{replaced(blocks, "PRUNE", "prune_every = 0"), "prune_every"},
          std::pair{replaced(tinyTrain, "weight_sd = 0.1", "weight_sd = 0.1\nprune_every = 5"),
                    "applies to connectivity = \"block_sparse\" only"}}) {
        const std::string e = configError(text);
        EXPECT_NE(e.find(message), std::string::npos) << e;
        EXPECT_NE(e.find("t.toml:"), std::string::npos) << e;
    }
}

// A training connection's code (gradients, adjoints sent back) cannot run in the matrix form, so
// propagation keys are unknown keys there, errors at their position.
TEST(CliTrain, BlockPropagationKeysAreNotTrainingKeys) {
    for (const char* key : {"propagation = \"matrix\"", "expected_rate = 30"}) {
        const std::string e = configError(
            replaced(tinyTrain, "weight_sd = 0.1",
                     std::string("weight_sd = 0.1\nconnectivity = \"block_sparse\"\n") + key));
        EXPECT_NE(e.find("unknown key"), std::string::npos) << e;
        EXPECT_NE(e.find("t.toml:"), std::string::npos) << e;
    }
}

TEST(CliTrain, AFreshRunRefusesAnExistingMetricsFileAndLeavesIt) {
    const fs::path ckpt = tempPath("_ckpt"), csv = tempPath(".csv");
    std::ofstream(csv) << "my notes\n";
    const fs::path config = writeConfig(tinyWithOutputs(ckpt, csv));
    const Result r = run("train " + quoted(config) + " --threads 1");
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find(csv.string()), std::string::npos) << r.err;
    EXPECT_EQ(readFile(csv), "my notes\n");
    fs::remove_all(ckpt);
    fs::remove(csv);
    fs::remove(config);
}
