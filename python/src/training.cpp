// The training API of include/spikeforge/train as Python classes (spikeforge.ml gives them
// mlGeNN's shape): the Network description, EventPropCompiler and InferenceCompiler, fit() with
// its callbacks and checkpoints. Arrays cross as numpy; weights and recordings come out flat
// (row-major [source][target], [step][neuron]) and spikeforge.ml shapes them. Long calls
// (compiling, epochs, evaluation) release the GIL; a Python callback takes it back only for the
// call, between batches, so no host work is added to the device's stretch of batches.
#include "bindings.hpp"
#include "convert.hpp"

#include "spikeforge/errors.hpp"
#include "spikeforge/train/fit.hpp"
#include "spikeforge/train/inference.hpp"

#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace spikeforge::python {

void bindTrainingData(nb::module_& m); // training_data.cpp

namespace {

using namespace spikeforge::train;

using Indices = nb::ndarray<const uint32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

std::span<const uint32_t> spanOf(Indices a) {
    return {a.data(), a.shape(0)};
}

nb::ndarray<nb::numpy, double> flat(std::vector<double> v) {
    const size_t n = v.size();
    return copyOf(std::move(v), {n});
}

// Recorded spikes, one (times [ms], neurons, batch slots) tuple per example.
nb::list spikeLists(const std::vector<std::vector<SpikeEvent>>& examples) {
    nb::list out;
    for (const auto& events : examples)
        out.append(spikeArrays(events));
    return out;
}

nb::list variableLists(const std::vector<std::vector<double>>& examples) {
    nb::list out;
    for (const auto& values : examples)
        out.append(flat(values));
    return out;
}

// A state (saveState, a checkpoint) as {name: bytes} and back.
nb::dict stateDict(const std::vector<EventPropCompiler::StateArray>& state) {
    nb::dict out;
    for (const auto& a : state)
        out[a.name.c_str()] =
            nb::bytes(reinterpret_cast<const char*>(a.bytes.data()), a.bytes.size());
    return out;
}

std::vector<EventPropCompiler::StateArray> stateOf(const nb::dict& d) {
    std::vector<EventPropCompiler::StateArray> out;
    for (auto [key, value] : d) {
        const nb::bytes b = nb::cast<nb::bytes>(value);
        const auto* p = static_cast<const uint8_t*>(static_cast<const void*>(b.c_str()));
        out.push_back({nb::cast<std::string>(key), std::vector<uint8_t>(p, p + b.size())});
    }
    return out;
}

// A Python object as a fit() callback: each hook calls the object's method of the same name if
// it has one, holding the GIL only for the call.
class PythonCallback : public Callback {
public:
    explicit PythonCallback(nb::object target) : m_target(std::move(target)) {}
    ~PythonCallback() override {
        nb::gil_scoped_acquire gil;
        m_target.reset();
    }
    void onTrainBegin(uint32_t first, uint32_t epochs) override {
        call("on_train_begin", first, epochs);
    }
    void onEpochBegin(uint32_t epoch, uint64_t examples) override {
        call("on_epoch_begin", epoch, examples);
    }
    void onBatchesDone(uint32_t epoch, uint64_t done, uint64_t total) override {
        call("on_batches_done", epoch, done, total);
    }
    void onEpochEnd(const EpochReport& report) override { call("on_epoch_end", report); }
    void onTrainEnd(const std::vector<EpochReport>& reports) override {
        call("on_train_end", reports);
    }

private:
    template <typename... Args> void call(const char* hook, const Args&... args) {
        nb::gil_scoped_acquire gil;
        if (nb::hasattr(m_target, hook)) m_target.attr(hook)(args...);
    }
    nb::object m_target;
};

std::vector<EpochReport> fitWith(EventPropCompiler& compiler, const EventDataset& train,
                                 const EventDataset* validation, const FitOptions& options,
                                 const nb::list& callbacks, const ResumePoint& start) {
    std::vector<std::unique_ptr<PythonCallback>> owned;
    std::vector<Callback*> all;
    for (nb::handle c : callbacks) {
        if (nb::isinstance<Callback>(c)) {
            all.push_back(nb::cast<Callback*>(c));
        } else {
            owned.push_back(std::make_unique<PythonCallback>(nb::borrow(c)));
            all.push_back(owned.back().get());
        }
    }
    std::vector<EpochReport> reports;
    {
        nb::gil_scoped_release release;
        reports = fit(compiler, train, validation, options, all, start);
        owned.clear(); // each takes the GIL to drop its object
    }
    return reports;
}

void bindNetwork(nb::module_& m) {
    nb::enum_<Readout>(m, "Readout")
        .value("SumVar", Readout::SumVar)
        .value("AvgVar", Readout::AvgVar)
        .value("AvgVarExpWeight", Readout::AvgVarExpWeight)
        .value("MaxVar", Readout::MaxVar)
        .value("Var", Readout::Var);
    nb::enum_<Synapse>(m, "Synapse")
        .value("Exponential", Synapse::Exponential)
        .value("Delta", Synapse::Delta);
    nb::enum_<Loss>(m, "Loss")
        .value("SparseCategoricalCrossEntropy", Loss::SparseCategoricalCrossEntropy)
        .value("MeanSquaredError", Loss::MeanSquaredError);
    nb::class_<SpikeInputParams>(m, "SpikeInputParams")
        .def(nb::init<>())
        .def_rw("num_channels", &SpikeInputParams::numChannels)
        .def_rw("delay_copies", &SpikeInputParams::delayCopies)
        .def_rw("delay_step", &SpikeInputParams::delayStep);
    nb::class_<LifParams>(m, "LifParams")
        .def(nb::init<>())
        .def_rw("tau_mem", &LifParams::tauMem)
        .def_rw("v_thresh", &LifParams::vThresh)
        .def_rw("spike_buffer_size", &LifParams::spikeBufferSize)
        .def_rw("reg_strength", &LifParams::regStrength)
        .def_rw("reg_target", &LifParams::regTarget);
    nb::class_<LeakyIntegrateParams>(m, "LeakyIntegrateParams")
        .def(nb::init<>())
        .def_rw("tau_mem", &LeakyIntegrateParams::tauMem)
        .def_rw("readout", &LeakyIntegrateParams::readout);
    nb::class_<FirstSpikeReadoutParams>(m, "FirstSpikeReadoutParams")
        .def(nb::init<>())
        .def_rw("lif", &FirstSpikeReadoutParams::lif)
        .def_rw("tau0", &FirstSpikeReadoutParams::tau0)
        .def_rw("tau1", &FirstSpikeReadoutParams::tau1)
        .def_rw("alpha", &FirstSpikeReadoutParams::alpha)
        .def_rw("silent_push", &FirstSpikeReadoutParams::silentPush);
    nb::class_<BlockPruning>(m, "BlockPruning")
        .def(nb::init<>())
        .def_rw("every_batches", &BlockPruning::everyBatches)
        .def_rw("fraction", &BlockPruning::fraction)
        .def_rw("until_batch", &BlockPruning::untilBatch);
    nb::class_<ConnectionParams>(m, "ConnectionParams")
        .def(nb::init<>())
        .def_prop_rw(
            "weight_mean", [](const ConnectionParams& c) { return c.weights.mean; },
            [](ConnectionParams& c, double v) { c.weights.mean = v; })
        .def_prop_rw(
            "weight_sd", [](const ConnectionParams& c) { return c.weights.sd; },
            [](ConnectionParams& c, double v) { c.weights.sd = v; })
        .def_rw("tau_syn", &ConnectionParams::tauSyn)
        .def_rw("probability", &ConnectionParams::probability)
        .def_rw("synapse", &ConnectionParams::synapse)
        .def_rw("blocks", &ConnectionParams::blocks)
        .def_rw("pruning", &ConnectionParams::pruning);
    nb::class_<Network>(m, "TrainingNetwork",
                        "A network to train (include/spikeforge/train/network.hpp); "
                        "spikeforge.ml.Network builds one.")
        .def(nb::init<>())
        .def("add_spike_input", &Network::addSpikeInput, nb::arg("name"), nb::arg("params"))
        .def("add_lif", &Network::addLif, nb::arg("name"), nb::arg("size"), nb::arg("params"))
        .def("add_leaky_integrate", &Network::addLeakyIntegrate, nb::arg("name"), nb::arg("size"),
             nb::arg("params"))
        .def("add_first_spike_readout", &Network::addFirstSpikeReadout, nb::arg("name"),
             nb::arg("size"), nb::arg("params"))
        .def("add_connection", &Network::addConnection, nb::arg("name"), nb::arg("source"),
             nb::arg("target"), nb::arg("params"))
        .def("size_of",
             [](const Network& n, const std::string& p) { return n.population(p).size; });
}

void bindOptions(nb::module_& m) {
    nb::class_<AdamParams>(m, "AdamParams")
        .def(nb::init<>())
        .def_rw("learning_rate", &AdamParams::learningRate)
        .def_rw("beta1", &AdamParams::beta1)
        .def_rw("beta2", &AdamParams::beta2)
        .def_rw("epsilon", &AdamParams::epsilon)
        .def_rw("warmup_start", &AdamParams::warmupStart)
        .def_rw("warmup_factor", &AdamParams::warmupFactor);
    nb::class_<EventPropOptions>(m, "EventPropOptions")
        .def(nb::init<>())
        .def_rw("example_timesteps", &EventPropOptions::exampleTimesteps)
        .def_rw("dt", &EventPropOptions::dt)
        .def_rw("batch_size", &EventPropOptions::batchSize)
        .def_prop_rw(
            "precision",
            [](const EventPropOptions& o) { return std::string(toString(o.precision)); },
            [](EventPropOptions& o, const std::string& p) { o.precision = precisionOf(p); })
        .def_rw("seed", &EventPropOptions::seed)
        .def_rw("adam", &EventPropOptions::adam)
        .def_rw("loss", &EventPropOptions::loss)
        .def_rw("record_spikes", &EventPropOptions::recordSpikes)
        .def_rw("record_variables", &EventPropOptions::recordVariables)
        .def_rw("channel_shift", &EventPropOptions::channelShift);
    nb::class_<InferenceOptions>(m, "InferenceOptions")
        .def(nb::init<>())
        .def_rw("example_timesteps", &InferenceOptions::exampleTimesteps)
        .def_rw("dt", &InferenceOptions::dt)
        .def_rw("batch_size", &InferenceOptions::batchSize)
        .def_prop_rw(
            "precision",
            [](const InferenceOptions& o) { return std::string(toString(o.precision)); },
            [](InferenceOptions& o, const std::string& p) { o.precision = precisionOf(p); })
        .def_rw("seed", &InferenceOptions::seed)
        .def_rw("record_spikes", &InferenceOptions::recordSpikes)
        .def_rw("record_variables", &InferenceOptions::recordVariables);
    nb::class_<FitOptions>(m, "FitOptions")
        .def(nb::init<>())
        .def_rw("epochs", &FitOptions::epochs)
        .def_rw("shuffle_seed", &FitOptions::shuffleSeed)
        .def_rw("learning_rate", &FitOptions::learningRate)
        .def_rw("learning_rate_decay", &FitOptions::learningRateDecay)
        .def_rw("plateau_patience", &FitOptions::plateauPatience)
        .def_rw("plateau_factor", &FitOptions::plateauFactor)
        .def_rw("blend", &FitOptions::blend)
        .def_rw("silent_boost", &FitOptions::silentBoost)
        .def_rw("progress_every_batches", &FitOptions::progressEveryBatches);
}

void bindReports(nb::module_& m) {
    nb::class_<Metrics>(m, "Metrics")
        .def_ro("loss", &Metrics::loss)
        .def_ro("correct", &Metrics::correct)
        .def_ro("examples", &Metrics::examples)
        .def_prop_ro("mean_loss", &Metrics::meanLoss)
        .def_prop_ro("accuracy", &Metrics::accuracy)
        .def("__repr__", [](const Metrics& x) {
            return "<Metrics accuracy " + std::to_string(x.accuracy()) + ", mean loss " +
                   std::to_string(x.meanLoss()) + ", " + std::to_string(x.examples) + " examples>";
        });
    nb::class_<PlateauState>(m, "PlateauState")
        .def_ro("best", &PlateauState::best)
        .def_ro("epochs", &PlateauState::epochs)
        .def_ro("since_best", &PlateauState::sinceBest)
        .def_ro("halvings", &PlateauState::halvings);
    nb::class_<PopulationActivity>(m, "PopulationActivity")
        .def_ro("population", &PopulationActivity::population)
        .def_ro("spikes_per_neuron", &PopulationActivity::spikesPerNeuron)
        .def_ro("silent", &PopulationActivity::silent);
    nb::class_<EpochReport>(m, "EpochReport")
        .def_ro("epoch", &EpochReport::epoch)
        .def_ro("train", &EpochReport::train)
        .def_ro("validation", &EpochReport::validation)
        .def_ro("seconds", &EpochReport::seconds)
        .def_ro("learning_rate", &EpochReport::learningRate)
        .def_ro("plateau", &EpochReport::plateau)
        .def_ro("device_seconds", &EpochReport::deviceSeconds)
        .def_ro("activity", &EpochReport::activity);
    nb::class_<CheckpointInfo>(m, "CheckpointInfo")
        .def_ro("next_epoch", &CheckpointInfo::nextEpoch)
        .def_ro("shuffle_seed", &CheckpointInfo::shuffleSeed)
        .def_ro("learning_rate", &CheckpointInfo::learningRate)
        .def_ro("plateau", &CheckpointInfo::plateau);
    nb::class_<ResumePoint>(m, "ResumePoint")
        .def(nb::init<uint32_t>(), nb::arg("epoch") = 0)
        .def_ro("epoch", &ResumePoint::epoch)
        .def_ro("plateau", &ResumePoint::plateau);
    m.def("host_fraction", &hostFraction, nb::arg("reports"));
}

// What both compilers bind alike: construction (GIL released while compiling), the dataset,
// evaluation, recordings, weights and the simulation.
template <typename C, typename Options> void bindCompilerCommon(nb::class_<C>& cls) {
    cls.def(
           "__init__",
           [](C* self, const Network& net, const Options& o, const std::string& backend,
              int threads, const std::string& cacheDir, bool fastMath, const std::string& device) {
               const BackendPreferences p =
                   preferences(backend, threads, cacheDir, fastMath, device, true);
               nb::gil_scoped_release release;
               new (self) C(net, o, p);
           },
           nb::arg("network"), nb::arg("options"), nb::arg("backend") = "cpu",
           nb::arg("threads") = 0, nb::arg("cache_dir") = "", nb::arg("fast_math") = false,
           nb::arg("device") = "")
        .def("set_dataset", &C::setDataset, nb::arg("data"),
             nb::call_guard<nb::gil_scoped_release>())
        .def(
            "evaluate",
            [](C& c, Indices examples, const EventPropCompiler::Progress& progress) {
                const auto span = spanOf(examples);
                nb::gil_scoped_release release;
                return c.evaluate(span, progress);
            },
            nb::arg("examples"), nb::arg("progress") = nb::none())
        .def(
            "spikes", [](const C& c, const std::string& p) { return spikeLists(c.spikes(p)); },
            nb::arg("population"))
        .def(
            "variables",
            [](const C& c, const std::string& v) { return variableLists(c.variables(v)); },
            nb::arg("name"))
        .def(
            "weights", [](C& c, const std::string& conn) { return flat(c.weights(conn)); },
            nb::arg("connection"))
        .def(
            "set_weights",
            [](C& c, const std::string& conn,
               nb::ndarray<const double, nb::c_contig, nb::device::cpu> v) {
                c.setWeights(conn, valuesOf(v));
            },
            nb::arg("connection"), nb::arg("values"))
        .def("simulation", &C::simulation, nb::rv_policy::reference_internal);
}

void bindEventPropCompiler(nb::module_& m) {
    using C = EventPropCompiler;
    nb::class_<C> cls(m, "EventPropCompilerCore",
                      "EventProp training (include/spikeforge/train/eventprop.hpp); "
                      "spikeforge.ml.EventPropCompiler makes one.");
    bindCompilerCommon<C, EventPropOptions>(cls);
    cls.def(
           "train_epoch",
           [](C& c, Indices order, const C::Progress& progress) {
               const auto span = spanOf(order);
               nb::gil_scoped_release release;
               return c.trainEpoch(span, progress);
           },
           nb::arg("order"), nb::arg("progress") = nb::none())
        .def(
            "compute_gradients",
            [](C& c, Indices batch) {
                const auto span = spanOf(batch);
                nb::gil_scoped_release release;
                return c.computeGradients(span);
            },
            nb::arg("batch"))
        .def(
            "gradient", [](C& c, const std::string& conn) { return flat(c.gradient(conn)); },
            nb::arg("connection"))
        .def("set_learning_rate", &C::setLearningRate, nb::arg("rate"))
        .def("save_state", [](C& c) { return stateDict(c.saveState()); })
        .def(
            "load_state", [](C& c, const nb::dict& d) { c.loadState(stateOf(d)); },
            nb::arg("state"));
}

void bindInferenceCompiler(nb::module_& m) {
    using C = InferenceCompiler;
    nb::class_<C> cls(m, "InferenceCompilerCore",
                      "Inference on a trained network (include/spikeforge/train/inference.hpp); "
                      "spikeforge.ml.InferenceCompiler makes one.");
    bindCompilerCommon<C, InferenceOptions>(cls);
    cls.def(
        "load_weights", [](C& c, const nb::dict& d) { c.loadWeights(stateOf(d)); },
        nb::arg("state"));
}

void bindFit(nb::module_& m) {
    nb::class_<Callback>(m, "FitCallback");
    nb::class_<Checkpoint, Callback>(m, "CheckpointCallback")
        .def(nb::init<EventPropCompiler&, std::filesystem::path, uint32_t, const FitOptions&>(),
             nb::arg("compiler"), nb::arg("dir"), nb::arg("every_epochs"), nb::arg("options"),
             nb::keep_alive<1, 2>());
    nb::class_<MetricsCsv, Callback>(m, "MetricsCsvCallback")
        .def(nb::init<std::filesystem::path, uint32_t>(), nb::arg("path"),
             nb::arg("resume_from") = 0);
    m.def("fit", &fitWith, nb::arg("compiler"), nb::arg("train"), nb::arg("validation").none(),
          nb::arg("options"), nb::arg("callbacks") = nb::list(), nb::arg("start") = ResumePoint{},
          "Trains epochs [start.epoch, options.epochs) (fit.hpp); callbacks are "
          "CheckpointCallback / MetricsCsvCallback objects or any object with some of the "
          "methods on_train_begin, on_epoch_begin, on_batches_done, on_epoch_end, on_train_end.");
    m.def("prepare_checkpoint_dir", &prepareCheckpointDir, nb::arg("dir"));
    m.def("load_checkpoint", &loadCheckpoint, nb::arg("compiler"), nb::arg("dir"));
    m.def("resume_from_checkpoint", &resumeFromCheckpoint, nb::arg("compiler"), nb::arg("dir"),
          nb::arg("options"));
    m.def(
        "read_checkpoint",
        [](const std::filesystem::path& file) {
            auto [info, state] = readCheckpoint(file);
            return nb::make_tuple(info, stateDict(state));
        },
        nb::arg("file"), "A checkpoint file as (CheckpointInfo, {array name: bytes}).");
    m.attr("CHECKPOINT_FILE_NAME") = Checkpoint::kFileName;
}

} // namespace

void bindTraining(nb::module_& m) {
    bindTrainingData(m);
    bindNetwork(m);
    bindOptions(m);
    bindReports(m);
    bindEventPropCompiler(m);
    bindInferenceCompiler(m);
    bindFit(m);
}

} // namespace spikeforge::python
