// Training configs (train_config.hpp; schema in docs/training.md, "The train command"). The
// reading follows the simulate config's: every key is checked against the keys a table may
// hold, every value against its type and range, and each failure names the key and its place.
#include "train_config.hpp"

#include "config_parts.hpp"
#include "config_reader.hpp"
#include "input_file.hpp"

#include "spikeforge/errors.hpp"
#include "spikeforge/train/dataset.hpp"

#include <filesystem>
#include <limits>

namespace spikeforge::cli {

namespace {

using namespace spikeforge::train;

constexpr uint64_t kMaxSeed = uint64_t(std::numeric_limits<int64_t>::max());
constexpr uint64_t kMaxCount = uint64_t(std::numeric_limits<uint32_t>::max());

// A path in the config: relative to `dir`.
std::string resolveIn(const std::string& dir, const std::string& name) {
    const std::filesystem::path path(name);
    if (path.is_absolute()) return name;
    return (std::filesystem::path(dir) / path).string();
}

// A path in the config, relative to the config's directory.
std::string resolve(const std::string& configFile, const std::string& name) {
    return resolveIn(std::filesystem::path(configFile).parent_path().string(), name);
}

// Optional typed values: the key's value, or `fallback` when the table lacks the key.
struct Table {
    const Reader& r;
    const toml::table& t;
    std::string where;

    const toml::node* get(const std::string& key) const { return t.get(key); }
    std::string at(const std::string& key) const { return where + ": " + key; }
    double number(const std::string& key, double fallback) const {
        const toml::node* n = get(key);
        return n ? r.number(*n, at(key)) : fallback;
    }
    double positive(const std::string& key, double fallback) const {
        const toml::node* n = get(key);
        return n ? r.positive(*n, at(key)) : fallback;
    }
    uint64_t count(const std::string& key, uint64_t fallback, uint64_t min, uint64_t max) const {
        const toml::node* n = get(key);
        return n ? r.count(*n, at(key), min, max) : fallback;
    }
    std::string string(const std::string& key, const std::string& fallback) const {
        const toml::node* n = get(key);
        return n ? r.string(*n, at(key)) : fallback;
    }
    const toml::node& require(const std::string& key) const { return r.require(t, key, where); }
    // A value in (lo, hi), both open.
    double between(const std::string& key, double fallback, double lo, double hi) const {
        const double v = number(key, fallback);
        if (!(v > lo && v < hi))
            r.fail(get(key) ? *get(key) : static_cast<const toml::node&>(t),
                   at(key) + ": must be between " + std::to_string(lo) + " and " +
                       std::to_string(hi) + " (exclusive)");
        return v;
    }
};

// `value` must be one of `names`; returns its index.
size_t choice(const Reader& r, const toml::node& node, const std::string& where,
              const std::vector<std::string>& names) {
    const std::string value = r.string(node, where);
    for (size_t i = 0; i < names.size(); i++)
        if (names[i] == value) return i;
    std::string list;
    for (const auto& n : names)
        list += (list.empty() ? "'" : ", '") + n + "'";
    r.fail(node, where + ": unknown value '" + value + "' (expected one of " + list + ")");
}

const toml::table* optionalTable(const Reader& r, const toml::table& root, const std::string& key) {
    const toml::node* n = root.get(key);
    return n ? &r.table(*n, key) : nullptr;
}

DatasetConfig readDataset(const Reader& r, const toml::table& root) {
    const toml::table& t = r.table(r.require(root, "dataset", "config"), "dataset");
    const Table d{r, t, "dataset"};
    DatasetConfig c;
    // In the order of DatasetKind.
    c.kind = static_cast<DatasetKind>(choice(r, d.require("kind"), "dataset: kind",
                                             {"yinyang", "shd", "ssc", "synthetic_shd", "hdf5"}));
    const std::vector<std::string> common = {"kind", "validation_size", "validation_seed"};
    std::vector<std::string> allowed = common;
    c.validationSize = d.count("validation_size", 0, 0, kMaxCount);
    c.validationSeed = d.count("validation_seed", 41, 0, kMaxSeed);
    switch (c.kind) {
    case DatasetKind::Shd:
    case DatasetKind::Ssc:
        // The published files have a fixed shape; other shapes are kind "hdf5".
        for (const char* key : {"num_classes", "num_channels"})
            if (const toml::node* n = d.get(key))
                r.fail(*n, d.at(key) + ": kind \"shd\" and \"ssc\" are the published files " +
                               "(20 and 35 classes); use kind = \"hdf5\" for files in their " +
                               "layout of other shapes");
        [[fallthrough]];
    case DatasetKind::Hdf5:
        allowed.insert(allowed.end(), {"train_file", "validation_file", "test_file", "max_examples",
                                       "duration_ms"});
        if (c.kind == DatasetKind::Hdf5)
            allowed.insert(allowed.end(), {"num_classes", "num_channels"});
        r.checkKeys(t, "dataset", allowed);
        c.configDir = std::filesystem::path(r.file()).parent_path().string();
        c.trainFile = r.string(d.require("train_file"), d.at("train_file"));
        c.testFile = d.string("test_file", "");
        c.validationFile = d.string("validation_file", "");
        if (!c.validationFile.empty() && c.validationSize)
            r.fail(*d.get("validation_size"),
                   d.at("validation_size") + ": give validation_file or validation_size, not both");
        c.maxExamples = d.count("max_examples", 0, 0, kMaxCount);
        c.durationMs = d.get("duration_ms") ? d.positive("duration_ms", 0.0) : 0.0;
        c.numClasses = static_cast<uint32_t>(d.count("num_classes", 0, 1, kMaxCount));
        c.numChannels = static_cast<uint32_t>(d.count("num_channels", 0, 1, kMaxCount));
        return c;
    case DatasetKind::SyntheticShd:
        allowed.insert(allowed.end(), {"duration_ms", "mean_spikes"});
        c.durationMs = d.positive("duration_ms", SyntheticShdOptions{}.duration);
        c.meanSpikes = d.positive("mean_spikes", SyntheticShdOptions{}.meanSpikes);
        [[fallthrough]];
    case DatasetKind::YinYang:
        allowed.insert(allowed.end(), {"train_size", "test_size", "train_seed", "test_seed"});
        r.checkKeys(t, "dataset", allowed);
        c.trainSize = r.count(d.require("train_size"), d.at("train_size"), 1, kMaxCount);
        c.testSize = d.count("test_size", 0, 0, kMaxCount);
        c.trainSeed = d.count("train_seed", 42, 0, kMaxSeed);
        c.testSeed = d.count("test_seed", 40, 0, kMaxSeed);
        return c;
    }
    throw InternalError("dataset kind");
}

// The first population of one of `kinds` (nullptr if none).
const Population* findPopulation(const Network& net, std::initializer_list<PopulationKind> kinds) {
    for (const Population& p : net.populations())
        for (const PopulationKind k : kinds)
            if (p.kind == k) return &p;
    return nullptr;
}

// [dataset] num_channels and num_classes against the network, at the keys' positions.
void checkDatasetShape(const Reader& r, const toml::table& root, const TrainConfig& cfg) {
    const toml::table& t = *root.get("dataset")->as_table();
    const Population* in = findPopulation(cfg.network, {PopulationKind::SpikeInput});
    if (cfg.dataset.numChannels && in && cfg.dataset.numChannels != in->input.numChannels)
        r.fail(*t.get("num_channels"),
               "dataset: num_channels: " + std::to_string(cfg.dataset.numChannels) +
                   " but the spike_input population '" + in->name + "' has " +
                   std::to_string(in->input.numChannels) +
                   " channels (its size; they must be equal)");
    const Population* out = readoutPopulation(cfg.network);
    if (cfg.dataset.numClasses && out && cfg.dataset.numClasses > out->size)
        r.fail(*t.get("num_classes"),
               "dataset: num_classes: " + std::to_string(cfg.dataset.numClasses) +
                   " but the readout population '" + out->name + "' has only " +
                   std::to_string(out->size) + " neurons (one per class at least)");
}

// Network::add* checks what needs only the description; its ModelError is placed at the entry.
template <class F> void atEntry(const Reader& r, const toml::table& entry, F&& add) {
    try {
        add();
    } catch (const ConfigError&) {
        throw;
    } catch (const ModelError& e) {
        r.fail(entry, e.what());
    }
}

// The keys a LIF population and a first-spike readout share, with their defaults.
const std::vector<std::string> kLifKeys = {
    "name", "kind", "size", "tau_mem", "v_thresh", "spike_buffer", "reg_strength", "reg_target"};

LifParams readLif(const Table& p) {
    LifParams lif;
    lif.tauMem = p.positive("tau_mem", lif.tauMem);
    lif.vThresh = p.positive("v_thresh", lif.vThresh);
    lif.spikeBufferSize =
        static_cast<uint32_t>(p.count("spike_buffer", lif.spikeBufferSize, 1, 1u << 20));
    lif.regStrength = p.number("reg_strength", lif.regStrength);
    lif.regTarget = p.number("reg_target", lif.regTarget);
    return lif;
}

void readPopulation(const Reader& r, const toml::table& t, Network& net) {
    const std::string name = r.identifier(r.require(t, "name", "population"), "population: name");
    const Table p{r, t, "population '" + name + "'"};
    // In the order of PopulationKind.
    const auto kind = static_cast<PopulationKind>(
        choice(r, p.require("kind"), p.at("kind"),
               {"spike_input", "lif", "leaky_integrate", "first_spike_readout"}));
    const auto size = static_cast<uint32_t>(r.count(p.require("size"), p.at("size"), 1, kMaxCount));
    switch (kind) {
    case PopulationKind::SpikeInput: {
        r.checkKeys(t, p.where, {"name", "kind", "size", "delay_copies", "delay_step"});
        SpikeInputParams in{size};
        in.delayCopies = static_cast<uint32_t>(p.count("delay_copies", 0, 0, 1000));
        if (p.get("delay_step")) in.delayStep = p.positive("delay_step", in.delayStep);
        atEntry(r, t, [&] { net.addSpikeInput(name, in); });
        return;
    }
    case PopulationKind::Lif: {
        r.checkKeys(t, p.where, kLifKeys);
        const LifParams lif = readLif(p);
        atEntry(r, t, [&] { net.addLif(name, size, lif); });
        return;
    }
    case PopulationKind::LeakyIntegrate: {
        r.checkKeys(t, p.where, {"name", "kind", "size", "tau_mem", "readout"});
        LeakyIntegrateParams li;
        li.tauMem = p.positive("tau_mem", li.tauMem);
        if (const toml::node* n = p.get("readout")) // in the order of Readout
            li.readout = static_cast<Readout>(
                choice(r, *n, p.at("readout"),
                       {"sum_var", "avg_var", "avg_var_exp_weight", "max_var", "var"}));
        atEntry(r, t, [&] { net.addLeakyIntegrate(name, size, li); });
        return;
    }
    case PopulationKind::FirstSpikeReadout: {
        std::vector<std::string> keys = kLifKeys;
        keys.insert(keys.end(), {"tau0", "tau1", "alpha", "silent_push"});
        r.checkKeys(t, p.where, keys);
        FirstSpikeReadoutParams fs;
        fs.lif = readLif(p);
        fs.tau0 = p.positive("tau0", fs.tau0);
        fs.tau1 = p.positive("tau1", fs.tau1);
        fs.alpha = p.number("alpha", fs.alpha);
        fs.silentPush = p.number("silent_push", fs.silentPush);
        atEntry(r, t, [&] { net.addFirstSpikeReadout(name, size, fs); });
        return;
    }
    }
}

// connectivity = "block_sparse" with block_size (16), block_density (0.1), layout ("random" or
// "watts_strogatz") and rewire (watts_strogatz only); without it the block keys are errors.
std::optional<BlockSparseInit> readBlocks(const Reader& r, const toml::table& t, const Table& c) {
    const toml::node* kind = c.get("connectivity");
    if (!kind) {
        for (const char* key : {"block_size", "block_density", "layout", "rewire", "attachments"})
            if (const toml::node* n = c.get(key))
                r.fail(*n, c.at(key) + ": applies to connectivity = \"block_sparse\" only");
        return std::nullopt;
    }
    const std::string text = r.string(*kind, c.at("connectivity"));
    if (text != "block_sparse")
        r.fail(*kind, c.at("connectivity") + ": unknown connectivity '" + text +
                          "' (\"block_sparse\"; Dense or Sparse follow from probability)");
    const BlockSparseInit defaults;
    // A training connection's synapse code accumulates gradients and sends adjoints back
    // (assignments, addToPre): the matrix form cannot run it, so no propagation keys here.
    BlockKeys keys{"layout", "block_size", "block_density", "rewire", ""};
    keys.propagation = keys.expectedRate = "";
    return readBlockKeys(r, t, c.where, keys, &defaults);
}

// prune_every (batches), prune_fraction (0.1) and prune_until (0: no decay) on a block-sparse
// connection: its BlockPruning; prune_every turns it on, the other two need it.
std::optional<BlockPruning> readPruning(const Reader& r, const Table& c, bool blockSparse) {
    const toml::node* every = c.get("prune_every");
    if (!every) {
        for (const char* key : {"prune_fraction", "prune_until"})
            if (const toml::node* n = c.get(key))
                r.fail(*n, c.at(key) + ": needs prune_every (the batches between prunings)");
        return std::nullopt;
    }
    if (!blockSparse)
        r.fail(*every, c.at("prune_every") + ": applies to connectivity = \"block_sparse\" only");
    BlockPruning p;
    p.everyBatches = static_cast<uint32_t>(c.count("prune_every", 100, 1, UINT32_MAX));
    if (const toml::node* n = c.get("prune_fraction")) {
        p.fraction = c.number("prune_fraction", p.fraction);
        if (!(p.fraction > 0.0 && p.fraction <= 1.0))
            r.fail(*n, c.at("prune_fraction") + ": must be in (0, 1]");
    }
    p.untilBatch = c.count("prune_until", 0, 0, UINT64_MAX);
    return p;
}

void readConnection(const Reader& r, const toml::table& t, Network& net) {
    const std::string name = r.identifier(r.require(t, "name", "connection"), "connection: name");
    const Table c{r, t, "connection '" + name + "'"};
    r.checkKeys(t, c.where,
                {"name", "source", "target", "weight_mean", "weight_sd", "tau_syn", "probability",
                 "connectivity", "block_size", "block_density", "layout", "rewire", "attachments",
                 "prune_every", "prune_fraction", "prune_until"});
    const std::string source = r.identifier(c.require("source"), c.at("source"));
    const std::string target = r.identifier(c.require("target"), c.at("target"));
    ConnectionParams params;
    params.weights.mean = c.number("weight_mean", 0.0);
    params.weights.sd = c.number("weight_sd", 0.0);
    if (params.weights.sd < 0.0) r.fail(*c.get("weight_sd"), c.at("weight_sd") + ": must be >= 0");
    params.tauSyn = c.positive("tau_syn", params.tauSyn);
    params.probability = c.number("probability", params.probability); // range: addConnection
    params.blocks = readBlocks(r, t, c);
    params.pruning = readPruning(r, c, params.blocks.has_value());
    atEntry(r, t, [&] { net.addConnection(name, source, target, params); });
}

Network readNetwork(const Reader& r, const toml::table& root) {
    Network net;
    const toml::array& pops = r.array(r.require(root, "populations", "config"), "populations");
    for (const toml::node& n : pops)
        readPopulation(r, r.table(n, "populations"), net);
    if (const toml::node* cs = root.get("connections"))
        for (const toml::node& n : r.array(*cs, "connections"))
            readConnection(r, r.table(n, "connections"), net);
    return net;
}

void readTraining(const Reader& r, const toml::table& root, TrainConfig& cfg) {
    const toml::table& t = r.table(r.require(root, "training", "config"), "training");
    r.checkKeys(t, "training",
                {"dt",
                 "example_timesteps",
                 "batch_size",
                 "precision",
                 "seed",
                 "epochs",
                 "learning_rate",
                 "beta1",
                 "beta2",
                 "epsilon",
                 "lr_decay",
                 "shuffle_seed",
                 "loss",
                 "lr_warmup_start",
                 "lr_warmup_factor",
                 "channel_shift",
                 "silent_boost",
                 "lr_plateau_patience",
                 "lr_plateau_factor",
                 "blend"});
    const Table s{r, t, "training"};
    EventPropOptions& o = cfg.eventprop;
    o.dt = r.positive(s.require("dt"), s.at("dt"));
    o.exampleTimesteps = static_cast<uint32_t>(r.count(
        s.require("example_timesteps"), s.at("example_timesteps"), 1, train::kMaxExampleTimesteps));
    o.batchSize = static_cast<uint32_t>(s.count("batch_size", o.batchSize, 1, maxBatchSize));
    if (const toml::node* n = s.get("loss")) // in the order of Loss
        o.loss = static_cast<Loss>(choice(r, *n, s.at("loss"), {"cross_entropy", "mse"}));
    if (const toml::node* n = s.get("precision"))
        o.precision = choice(r, *n, s.at("precision"), {"float", "double"}) == 0
                          ? Precision::Float
                          : Precision::Double;
    o.seed = s.count("seed", o.seed, 0, kMaxSeed);
    o.adam.learningRate = s.positive("learning_rate", o.adam.learningRate);
    o.adam.beta1 = s.between("beta1", o.adam.beta1, 0.0, 1.0);
    o.adam.beta2 = s.between("beta2", o.adam.beta2, 0.0, 1.0);
    o.adam.epsilon = s.positive("epsilon", o.adam.epsilon);
    o.adam.warmupStart = s.positive("lr_warmup_start", o.adam.warmupStart);
    o.adam.warmupFactor = s.between("lr_warmup_factor", o.adam.warmupFactor, 1.0, 10.0);
    o.channelShift = static_cast<uint32_t>(s.count("channel_shift", o.channelShift, 0, 100000));

    FitOptions& f = cfg.fit;
    f.epochs = static_cast<uint32_t>(r.count(s.require("epochs"), s.at("epochs"), 1, kMaxCount));
    f.learningRate = o.adam.learningRate; // one value: the config's learning_rate
    f.learningRateDecay = s.positive("lr_decay", f.learningRateDecay);
    f.shuffleSeed = s.count("shuffle_seed", f.shuffleSeed, 0, kMaxSeed);
    f.plateauPatience =
        static_cast<uint32_t>(s.count("lr_plateau_patience", f.plateauPatience, 0, kMaxCount));
    f.plateauFactor = s.between("lr_plateau_factor", f.plateauFactor, 0.0, 1.0);
    if (const toml::node* n = s.get("blend")) f.blend = r.boolean(*n, s.at("blend"));
    f.silentBoost = s.number("silent_boost", f.silentBoost);
    if (!(f.silentBoost >= 0.0 && f.silentBoost < 1e6))
        r.fail(*s.get("silent_boost"),
               s.at("silent_boost") + ": must be >= 0, got " + std::to_string(f.silentBoost));
}

void readOutput(const Reader& r, const toml::table& root, TrainConfig& cfg) {
    const toml::table* t = optionalTable(r, root, "output");
    if (!t) return;
    r.checkKeys(*t, "output", {"checkpoint_dir", "checkpoint_every", "metrics_csv"});
    const Table o{r, *t, "output"};
    if (o.get("checkpoint_dir"))
        cfg.checkpointDir = resolve(r.file(), o.string("checkpoint_dir", ""));
    cfg.checkpointEvery = static_cast<uint32_t>(o.count("checkpoint_every", 1, 1, kMaxCount));
    if (o.get("metrics_csv")) cfg.metricsCsv = resolve(r.file(), o.string("metrics_csv", ""));
}

// The class count's origin, for messages.
std::string classesOrigin(const HeidelbergFile& f, const std::string& options,
                          const std::string& file) {
    switch (f.classesFrom) {
    case ClassCountSource::Options:
        return options;
    case ClassCountSource::Keys:
        return "the training file '" + file + "' has " + std::to_string(f.data.numClasses()) +
               " classes (the length of its extra/keys)";
    case ClassCountSource::Labels:
        return "the training file '" + file + "' has " + std::to_string(f.data.numClasses()) +
               " classes (its largest label + 1; set [dataset] num_classes for more)";
    }
    throw InternalError("class count source");
}

// shd, ssc, hdf5: the training file, then the validation and test files with its class count.
TrainData loadHdf5Files(const DatasetConfig& d, uint32_t numChannels, const std::string& dir,
                        double trialMs) {
    HeidelbergOptions o;
    o.numChannels = d.numChannels ? d.numChannels : numChannels;
    o.maxExamples = d.maxExamples;
    o.duration = d.durationMs;
    switch (d.kind) {
    case DatasetKind::Shd:
    case DatasetKind::Ssc:
        o.numClasses = d.kind == DatasetKind::Shd ? 20 : 35;
        o.numClassesFrom = std::string("kind \"") + (d.kind == DatasetKind::Shd ? "shd" : "ssc") +
                           "\" has " + std::to_string(o.numClasses) +
                           " classes; kind = \"hdf5\" reads files in this layout of any shape";
        break;
    case DatasetKind::Hdf5:
        o.numClasses = d.numClasses; // 0: from the file
        if (d.numClasses)
            o.numClassesFrom = "[dataset] num_classes = " + std::to_string(d.numClasses);
        break;
    case DatasetKind::YinYang:
    case DatasetKind::SyntheticShd:
        throw InternalError("not an HDF5 dataset kind");
    }
    std::vector<std::string> warnings;
    auto read = [&](const std::string& name) {
        const std::string path = resolveIn(dir, name);
        HeidelbergFile f = readHeidelbergHdf5File(path, o);
        warnings.insert(warnings.end(), f.warnings.begin(), f.warnings.end());
        // Kept events later than the trial (when duration_ms is longer or not given).
        for (std::string& w : lateEventWarnings(f.data, "HDF5 file '" + path + "'", trialMs))
            warnings.push_back(w + " (the trial is [training] example_timesteps × dt)");
        return f;
    };
    HeidelbergFile first = read(d.trainFile);
    const std::string from = classesOrigin(first, o.numClassesFrom, resolveIn(dir, d.trainFile));
    o.numClasses = first.data.numClasses();
    o.numClassesFrom = from;
    std::optional<EventDataset> test, validation;
    if (!d.testFile.empty()) test = read(d.testFile).data;
    if (!d.validationFile.empty()) validation = read(d.validationFile).data;
    EventDataset train = std::move(first.data);
    if (d.validationSize) {
        auto [rest, split] = splitTrainValidation(train, d.validationSize, d.validationSeed);
        train = std::move(rest);
        validation = std::move(split);
    }
    return {std::move(train), std::move(validation), std::move(test), from, std::move(warnings)};
}

} // namespace

const train::Population* readoutPopulation(const train::Network& net) {
    return findPopulation(net, {PopulationKind::LeakyIntegrate, PopulationKind::FirstSpikeReadout});
}

TrainConfig parseTrainConfig(std::string_view text, const std::string& sourceName,
                             const std::vector<std::string>& overrides) {
    toml::table root = parseToml(text, sourceName);
    Reader r(sourceName);
    r.checkKeys(root, "config",
                {"parameters", "dataset", "populations", "connections", "training", "output"});
    const toml::node* params = root.get("parameters");
    r.setParameters(params ? &r.table(*params, "parameters") : nullptr, overrides);
    TrainConfig cfg;
    cfg.file = sourceName;
    cfg.dataset = readDataset(r, root);
    cfg.network = readNetwork(r, root);
    checkDatasetShape(r, root, cfg);
    readTraining(r, root, cfg);
    readOutput(r, root, cfg);
    return cfg;
}

TrainConfig loadTrainConfig(const std::string& path, const std::vector<std::string>& overrides) {
    std::string text;
    try {
        text = readInputFile(path);
    } catch (const InputFileError& e) {
        throw ConfigError(path, 0, 0,
                          std::string(e.atOpen() ? "cannot open" : "cannot read") +
                              " the config file: " + e.what());
    }
    return parseTrainConfig(text, path, overrides);
}

TrainData loadTrainData(const DatasetConfig& d, uint32_t numChannels, const std::string& dataDir,
                        double trialMs) {
    switch (d.kind) {
    case DatasetKind::YinYang:
    case DatasetKind::SyntheticShd: {
        auto make = [&](uint64_t size, uint64_t seed) {
            if (d.kind == DatasetKind::YinYang) return makeYinYang(size, seed);
            SyntheticShdOptions o;
            o.numChannels = numChannels;
            o.duration = d.durationMs;
            o.meanSpikes = d.meanSpikes;
            return makeSyntheticShd(size, seed, o);
        };
        TrainData data{make(d.trainSize, d.trainSeed), std::nullopt, std::nullopt, "", {}};
        if (d.validationSize) data.validation = make(d.validationSize, d.validationSeed);
        if (d.testSize) data.test = make(d.testSize, d.testSeed);
        return data;
    }
    case DatasetKind::Shd:
    case DatasetKind::Ssc:
    case DatasetKind::Hdf5:
        return loadHdf5Files(d, numChannels, dataDir.empty() ? d.configDir : dataDir, trialMs);
    }
    throw InternalError("dataset kind");
}

} // namespace spikeforge::cli
