// `spikeforge train` and `spikeforge evaluate` (train_command.hpp): a training config becomes a
// Network and an EventPropCompiler, fit() runs the epochs with the progress bar, metrics CSV and
// checkpoints the config asks for, and the result is printed (and as one JSON line).
#include "train_command.hpp"

#include "backend_options.hpp"
#include "commands.hpp"
#include "json.hpp"
#include "train_config.hpp"

#include "spikeforge/errors.hpp"
#include "spikeforge/train/fit.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <numeric>
#include <unistd.h>

namespace spikeforge::cli {

namespace {

using namespace spikeforge::train;

uint32_t inputChannels(const Network& net) {
    for (const Population& p : net.populations())
        if (p.kind == PopulationKind::SpikeInput) return p.input.numChannels;
    throw ModelError("the network has no population of kind 'spike_input'");
}

std::unique_ptr<EventPropCompiler> makeCompiler(const TrainConfig& cfg,
                                                const TrainCommandOptions& o) {
    const BackendPreferences prefs = preferencesOf(o.run);
    return std::make_unique<EventPropCompiler>(cfg.network, cfg.eventprop, prefs);
}

// Reads the config's sets, prints the reader's warnings to `err` and checks that the readout has
// a neuron per class (naming where the class count came from).
TrainData loadData(const TrainConfig& cfg, const TrainCommandOptions& o, std::ostream& err) {
    const double trialMs = cfg.eventprop.dt * double(cfg.eventprop.exampleTimesteps);
    TrainData data = loadTrainData(cfg.dataset, inputChannels(cfg.network), o.dataDir, trialMs);
    for (const std::string& w : data.warnings)
        err << "warning: " << w << '\n';
    err << std::flush;
    const Population* out = readoutPopulation(cfg.network);
    const uint32_t classes = data.train.numClasses();
    if (out && classes > out->size)
        throw ModelError("dataset: " +
                         (data.classesFrom.empty()
                              ? "the dataset has " + std::to_string(classes) + " classes"
                              : data.classesFrom) +
                         ", but the readout population '" + out->name + "' has only " +
                         std::to_string(out->size) + " neurons (it needs one per class)");
    return data;
}

Metrics evaluateAll(EventPropCompiler& c, const EventDataset& data) {
    c.setDataset(data);
    std::vector<uint32_t> all(data.size());
    std::iota(all.begin(), all.end(), 0u);
    return c.evaluate(all);
}

std::string percent(double fraction) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f%%", 100.0 * fraction);
    return text;
}

// A metric's value for JSON, or null when the set it belongs to does not exist.
std::string jsonOr(const std::optional<double>& v) {
    return v ? jsonNumber(*v) : "null";
}

// Checked before the data is read and the model compiled, so that a mistake fails at once.
// A fresh run never replaces the checkpoint or the metrics of an earlier one.
void checkOutputs(const TrainConfig& cfg, const TrainCommandOptions& o) {
    const bool fresh = o.resumeDir.empty();
    if (!cfg.checkpointDir.empty() && prepareCheckpointDir(cfg.checkpointDir) && fresh)
        throw ModelError("checkpoint directory '" + cfg.checkpointDir +
                         "' holds the checkpoint of an earlier run; continue it with --resume, "
                         "or choose another directory");
    std::error_code ec;
    if (!cfg.metricsCsv.empty() && fresh && std::filesystem::exists(cfg.metricsCsv, ec))
        throw ModelError("metrics file '" + cfg.metricsCsv +
                         "' already exists; continue its run with --resume, or remove it");
}

std::vector<std::unique_ptr<Callback>> makeCallbacks(const TrainConfig& cfg,
                                                     const TrainCommandOptions& o,
                                                     EventPropCompiler& compiler, uint32_t start,
                                                     std::ostream& out) {
    std::vector<std::unique_ptr<Callback>> owned;
    if (!cfg.checkpointDir.empty())
        owned.push_back(std::make_unique<Checkpoint>(compiler, cfg.checkpointDir,
                                                     cfg.checkpointEvery, cfg.fit));
    if (!cfg.metricsCsv.empty())
        owned.push_back(std::make_unique<MetricsCsv>(cfg.metricsCsv, start));
    owned.push_back(std::make_unique<ProgressBar>(out, o.interactive));
    return owned;
}

void printTrainJson(std::ostream& out, const TrainCommandOptions& o, const TrainConfig& cfg,
                    const std::vector<EpochReport>& reports, const std::optional<Metrics>& test) {
    std::optional<double> trainAcc, trainLoss, validAcc, epochSeconds, testAcc, testLoss;
    if (!reports.empty()) {
        const EpochReport& last = reports.back();
        trainAcc = last.train.accuracy();
        trainLoss = last.train.meanLoss();
        if (last.validation) validAcc = last.validation->accuracy();
        double total = 0.0; // [s]
        for (const EpochReport& r : reports)
            total += r.seconds;
        epochSeconds = total / double(reports.size());
    }
    if (test) testAcc = test->accuracy(), testLoss = test->meanLoss();
    JsonObject spikes; // the last epoch's mean spikes per neuron and training example
    if (!reports.empty())
        for (const PopulationActivity& a : reports.back().activity)
            spikes.addNumber(a.population, a.spikesPerNeuron);
    out << JsonObject()
               .addString("backend", o.run.backend)
               .addInteger("epochs", cfg.fit.epochs)
               .addInteger("epochs_run", reports.size())
               .addRaw("train_loss", jsonOr(trainLoss))
               .addRaw("train_accuracy", jsonOr(trainAcc))
               .addRaw("validation_accuracy", jsonOr(validAcc))
               .addRaw("test_loss", jsonOr(testLoss))
               .addRaw("test_accuracy", jsonOr(testAcc))
               .addRaw("epoch_s", jsonOr(epochSeconds))
               .addRaw("host_fraction", jsonOr(hostFraction(reports)))
               .addObject("spikes_per_neuron", spikes)
               .str()
        << '\n';
}

int trainCommand(const TrainCommandOptions& o, std::ostream& out, std::ostream& err) {
    checkBackendOptions(o.run);
    TrainConfig cfg = loadTrainConfig(o.config, o.sets);
    if (o.epochs) cfg.fit.epochs = *o.epochs;
    checkOutputs(cfg, o);
    const TrainData data = loadData(cfg, o, err);
    auto compiler = makeCompiler(cfg, o);
    const ResumePoint resume =
        o.resumeDir.empty() ? ResumePoint{} : resumeFromCheckpoint(*compiler, o.resumeDir, cfg.fit);
    const uint32_t start = resume.epoch;
    const auto owned = makeCallbacks(cfg, o, *compiler, start, out);
    std::vector<Callback*> callbacks;
    for (const auto& c : owned)
        callbacks.push_back(c.get());

    out << "training on backend " << o.run.backend << ": " << data.train.size() << " examples"
        << (data.validation ? ", " + std::to_string(data.validation->size()) + " validation" : "")
        << ", epochs " << start + 1 << "-" << cfg.fit.epochs << '\n'
        << std::flush;
    const std::vector<EpochReport> reports =
        fit(*compiler, data.train, data.validation ? &*data.validation : nullptr, cfg.fit,
            callbacks, resume);

    std::optional<Metrics> test;
    if (data.test) {
        test = evaluateAll(*compiler, *data.test);
        out << "test  loss " << test->meanLoss() << "  accuracy " << percent(test->accuracy())
            << " (" << test->examples << " examples)\n";
    }
    if (o.json) printTrainJson(out, o, cfg, reports, test);
    return exitOk;
}

int evaluateCommand(const TrainCommandOptions& o, std::ostream& out, std::ostream& err) {
    checkBackendOptions(o.run);
    const TrainConfig cfg = loadTrainConfig(o.config, o.sets);
    const TrainData data = loadData(cfg, o, err);
    const EventDataset* set = data.test ? &*data.test : nullptr;
    const char* which = "test";
    if (!set && data.validation) set = &*data.validation, which = "validation";
    if (!set)
        throw ConfigError(cfg.file, 0, 0,
                          "dataset: evaluate needs a test set (test_size or test_file) or a "
                          "validation set (validation_size)");
    auto compiler = makeCompiler(cfg, o);
    const CheckpointInfo info = loadCheckpoint(*compiler, o.checkpointDir);
    const Metrics m = evaluateAll(*compiler, *set);
    out << which << " set after " << info.nextEpoch << " epochs: loss " << m.meanLoss()
        << "  accuracy " << percent(m.accuracy()) << " (" << m.examples << " examples)\n";
    if (o.json)
        out << JsonObject()
                   .addString("backend", o.run.backend)
                   .addString("set", which)
                   .addInteger("epochs", info.nextEpoch)
                   .addInteger("examples", m.examples)
                   .addNumber("loss", m.meanLoss())
                   .addNumber("accuracy", m.accuracy())
                   .str()
            << '\n';
    return exitOk;
}

void addCommonOptions(CLI::App* cmd, TrainCommandOptions& o) {
    cmd->add_option("config", o.config, "TOML training config (docs/training.md)")->required();
    addBackendOptions(*cmd, o.run, BackendFlags::Common);
    cmd->add_option("--set", o.sets, "Override a [parameters] entry: NAME=VALUE (repeatable)")
        ->allow_extra_args(false);
    cmd->add_option("--data-dir", o.dataDir,
                    "Directory of the dataset files (shd, ssc) named in the config (default: "
                    "the config's directory)");
    cmd->add_flag("--json", o.json, "End the output with one JSON line of results");
}

} // namespace

int runTrain(const TrainCommandOptions& options, std::ostream& out, std::ostream& err) {
    return runGuarded(err, [&] { return trainCommand(options, out, err); });
}

int runEvaluate(const TrainCommandOptions& options, std::ostream& out, std::ostream& err) {
    return runGuarded(err, [&] { return evaluateCommand(options, out, err); });
}

std::function<std::optional<int>()> addTrainCommands(CLI::App& app) {
    auto train = std::make_shared<TrainCommandOptions>();
    auto evaluate = std::make_shared<TrainCommandOptions>();
    auto epochs = std::make_shared<uint32_t>(0);

    CLI::App* t = app.add_subcommand("train", "Train a network described in a TOML config");
    addCommonOptions(t, *train);
    CLI::Option* epochsOpt = t->add_option("--epochs", *epochs,
                                           "Epochs in all (overrides "
                                           "[training] epochs)")
                                 ->check(CLI::Range(1u, 1000000u));
    t->add_option("--resume", train->resumeDir, "Continue from the checkpoint in this directory");

    CLI::App* e = app.add_subcommand("evaluate", "Evaluate a checkpoint on the config's test set");
    addCommonOptions(e, *evaluate);
    e->add_option("--checkpoint", evaluate->checkpointDir, "Checkpoint directory")->required();

    return [=]() -> std::optional<int> {
        const bool interactive = ::isatty(STDOUT_FILENO) != 0;
        if (t->parsed()) {
            if (epochsOpt->count() > 0) train->epochs = *epochs;
            train->interactive = interactive;
            return runTrain(*train, std::cout, std::cerr);
        }
        if (e->parsed()) return runEvaluate(*evaluate, std::cout, std::cerr);
        return std::nullopt;
    };
}

} // namespace spikeforge::cli
